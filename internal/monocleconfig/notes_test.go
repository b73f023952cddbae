package monocleconfig

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// What Monocle 1.11.2 accepts but does not do is a warning: the config is
// applied. Each message is written in full, so that a changed word fails.
func TestNotes(t *testing.T) {
	const at = "workspaces[0].crawlers[0].provider"
	named := func(name, provider string) string {
		return ws("      - name: " + name + "\n        update_since: \"2024-01-01\"\n        provider: " + provider + "\n")
	}
	oidc := "auth:\n  auth_provider: {oidc_provider_name: sso, oidc_issuer_url: u, oidc_client_id: c}\n"
	tests := map[string]struct {
		yaml string
		want []Problem
	}{
		// src/Macroscope/Main.hs:376: GithubApplicationProvider _ -> pure Nothing.
		"a GitHub application": {
			crawler("{github_app_id: \"42\", github_app_key_path: /etc/key.pem}"),
			[]Problem{{at, `the crawler "c" is a GitHub application (github_app_id), which Monocle 1.11.2's crawler does not implement ("Not (yet) implemented"): it never crawls it`}},
		},
		// Main.hs:356-358: no gerrit_repositories, no stream.
		"Gerrit without gerrit_repositories": {
			crawler("{gerrit_url: https://review.example.org}"),
			[]Problem{{at, `the crawler "c" has no gerrit_repositories: Monocle's crawler starts nothing for it and never crawls it`}},
		},
		"Gerrit with gerrit_repositories null, which is None": {
			crawler("{gerrit_url: https://review.example.org, gerrit_repositories: null}"),
			[]Problem{{at, `the crawler "c" has no gerrit_repositories: Monocle's crawler starts nothing for it and never crawls it`}},
		},
		// Main.hs:358 makes the changes stream; src/Monocle/Config.hs:428,
		// 442 give it no entity.
		"Gerrit with an empty gerrit_repositories": {
			crawler("{gerrit_url: https://review.example.org, gerrit_repositories: []}"),
			[]Problem{{at, `the crawler "c" has an empty gerrit_repositories: Monocle crawls no project for it, except any that an earlier config gave a crawler of this name (Elasticsearch keeps them)`}},
		},
		"Gerrit with projects": {crawler("{gerrit_url: https://r, gerrit_repositories: [nova]}"), nil},
		"Gerrit by regex only": {crawler("{gerrit_url: https://r, gerrit_repositories: ['^infra/.*']}"), nil},
		// Main.hs:349-353: the password is read only with a login.
		"Gerrit password without login": {
			crawler("{gerrit_url: https://r, gerrit_repositories: [nova], gerrit_password: GERRIT_PASSWORD}"),
			[]Problem{{at, `the crawler "c" sets gerrit_password without gerrit_login: Monocle ignores the password and reads Gerrit anonymously`}},
		},
		"Gerrit password null without login": {crawler("{gerrit_url: https://r, gerrit_repositories: [nova], gerrit_password: null}"), nil},
		"Gerrit password with login":         {crawler("{gerrit_url: https://r, gerrit_repositories: [nova], gerrit_login: bot, gerrit_password: GERRIT_PASSWORD}"), nil},
		"Gerrit login without password":      {crawler("{gerrit_url: https://r, gerrit_repositories: [nova], gerrit_login: bot}"), nil},
		"Gerrit, both, in one warning": {
			crawler("{gerrit_url: https://r, gerrit_password: P}"),
			[]Problem{{at, `the crawler "c" has no gerrit_repositories: Monocle's crawler starts nothing for it and never crawls it; and sets gerrit_password without gerrit_login: Monocle ignores the password and reads Gerrit anonymously`}},
		},
		// Main.hs:360-363 and Config.hs:451.
		"Bugzilla without bugzilla_products": {
			crawler("{bugzilla_url: https://bugs.example.org}"),
			[]Problem{{at, `the crawler "c" lists no bugzilla_products: Monocle crawls no product for it, except any that an earlier config gave a crawler of this name (Elasticsearch keeps them)`}},
		},
		"Bugzilla with an empty bugzilla_products": {
			crawler("{bugzilla_url: https://bugs.example.org, bugzilla_products: []}"),
			[]Problem{{at, `the crawler "c" lists no bugzilla_products: Monocle crawls no product for it, except any that an earlier config gave a crawler of this name (Elasticsearch keeps them)`}},
		},
		"Bugzilla with products": {crawler("{bugzilla_url: https://bugs.example.org, bugzilla_products: [p]}"), nil},
		// Main.hs:372-375 and Config.hs:434.
		"GitHub users, none": {
			crawler("{github_users: []}"),
			[]Problem{{at, `the crawler "c" lists no github_users: Monocle crawls no user for it, except any that an earlier config gave a crawler of this name (Elasticsearch keeps them)`}},
		},
		"GitHub users": {crawler("{github_users: [alice]}"), nil},
		"GitHub":       {crawler("{github_organization: o}"), nil},
		"GitLab":       {crawler("{gitlab_organization: o}"), nil},
		// Main.hs:377: by design, a crawler a tool outside Monocle feeds
		// (see crawlerNote): no warning.
		"TaskDataProvider": {crawler("TaskDataProvider"), nil},
		// schemas/monocle/config/Auth/Type.dhall:3, read nowhere in src/.
		"extra_auth_providers": {
			oidc + "  extra_auth_providers: [{oidc_provider_name: b, oidc_issuer_url: u, oidc_client_id: c}]\n" + seedDefaultConfig,
			[]Problem{{"auth.extra_auth_providers", "is never read by Monocle 1.11.2: login uses auth_provider only"}},
		},
		"extra_auth_providers empty": {oidc + "  extra_auth_providers: []\n" + seedDefaultConfig, nil},
		"extra_auth_providers null":  {oidc + "  extra_auth_providers: null\n" + seedDefaultConfig, nil},
		// The crawler's name is the user's text: quoted, escaped, cut.
		"a name with a quote and an escape": {
			named(`"say \"hi\"\e[31m"`, "{github_users: []}"),
			[]Problem{{at, `the crawler "say \"hi\"\x1b[31m" lists no github_users: `}},
		},
		"a long name": {
			named(strings.Repeat("n", 100), "{github_users: []}"),
			[]Problem{{at, `the crawler "` + strings.Repeat("n", 64) + `..." lists no github_users: `}},
		},
	}
	env := envOf("CRAWLERS_API_KEY", "GITHUB_TOKEN", "GITLAB_TOKEN", "GERRIT_PASSWORD", "BUGZILLA_TOKEN", "MONOCLE_OIDC_SSO_CLIENT_SECRET")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml), env)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) != len(tc.want) {
				t.Fatalf("warnings %q, want %q", cfg.Warnings, tc.want)
			}
			for i, w := range tc.want {
				got := cfg.Warnings[i]
				// A message ending in ": " is a prefix; any other is whole.
				same := got.Message == w.Message || strings.HasSuffix(w.Message, ": ") && strings.HasPrefix(got.Message, w.Message)
				if got.Path != w.Path || !same {
					t.Errorf("warning %q\nwant     %q", got, w)
				}
			}
		})
	}
}

// The warnings come once per crawler, in the config's order (the auth
// section first, as check reads it), the same on every parse, and without
// the environment.
func TestNotesOrder(t *testing.T) {
	config := `auth:
  auth_provider: {oidc_provider_name: sso, oidc_issuer_url: u, oidc_client_id: c}
  extra_auth_providers: [{oidc_provider_name: b, oidc_issuer_url: u, oidc_client_id: c}]
workspaces:
  - name: a
    crawlers:
      - {name: app, update_since: '2024-01-01', provider: {github_app_id: "1", github_app_key_path: k}}
      - {name: fine, update_since: '2024-01-01', provider: {github_organization: o}}
      - {name: gerrit, update_since: '2024-01-01', provider: {gerrit_url: https://r, gerrit_password: P}}
  - name: b
    crawlers:
      - {name: bz, update_since: '2024-01-01', provider: {bugzilla_url: https://b}}
      - {name: td, update_since: '2024-01-01', provider: TaskDataProvider}
      - {name: users, update_since: '2024-01-01', provider: {github_users: []}}
`
	want := []string{
		"auth.extra_auth_providers",
		"workspaces[0].crawlers[0].provider the crawler \"app\"",
		"workspaces[0].crawlers[2].provider the crawler \"gerrit\"",
		"workspaces[1].crawlers[0].provider the crawler \"bz\"",
		"workspaces[1].crawlers[2].provider the crawler \"users\"",
	}
	var first []Problem
	for _, env := range []func(string) bool{envOf("CRAWLERS_API_KEY", "MONOCLE_OIDC_SSO_CLIENT_SECRET", "GITHUB_TOKEN", "GERRIT_PASSWORD", "BUGZILLA_TOKEN"), nil} {
		for range 3 {
			cfg, err := Parse([]byte(config), env)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) != len(want) {
				t.Fatalf("warnings %q, want %d", cfg.Warnings, len(want))
			}
			for i, w := range want {
				if got := cfg.Warnings[i].Path + " " + cfg.Warnings[i].Message; !strings.HasPrefix(got, w) {
					t.Errorf("warning %d %q, want it to start with %q", i, got, w)
				}
			}
			if first == nil {
				first = cfg.Warnings
			} else if !reflect.DeepEqual(cfg.Warnings, first) {
				t.Errorf("warnings %q, then %q", first, cfg.Warnings)
			}
		}
	}
}

// A config may have thousands of crawlers: the first 20 warnings are
// listed, and one more counts the rest.
func TestNotesAreCapped(t *testing.T) {
	for _, tc := range []struct {
		crawlers int
		last     string // "" when none is left out
	}{
		{19, ""},
		{20, ""},
		{21, "1 more warning, not listed"},
		{2000, "1980 more warnings, not listed"},
	} {
		t.Run(fmt.Sprint(tc.crawlers), func(t *testing.T) {
			var b strings.Builder
			b.WriteString("workspaces:\n  - name: w\n    crawlers:\n")
			for i := range tc.crawlers {
				fmt.Fprintf(&b, "      - {name: c%d, update_since: '2024-01-01', provider: {github_users: []}}\n", i)
			}
			cfg, err := Parse([]byte(b.String()), allTokens)
			if err != nil {
				t.Fatal(err)
			}
			listed := min(tc.crawlers, maxWarnings)
			want := listed
			if tc.last != "" {
				want++
			}
			if len(cfg.Warnings) != want {
				t.Fatalf("%d warnings, want %d", len(cfg.Warnings), want)
			}
			for i := range listed {
				if w := cfg.Warnings[i]; w.Path != fmt.Sprintf("workspaces[0].crawlers[%d].provider", i) || !strings.HasPrefix(w.Message, fmt.Sprintf("the crawler \"c%d\" ", i)) {
					t.Errorf("warning %d: %q", i, w)
				}
			}
			if tc.last != "" {
				if w := cfg.Warnings[listed]; w.String() != "config.yaml: "+tc.last {
					t.Errorf("last warning %q, want %q", w, tc.last)
				}
			}
		})
	}
}
