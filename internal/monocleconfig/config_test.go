package monocleconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// seedDefaultConfig is the config the hook writes when a Monocle has none.
const seedDefaultConfig = "workspaces:\n  - name: demo\n    crawlers: []\n"

// envOf is an env callback for the variables named.
func envOf(names ...string) func(string) bool {
	return func(name string) bool { return slices.Contains(names, name) }
}

// allTokens are the variables every provider reads by default.
var allTokens = envOf("CRAWLERS_API_KEY", "GITHUB_TOKEN", "GITLAB_TOKEN", "GERRIT_PASSWORD", "BUGZILLA_TOKEN")

// ws wraps crawler YAML (indented for a workspace's crawlers list) in a config.
func ws(crawlers string) string {
	return "workspaces:\n  - name: demo\n    crawlers:\n" + crawlers
}

// crawler is one crawler with the given provider (a flow map or scalar).
func crawler(provider string) string {
	return ws("      - name: c\n        update_since: \"2024-01-01\"\n        provider: " + provider + "\n")
}

// want is a problem expected at Path whose message contains Message.
type want = Problem

func TestParse(t *testing.T) {
	tests := map[string]struct {
		yaml string
		env  func(string) bool // nil: CRAWLERS_API_KEY and the default tokens
		// problems expected, in order; none means accepted
		problems []want
		ignored  []string
		warnings []want
	}{
		// Documents (HsYAML-aeson decode1Strict, dhall-yaml).
		"seed default config":  {yaml: seedDefaultConfig},
		"no workspaces at all": {yaml: "workspaces: []\n"},
		"YAML that does not parse": {
			yaml:     "workspaces:\n  - name: demo\n   crawlers: []\n",
			problems: []want{{"", "the YAML does not parse: line "}},
		},
		"empty file": {
			yaml:     "",
			problems: []want{{"", "no document"}},
		},
		"only comments": {
			yaml:     "# nothing yet\n",
			problems: []want{{"", "no document"}},
		},
		"two documents": {
			yaml:     seedDefaultConfig + "---\n" + seedDefaultConfig,
			problems: []want{{"", "more than one document"}},
		},
		"a trailing document marker starts a second, empty, document": {
			yaml:     seedDefaultConfig + "---\n",
			problems: []want{{"", "more than one document"}},
		},
		"a document end marker is fine":     {yaml: seedDefaultConfig + "...\n"},
		"a leading document marker is fine": {yaml: "---\n" + seedDefaultConfig},
		"top level is a list": {
			yaml:     "- name: demo\n",
			problems: []want{{"", "must be a map, not a list"}},
		},
		"top level is empty": {
			yaml:     "---\n",
			problems: []want{{"", "must be a map, not null"}},
		},
		"a number as a key": {
			yaml:     "workspaces: []\n1: one\n",
			problems: []want{{"", "a key that is a number, not a string"}},
		},
		"a number as a key deep in an ignored section": {
			yaml:     "workspaces: []\nnotes:\n  - {true: yes}\n",
			problems: []want{{"notes[0]", "a key that is a boolean, not a string"}},
		},
		"a quoted number as a key": {
			yaml:    "workspaces: []\n\"1\": one\n",
			ignored: []string{`["1"]`},
		},
		"an unknown tag on a scalar": {
			yaml:     "workspaces: []\nnote: !thing hello\n",
			problems: []want{{"note", "the tag !thing"}},
		},
		"a !!int tag on a non-integer": {
			yaml:     "workspaces: []\nnote: !!int twelve\n",
			problems: []want{{"note", "not a valid !!int"}},
		},
		"a tag on a map is ignored": {yaml: "workspaces: !!set\n  []\n"},
		"an alias cycle": {
			yaml:     "workspaces: []\nloop: &a [*a]\n",
			problems: []want{{"loop[0]", "an alias (*a) to a node that contains it"}},
		},
		"aliases are read as their targets": {
			yaml: "workspaces:\n  - name: demo\n    crawlers:\n      - &c {name: a, update_since: \"2024-01-01\", provider: {github_organization: x}}\n      - *c\n",
		},
		"a merge key is an ordinary, ignored, key (YAML 1.2)": {
			yaml:     "defaults: &d {update_since: \"2024-01-01\"}\n" + ws("      - <<: *d\n        name: a\n        provider: {github_organization: x}\n"),
			problems: []want{{"workspaces[0].crawlers[0].update_since", "required"}},
			ignored:  []string{"defaults"},
		},
		"a duplicated key keeps its last value": {
			yaml: "workspaces:\n  - name: Demo\n    name: demo\n    crawlers: []\n",
		},

		// schemas/monocle/config/Config/Type.dhall
		"workspaces missing": {
			yaml:     "crawlers: {loop_delay_sec: 60}\n",
			problems: []want{{"workspaces", "required"}},
		},
		"workspaces null": {
			yaml:     "workspaces:\n",
			problems: []want{{"workspaces", "must be a list, not null"}},
		},
		"unknown top-level keys are ignored": {
			yaml:    "version: 2\n" + seedDefaultConfig + "tenants: []\n",
			ignored: []string{"version", "tenants"},
		},

		// schemas/monocle/config/Workspace/Type.dhall
		"workspace without name": {
			yaml:     "workspaces:\n  - crawlers: []\n",
			problems: []want{{"workspaces[0].name", "required"}},
		},
		"workspace without crawlers (a List: required in YAML)": {
			yaml:     "workspaces:\n  - name: demo\n",
			problems: []want{{"workspaces[0].crawlers", "required"}},
		},
		"workspace with crawlers null": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers:\n",
			problems: []want{{"workspaces[0].crawlers", "must be a list, not null"}},
		},
		"workspace as a key-value list": {
			yaml: "workspaces:\n  - - {key: name, value: demo}\n    - {key: crawlers, value: []}\n",
		},
		"unknown workspace keys are ignored": {
			yaml:    "workspaces:\n  - name: demo\n    crawlers: []\n    description: the demo\n",
			ignored: []string{"workspaces[0].description"},
		},
		"every problem of every workspace is reported": {
			yaml: "workspaces:\n  - crawlers: []\n  - name: demo\n    crawlers:\n      - name: c\n        provider: {github_organization: x}\n",
			problems: []want{
				{"workspaces[0].name", "required"},
				{"workspaces[1].crawlers[0].update_since", "required"},
			},
		},
		"problems of the schema and of the names are reported together": {
			yaml: "workspaces:\n  - name: Demo\n    crawlers:\n      - name: c\n        provider: {github_organization: x}\n",
			problems: []want{
				{"workspaces[0].crawlers[0].update_since", "required"},
				{"workspaces[0].name", "is not a valid index name"},
			},
		},

		// mkIndexName, src/Monocle/Config.hs
		"workspace name Demo": {
			yaml:     "workspaces:\n  - name: Demo\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", `"Demo" is not a valid index name: its letters must all be lowercase`}},
		},
		"workspace name with a letter of a caseless script": {
			yaml:     "workspaces:\n  - name: 工作\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "its letters must all be lowercase"}},
		},
		"workspace name with lowercase non-ASCII letters": {
			yaml: "workspaces:\n  - name: équipe\n    crawlers: []\n",
		},
		"workspace name my team": {
			yaml:     "workspaces:\n  - name: my team\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", `"my team" is not a valid index name: must not contain`}},
		},
		"workspace name with #": {
			yaml:     "workspaces:\n  - name: \"a#b\"\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must not contain"}},
		},
		"workspace name _x": {
			yaml:     "workspaces:\n  - name: _x\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must not start with - _ + or ."}},
		},
		"workspace name -x": {
			yaml:     "workspaces:\n  - name: -x\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must not start with"}},
		},
		"workspace name ..": {
			yaml:     "workspaces:\n  - name: ..\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", `must not be "." or ".."`}},
		},
		"workspace name empty": {
			yaml:     "workspaces:\n  - name: \"\"\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must not be empty"}},
		},
		"workspace name of 256 bytes": {
			yaml:     "workspaces:\n  - name: " + strings.Repeat("a", 256) + "\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must be shorter than 256 bytes"}},
		},
		"workspace name with dots and digits": {
			yaml: "workspaces:\n  - name: team.v2-x_1\n    crawlers: []\n",
		},
		// Elasticsearch's index name rules, at the API's start (src/Monocle/Main.hs)
		"workspace name too long for its Elasticsearch index": {
			yaml:     "workspaces:\n  - name: " + strings.Repeat("a", 238) + "\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must be at most 237 bytes"}},
		},
		"workspace name of 237 bytes": {
			yaml: "workspaces:\n  - name: " + strings.Repeat("a", 237) + "\n    crawlers: []\n",
		},
		"workspace name with a symbol that has a lowercase form": {
			yaml:     "workspaces:\n  - name: Ⓐ\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "characters with a lowercase form"}},
		},

		// YAML 1.2 core schema (HsYAML), where yes/no/on/off are strings
		"YAML 1.2: on is a string": {
			yaml: "workspaces:\n  - name: on\n    crawlers: []\n",
		},
		"YAML 1.2: an unquoted date is a string": {
			yaml: ws("      - name: c\n        update_since: 2024-01-01\n        provider: {github_organization: x}\n"),
		},
		"YAML 1.2: 1_000 is a string": {
			yaml: "workspaces:\n  - name: 1_000\n    crawlers: []\n",
		},
		"a number where a string is expected": {
			yaml:     "workspaces:\n  - name: 2024\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must be a string, not a number (quote it)"}},
		},
		"a hexadecimal number where a string is expected": {
			yaml:     "workspaces:\n  - name: 0x1f\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must be a string, not a number"}},
		},
		"true where a string is expected": {
			yaml:     "workspaces:\n  - name: True\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must be a string, not a boolean"}},
		},
		"!!str makes a string": {
			yaml: "workspaces:\n  - name: !!str 2024\n    crawlers: []\n",
		},

		// schemas/monocle/config/Crawler/Type.dhall
		"crawler without name": {
			yaml:     ws("      - update_since: \"2024-01-01\"\n        provider: {github_organization: x}\n"),
			problems: []want{{"workspaces[0].crawlers[0].name", "required"}},
		},
		"crawler without update_since": {
			yaml:     ws("      - name: c\n        provider: {github_organization: x}\n"),
			problems: []want{{"workspaces[0].crawlers[0].update_since", "required"}},
		},
		"crawler without provider": {
			yaml:     ws("      - name: c\n        update_since: \"2024-01-01\"\n"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "required"}},
		},
		"crawler as a string": {
			yaml:     ws("      - github\n"),
			problems: []want{{"workspaces[0].crawlers[0]", "must be a map, not a string"}},
		},

		// schemas/monocle/config/Crawler/Provider.dhall and Provider/*/Type.dhall
		"provider GitHub": {yaml: crawler("{github_organization: x}")},
		"provider GitHub with repositories and url": {
			yaml: crawler("{github_organization: x, github_repositories: [a, b], github_url: https://github.example.org/api/graphql}"),
		},
		"provider GitHub without organization": {
			yaml:     crawler("{github_repositories: [a]}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "read as a GitHub provider: github_organization: required"}},
		},
		"provider GitHub with repositories as a string": {
			yaml:     crawler("{github_organization: x, github_repositories: a}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "read as a GitHub provider: github_repositories: must be a list, not a string"}},
		},
		"provider GitHub users": {yaml: crawler("{github_users: [alice]}")},
		"provider GitHub users without users": {
			yaml:     crawler("{github_users: alice}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "read as a GitHub users provider: github_users: must be a list"}},
		},
		"provider GitHub application": {
			yaml:     crawler("{github_app_id: \"42\", github_app_key_path: /etc/key.pem}"),
			warnings: []want{{"workspaces[0].crawlers[0].provider", "never crawls it"}},
		},
		"provider GitHub application without key path": {
			yaml:     crawler("{github_app_id: \"42\"}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "read as a GitHub application provider: github_app_key_path: required"}},
		},
		"provider GitHub application with a numeric id": {
			yaml:     crawler("{github_app_id: 42, github_app_key_path: /etc/key.pem}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "github_app_id: must be a string, not a number"}},
		},
		"provider GitLab": {yaml: crawler("{gitlab_organization: group/sub}")},
		"provider GitLab without organization": {
			yaml:     crawler("{gitlab_url: https://gitlab.example.org/api/graphql}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "read as a GitLab provider: gitlab_organization: required"}},
		},
		"provider Gerrit": {yaml: crawler("{gerrit_url: https://review.example.org, gerrit_repositories: [a]}")},
		"provider Gerrit without url": {
			yaml:     crawler("{gerrit_repositories: [a], gerrit_login: bot}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "read as a Gerrit provider: gerrit_url: required"}},
		},
		"provider Bugzilla": {yaml: crawler("{bugzilla_url: https://bugs.example.org, bugzilla_products: [p]}")},
		"provider Bugzilla without url": {
			yaml:     crawler("{bugzilla_products: [p]}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "read as a Bugzilla provider: bugzilla_url: required"}},
		},
		"provider TaskDataProvider": {yaml: crawler("TaskDataProvider")},
		"provider another string": {
			yaml:     crawler("github"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "must be a map with bugzilla_url, or gerrit_url"}},
		},
		"provider of an unknown shape": {
			yaml:     crawler("{jira_url: https://jira.example.org}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "fits none of Monocle's providers: it must be a map with"}},
			ignored:  nil,
		},
		"provider empty": {
			yaml:     crawler("{}"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "fits none of Monocle's providers"}},
		},
		"provider null": {
			yaml:     crawler("null"),
			problems: []want{{"workspaces[0].crawlers[0].provider", "not null"}},
		},
		"provider with keys of two providers is the first that fits": {
			yaml:    crawler("{gitlab_organization: g, github_organization: h}"),
			ignored: []string{"workspaces[0].crawlers[0].provider.gitlab_organization"},
		},
		"provider as a key-value list": {
			yaml: crawler("[{key: github_organization, value: x}]"),
		},

		// schemas/monocle/config/About, Link
		"about with links": {
			yaml: "about:\n  links:\n    - {name: Docs, url: https://docs.example.org, category: Community}\n    - {name: Chat, url: https://chat.example.org}\n" + seedDefaultConfig,
		},
		"about without links": {
			yaml:     "about: {}\n" + seedDefaultConfig,
			problems: []want{{"about.links", "required"}},
		},
		"about null": {yaml: "about:\n" + seedDefaultConfig},
		"link without url": {
			yaml:     "about:\n  links:\n    - {name: Docs}\n" + seedDefaultConfig,
			problems: []want{{"about.links[0].url", "required"}},
		},
		"link category a list": {
			yaml:     "about:\n  links:\n    - {name: Docs, url: u, category: [a]}\n" + seedDefaultConfig,
			problems: []want{{"about.links[0].category", "must be a string, not a list"}},
		},

		// schemas/monocle/config/Crawlers/Type.dhall
		"loop_delay_sec":                                           {yaml: "crawlers:\n  loop_delay_sec: 600\n" + seedDefaultConfig},
		"loop_delay_sec 0":                                         {yaml: "crawlers:\n  loop_delay_sec: 0\n" + seedDefaultConfig},
		"loop_delay_sec in hexadecimal":                            {yaml: "crawlers:\n  loop_delay_sec: 0x258\n" + seedDefaultConfig},
		"loop_delay_sec as a float with no fraction":               {yaml: "crawlers:\n  loop_delay_sec: 6e2\n" + seedDefaultConfig},
		"loop_delay_sec null":                                      {yaml: "crawlers:\n  loop_delay_sec:\n" + seedDefaultConfig},
		"crawlers section empty":                                   {yaml: "crawlers: {}\n" + seedDefaultConfig},
		"crawlers section an empty list (an empty key-value list)": {yaml: "crawlers: []\n" + seedDefaultConfig},
		"loop_delay_sec quoted": {
			yaml:     "crawlers:\n  loop_delay_sec: \"600\"\n" + seedDefaultConfig,
			problems: []want{{"crawlers.loop_delay_sec", "must be a whole number, not a string"}},
		},
		"loop_delay_sec negative": {
			yaml:     "crawlers:\n  loop_delay_sec: -1\n" + seedDefaultConfig,
			problems: []want{{"crawlers.loop_delay_sec", "must be a whole number, 0 or more"}},
		},
		"loop_delay_sec with a fraction": {
			yaml:     "crawlers:\n  loop_delay_sec: 1.5\n" + seedDefaultConfig,
			problems: []want{{"crawlers.loop_delay_sec", "must be a whole number, 0 or more"}},
		},
		"loop_delay_sec with a unit": {
			yaml:     "crawlers:\n  loop_delay_sec: 10m\n" + seedDefaultConfig,
			problems: []want{{"crawlers.loop_delay_sec", "must be a whole number, not a string"}},
		},

		// schemas/monocle/config/Project/Type.dhall
		"projects": {
			yaml: "workspaces:\n  - name: demo\n    crawlers: []\n    projects:\n      - name: p\n        repository_regex: \".*\"\n        branch_regex: main\n        file_regex: \"docs/.*\"\n      - name: q\n",
		},
		"project without name": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers: []\n    projects:\n      - repository_regex: \".*\"\n",
			problems: []want{{"workspaces[0].projects[0].name", "required"}},
		},
		"project regex a number": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers: []\n    projects:\n      - name: p\n        branch_regex: 1\n",
			problems: []want{{"workspaces[0].projects[0].branch_regex", "must be a string, not a number"}},
		},
		"projects a map": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers: []\n    projects:\n      p: {repository_regex: x}\n",
			problems: []want{{"workspaces[0].projects", "must be a list, not a map"}},
		},

		// schemas/monocle/config/Ident/Type.dhall
		"idents with aliases and groups": {
			yaml: "workspaces:\n  - name: demo\n    crawlers: []\n    idents:\n      - ident: John Doe\n        aliases: [github.com/jdoe]\n        groups: [devs]\n      - ident: Jane\n        aliases: []\n",
		},
		"idents a string": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers: []\n    idents: \"John\"\n",
			problems: []want{{"workspaces[0].idents", "must be a list, not a string"}},
		},
		"ident without aliases": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers: []\n    idents:\n      - ident: John\n",
			problems: []want{{"workspaces[0].idents[0].aliases", "required"}},
		},
		"ident without ident": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers: []\n    idents:\n      - aliases: [x]\n",
			problems: []want{{"workspaces[0].idents[0].ident", "required"}},
		},
		"ident groups a string": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers: []\n    idents:\n      - {ident: John, aliases: [x], groups: devs}\n",
			problems: []want{{"workspaces[0].idents[0].groups", "must be a list, not a string"}},
		},
		"ident alias a number": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers: []\n    idents:\n      - {ident: John, aliases: [github.com/j, 12345]}\n",
			problems: []want{{"workspaces[0].idents[0].aliases[1]", "must be a string, not a number"}},
		},

		// schemas/monocle/config/SearchAlias/Type.dhall
		"search alias": {
			yaml: "workspaces:\n  - name: demo\n    crawlers: []\n    search_aliases:\n      - {name: bots, alias: 'author:\"bot\"'}\n",
		},
		"search alias without alias": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers: []\n    search_aliases:\n      - {name: bots}\n",
			problems: []want{{"workspaces[0].search_aliases[0].alias", "required"}},
		},

		// schemas/monocle/config/Auth, AuthProvider
		"auth OIDC": {
			yaml: "auth:\n  enforce_auth: true\n  auth_provider: {oidc_provider_name: sso, oidc_issuer_url: https://sso.example.org, oidc_client_id: monocle}\n" + seedDefaultConfig,
			env:  envOf("CRAWLERS_API_KEY", "MONOCLE_OIDC_SSO_CLIENT_SECRET"),
		},
		"auth OIDC whose client secret the API lacks": {
			yaml:     "auth:\n  auth_provider: {oidc_provider_name: corp sso, oidc_issuer_url: https://sso.example.org, oidc_client_id: monocle}\n" + seedDefaultConfig,
			warnings: []want{{"auth.auth_provider", "MONOCLE_OIDC_CORP_SSO_CLIENT_SECRET"}},
		},
		"auth OIDC with an empty setting": {
			yaml:     "auth:\n  auth_provider: {oidc_provider_name: sso, oidc_issuer_url: \"\", oidc_client_id: monocle}\n" + seedDefaultConfig,
			warnings: []want{{"auth.auth_provider", "an OIDC setting is empty"}},
		},
		"auth GitHub provider": {
			yaml:     "auth:\n  auth_provider: {github_oauth_name: gh, github_oauth_client_id: id}\n" + seedDefaultConfig,
			problems: []want{{"auth.auth_provider", "GithubAuthProvider not yet supported"}},
		},
		"auth provider fitting both alternatives is read as GitHub": {
			yaml:     "auth:\n  auth_provider: {github_oauth_name: gh, github_oauth_client_id: id, oidc_provider_name: sso, oidc_issuer_url: u, oidc_client_id: c}\n" + seedDefaultConfig,
			problems: []want{{"auth.auth_provider", "is read as a GitHub auth provider"}},
		},
		"auth extra providers are not used": {
			yaml:     "auth:\n  auth_provider: {oidc_provider_name: sso, oidc_issuer_url: u, oidc_client_id: c}\n  extra_auth_providers:\n    - {github_oauth_name: gh, github_oauth_client_id: id}\n" + seedDefaultConfig,
			env:      envOf("CRAWLERS_API_KEY", "MONOCLE_OIDC_SSO_CLIENT_SECRET"),
			warnings: []want{{"auth.extra_auth_providers", "never read"}},
		},
		"auth without provider": {
			yaml:     "auth:\n  enforce_auth: true\n" + seedDefaultConfig,
			problems: []want{{"auth.auth_provider", "required"}},
		},
		"auth OIDC without issuer": {
			yaml:     "auth:\n  auth_provider: {oidc_provider_name: sso, oidc_client_id: c}\n" + seedDefaultConfig,
			problems: []want{{"auth.auth_provider", "read as a OIDC provider: oidc_issuer_url: required"}},
		},
		"YAML 1.2: enforce_auth on is not a boolean": {
			yaml:     "auth:\n  enforce_auth: on\n  auth_provider: {oidc_provider_name: sso, oidc_issuer_url: u, oidc_client_id: c}\n" + seedDefaultConfig,
			problems: []want{{"auth.enforce_auth", "must be true or false, not a string (Monocle reads YAML 1.2"}},
		},

		// src/Monocle/Config.hs, loadConfig: crawlers_api_key
		"crawlers_api_key names a variable the pods get": {
			yaml: "workspaces:\n  - name: demo\n    crawlers_api_key: TEAM_KEY\n    crawlers: []\n",
			env:  envOf("TEAM_KEY"),
		},
		"crawlers_api_key names a variable the pods lack": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers_api_key: TEAM_KEY\n    crawlers: []\n",
			problems: []want{{"workspaces[0].crawlers_api_key", "names the environment variable TEAM_KEY, which the pods do not all get"}},
		},
		"crawlers_api_key holding what looks like a secret is not shown": {
			yaml:     "workspaces:\n  - name: demo\n    crawlers_api_key: s3cr3t-value\n    crawlers: []\n",
			problems: []want{{"workspaces[0].crawlers_api_key", "names the environment variable (value not shown)"}},
		},
		"no crawlers_api_key and no CRAWLERS_API_KEY": {
			yaml:     seedDefaultConfig,
			env:      envOf("GITHUB_TOKEN"),
			problems: []want{{"workspaces[0]", "CRAWLERS_API_KEY"}},
		},

		// src/Monocle/Backend/Index.hs: update_since read at the API's start
		"update_since with a time in UTC": {
			yaml: ws("      - name: c\n        update_since: \"2024-01-01 10:20:30 UTC\"\n        provider: {github_organization: x}\n"),
		},
		"update_since with a time and Z": {
			yaml: ws("      - name: c\n        update_since: \"2024-01-01T10:20:30Z\"\n        provider: {github_organization: x}\n"),
		},
		"update_since a leap day": {
			yaml: ws("      - name: c\n        update_since: \"2024-02-29\"\n        provider: {github_organization: x}\n"),
		},
		"update_since a day that does not exist": {
			yaml:     ws("      - name: c\n        update_since: \"2023-02-29\"\n        provider: {github_organization: x}\n"),
			problems: []want{{"workspaces[0].crawlers[0].update_since", "is not a date Monocle reads"}},
		},
		"update_since with slashes": {
			yaml:     ws("      - name: c\n        update_since: 2024/01/01\n        provider: {github_organization: x}\n"),
			problems: []want{{"workspaces[0].crawlers[0].update_since", "is not a date Monocle reads"}},
		},
		"update_since without padding": {
			yaml:     ws("      - name: c\n        update_since: 2024-1-1\n        provider: {github_organization: x}\n"),
			problems: []want{{"workspaces[0].crawlers[0].update_since", "is not a date Monocle reads"}},
		},
		"update_since never read by a crawler without entities": {
			yaml: ws("      - name: c\n        update_since: whenever\n        provider: TaskDataProvider\n"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = allTokens
			}
			cfg, err := Parse([]byte(tc.yaml), env)
			assertProblems(t, err, tc.problems)
			if err != nil {
				if cfg != nil {
					t.Errorf("a refused config gave a Config: %+v", cfg)
				}
				return
			}
			if !slices.Equal(cfg.Ignored, tc.ignored) {
				t.Errorf("ignored %q, want %q", cfg.Ignored, tc.ignored)
			}
			assertSameProblems(t, "warnings", cfg.Warnings, tc.warnings)
		})
	}
}

func assertProblems(t *testing.T, err error, want []want) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *Error with %v", err, err, want)
	}
	assertSameProblems(t, "problems", e.Problems, want)
	if e.Total != len(e.Problems) {
		t.Errorf("Total %d, %d listed", e.Total, len(e.Problems))
	}
}

func assertSameProblems(t *testing.T, what string, got, want []Problem) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s %q, want %q", what, got, want)
	}
	for i := range want {
		if got[i].Path != want[i].Path || !strings.Contains(got[i].Message, want[i].Message) {
			t.Errorf("%s[%d] = %q, want path %q and a message containing %q", what, i, got[i], want[i].Path, want[i].Message)
		}
	}
}

func TestParseWithoutEnvSkipsEnvironmentChecks(t *testing.T) {
	cfg, err := Parse([]byte("workspaces:\n  - name: demo\n    crawlers_api_key: NOWHERE\n    crawlers: []\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings %v", cfg.Warnings)
	}
}

func TestSearchAliasesAreValidated(t *testing.T) {
	tests := map[string]struct {
		aliases string
		want    []want
	}{
		"valid":             {"[{name: bots, alias: 'author:bob'}]", nil},
		"no value":          {"[{name: ok, alias: 'author:bob'}, {name: broken, alias: 'author:'}]", []want{{"workspaces[0].search_aliases[1].alias", ""}}},
		"unknown field":     {"[{name: x, alias: 'colour:red'}]", []want{{"workspaces[0].search_aliases[0].alias", ""}}},
		"its own project":   {"[{name: x, alias: 'project:zuul'}]", nil},
		"another project":   {"[{name: x, alias: 'project:nova'}]", []want{{"workspaces[0].search_aliases[0].alias", ""}}},
		"its own group":     {"[{name: x, alias: 'group:devs'}]", nil},
		"a group not there": {"[{name: x, alias: 'group:ops'}]", []want{{"workspaces[0].search_aliases[0].alias", ""}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			config := "workspaces:\n  - name: demo\n    crawlers: []\n    projects: [{name: zuul}]\n    idents: [{ident: J, aliases: [x], groups: [devs]}]\n    search_aliases: " + tc.aliases + "\n"
			_, err := Parse([]byte(config), allTokens)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var perr *Error
			if !errors.As(err, &perr) || len(perr.Problems) != 1 || perr.Problems[0].Path != tc.want[0].Path {
				t.Fatalf("err %v, want a problem at %s", err, tc.want[0].Path)
			}
		})
	}
}

func TestWorkspacesAndIdents(t *testing.T) {
	config := `workspaces:
  - name: a
    crawlers:
      - {name: gh, update_since: '2024-01-01', provider: {github_organization: x}}
      - {name: zuul, update_since: '2024-01-01', provider: {gerrit_url: https://r}}
    idents:
      - ident: John
        aliases: [github.com/john]
        groups: [devs]
        note: ignored by Monocle, left out of the hash
      - - {key: ident, value: Jane}
        - {key: aliases, value: []}
  - name: b
    crawlers_api_key: B_KEY
    crawlers: []
  - name: c
    crawlers: []
    idents: []
`
	cfg, err := Parse([]byte(config), envOf("CRAWLERS_API_KEY", "B_KEY", "GITHUB_TOKEN", "GERRIT_PASSWORD"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(cfg.Workspaces)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"Name":"a","Crawlers":["gh","zuul"],"Entities":[["organization","project","task data"],null],"Idents":[{"aliases":["github.com/john"],"groups":["devs"],"ident":"John"},{"aliases":[],"ident":"Jane"}],"APIKey":"CRAWLERS_API_KEY"},` +
		`{"Name":"b","Crawlers":null,"Entities":null,"Idents":null,"APIKey":"B_KEY"},{"Name":"c","Crawlers":null,"Entities":null,"Idents":[],"APIKey":"CRAWLERS_API_KEY"}]`
	if string(got) != want {
		t.Errorf("workspaces\n%s\nwant\n%s", got, want)
	}
	if !slices.Equal(cfg.Ignored, []string{"workspaces[0].idents[0].note"}) {
		t.Errorf("ignored %q", cfg.Ignored)
	}
}

// The README's shapes, written for these tests, with every variable they
// name available: accepted, nothing ignored, no warning.
func TestFullConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	env := envOf("CRAWLERS_API_KEY", "SANDBOX_CRAWLERS_API_KEY", "GITHUB_TOKEN", "GITLAB_TOKEN", "GERRIT_PASSWORD", "BUGZILLA_TOKEN",
		"MONOCLE_OIDC_CORP_SSO_CLIENT_SECRET", "MONOCLE_OIDC_EXAMPLE_CLIENT_SECRET")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := Parse(data, env)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Ignored) != 0 || len(cfg.Warnings) != 0 || len(cfg.Workspaces) == 0 {
				t.Errorf("ignored %q, warnings %q, workspaces %d", cfg.Ignored, cfg.Warnings, len(cfg.Workspaces))
			}
		})
	}
}

// Every spec.config of the project's examples is accepted.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	configs := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var monocle struct {
			Spec struct {
				Config string `json:"config"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(data, &monocle); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if monocle.Spec.Config == "" {
			continue
		}
		configs++
		if _, err := Parse([]byte(monocle.Spec.Config), allTokens); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
	if configs == 0 {
		t.Error("no example has a spec.config")
	}
}

func TestErrorIsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("workspaces:\n")
	for range 50 {
		b.WriteString("  - name: " + strings.Repeat("X", 300) + "\n    crawlers: []\n")
	}
	_, err := Parse([]byte(b.String()), allTokens)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v", err)
	}
	if len(e.Problems) != maxProblems || e.Total != 50 {
		t.Errorf("%d problems listed, total %d", len(e.Problems), e.Total)
	}
	msg := err.Error()
	if len(msg) > maxMessage+3 || !strings.Contains(msg, "and 40 more") && !strings.HasSuffix(msg, "...") {
		t.Errorf("message of %d bytes: %s", len(msg), msg)
	}
	if strings.Contains(msg, strings.Repeat("X", 65)) {
		t.Error("the message quotes a whole 300-byte name")
	}
}

// What the hook needs to fail closed on login: whether the config enforces
// it (a boolean as Monocle's YAML reads it) and the variable of the OIDC
// client secret (src/Monocle/Config.hs:322-324).
func TestEnforceAuthAndOIDCSecret(t *testing.T) {
	auth := func(enforce, name string) string {
		return "auth:\n" + enforce + "  auth_provider:\n    oidc_provider_name: " + name + "\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces: []\n"
	}
	for name, tc := range map[string]struct {
		yaml     string
		enforce  bool
		variable string
	}{
		"enforced":                {auth("  enforce_auth: true\n", "sso"), true, "MONOCLE_OIDC_SSO_CLIENT_SECRET"},
		"enforced, True":          {auth("  enforce_auth: True\n", "sso"), true, "MONOCLE_OIDC_SSO_CLIENT_SECRET"},
		"not enforced":            {auth("  enforce_auth: false\n", "sso"), false, "MONOCLE_OIDC_SSO_CLIENT_SECRET"},
		"unset":                   {auth("", "sso"), false, "MONOCLE_OIDC_SSO_CLIENT_SECRET"},
		"a name with a space":     {auth("  enforce_auth: true\n", "'my sso'"), true, "MONOCLE_OIDC_MY_SSO_CLIENT_SECRET"},
		"a name with a dot and -": {auth("  enforce_auth: true\n", "sso.corp-1"), true, "MONOCLE_OIDC_SSO.CORP-1_CLIENT_SECRET"},
		"no auth":                 {"workspaces: []\n", false, ""},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml), func(string) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			if cfg.EnforceAuth != tc.enforce || cfg.OIDCSecret != tc.variable {
				t.Errorf("EnforceAuth %v, OIDCSecret %q; want %v, %q", cfg.EnforceAuth, cfg.OIDCSecret, tc.enforce, tc.variable)
			}
		})
	}
}

// Each crawler's kinds of entity are those the streams Monocle 1.11.2's
// crawler runs for its provider crawl (src/Macroscope/Main.hs:335-377,
// getCrawler; src/Macroscope/Worker.hs:43-48, streamEntity): a GitHub
// users crawler only users, a Bugzilla one only task data
// (src/Monocle/Config.hs:420-429, getCrawlerProject, gives them no project).
func TestCrawlerEntities(t *testing.T) {
	cfg, err := Parse([]byte(`workspaces:
  - name: ws
    crawlers:
      - {name: org, update_since: "2024-01-01", provider: {github_organization: o}}
      - {name: repos, update_since: "2024-01-01", provider: {github_organization: o, github_repositories: [r]}}
      - {name: users, update_since: "2024-01-01", provider: {github_users: [alice]}}
      - {name: bz, update_since: "2024-01-01", provider: {bugzilla_url: "https://bz.example.com", bugzilla_products: [p]}}
      - {name: gl, update_since: "2024-01-01", provider: {gitlab_organization: g}}
      - {name: gl-repos, update_since: "2024-01-01", provider: {gitlab_organization: g, gitlab_repositories: [r]}}
      - {name: gerrit, update_since: "2024-01-01", provider: {gerrit_url: "https://review.example.com", gerrit_repositories: ["^o/.*", p]}}
      - {name: gerrit-plain, update_since: "2024-01-01", provider: {gerrit_url: "https://review.example.com", gerrit_repositories: [p]}}
      - {name: gerrit-none, update_since: "2024-01-01", provider: {gerrit_url: "https://review.example.com"}}
      - {name: td, update_since: "2024-01-01", provider: TaskDataProvider}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"org":          {EntityOrganization, EntityProject, EntityTaskData},
		"repos":        {EntityProject, EntityTaskData},
		"users":        {EntityUser},
		"bz":           {EntityTaskData},
		"gl":           {EntityOrganization, EntityProject},
		"gl-repos":     {EntityProject},
		"gerrit":       {EntityOrganization, EntityProject},
		"gerrit-plain": {EntityProject},
		"gerrit-none":  nil,
		"td":           nil,
	}
	ws := cfg.Workspaces[0]
	if len(ws.Entities) != len(ws.Crawlers) || len(ws.Crawlers) != len(want) {
		t.Fatalf("%d crawlers, %d entities", len(ws.Crawlers), len(ws.Entities))
	}
	for i, name := range ws.Crawlers {
		if !slices.Equal(ws.Entities[i], want[name]) {
			t.Errorf("%s: %q, want %q", name, ws.Entities[i], want[name])
		}
	}
}
