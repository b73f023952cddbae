package monocleconfig

import "slices"

// The type Monocle 1.11.2 reads its config as: schemas/monocle/config/
// Config/Type.dhall and the files it imports, one Go value per Dhall file.
// dhall-json normalizes the type before reading (JSONToDhall.hs, dhallFromJSON:
// D.normalize), and Dhall's normalization sorts the alternatives of a union
// (dhall src/Dhall/Normalize.hs, "Union kts -> Union . Dhall.Map.sort"), so
// alternatives are listed here alphabetically: "the first constructor that
// fits" is the first in that order, not in the file's.

// dhallType is one of text, natural, boolean, listOf, optional, *record, *union.
type dhallType interface{ isDhallType() }

type textType struct{}
type naturalType struct{}
type boolType struct{}
type listType struct{ elem dhallType }
type optionalType struct{ elem dhallType }

// record is a Dhall record type; fields in the schema file's order.
type record struct {
	fields []field
}

type field struct {
	name string
	typ  dhallType
}

// union is a Dhall union type; a nil typ is an alternative without payload,
// which dhall-json reads from a string equal to its name.
type union struct {
	name string // what the message calls one of its values
	alts []alternative
}

type alternative struct {
	name  string
	label string // for messages
	typ   *record
}

func (textType) isDhallType()     {}
func (naturalType) isDhallType()  {}
func (boolType) isDhallType()     {}
func (listType) isDhallType()     {}
func (optionalType) isDhallType() {}
func (*record) isDhallType()      {}
func (*union) isDhallType()       {}

var (
	text    = textType{}
	natural = naturalType{}
	boolean = boolType{}
)

func listOf(t dhallType) dhallType   { return listType{t} }
func optional(t dhallType) dhallType { return optionalType{t} }

// index is the position of the field called name, -1 when there is none.
func (r *record) index(name string) int {
	return slices.IndexFunc(r.fields, func(f field) bool { return f.name == name })
}

// Provider records: schemas/monocle/config/Provider/*/Type.dhall.
var (
	bugzillaType = &record{fields: []field{
		{"bugzilla_url", text},
		{"bugzilla_token", optional(text)},
		{"bugzilla_products", optional(listOf(text))},
	}}
	gerritType = &record{fields: []field{
		{"gerrit_url", text},
		{"gerrit_login", optional(text)},
		{"gerrit_password", optional(text)},
		{"gerrit_prefix", optional(text)},
		{"gerrit_repositories", optional(listOf(text))},
	}}
	githubType = &record{fields: []field{
		{"github_url", optional(text)},
		{"github_token", optional(text)},
		{"github_organization", text},
		{"github_repositories", optional(listOf(text))},
	}}
	githubApplicationType = &record{fields: []field{
		{"github_app_url", optional(text)},
		{"github_app_id", text},
		{"github_app_key_path", text},
		{"github_app_organization", optional(text)},
		{"github_app_repositories", optional(listOf(text))},
	}}
	githubUserType = &record{fields: []field{
		{"github_url", optional(text)},
		{"github_token", optional(text)},
		{"github_users", listOf(text)},
	}}
	gitlabType = &record{fields: []field{
		{"gitlab_url", optional(text)},
		{"gitlab_token", optional(text)},
		{"gitlab_organization", text},
		{"gitlab_repositories", optional(listOf(text))},
	}}
)

// Alternative names of schemas/monocle/config/Crawler/Provider.dhall.
const (
	altBugzilla          = "BugzillaProvider"
	altGerrit            = "GerritProvider"
	altGithubApplication = "GithubApplicationProvider"
	altGithub            = "GithubProvider"
	altGithubUser        = "GithubUserProvider"
	altGitlab            = "GitlabProvider"
	altTaskData          = "TaskDataProvider"
)

// providerType is schemas/monocle/config/Crawler/Provider.dhall, sorted.
var providerType = &union{name: "provider", alts: []alternative{
	{altBugzilla, "Bugzilla provider", bugzillaType},
	{altGerrit, "Gerrit provider", gerritType},
	{altGithubApplication, "GitHub application provider", githubApplicationType},
	{altGithub, "GitHub provider", githubType},
	{altGithubUser, "GitHub users provider", githubUserType},
	{altGitlab, "GitLab provider", gitlabType},
	{altTaskData, "TaskDataProvider", nil},
}}

// schemas/monocle/config/Crawler/Type.dhall
var crawlerType = &record{fields: []field{
	{"name", text},
	{"update_since", text},
	{"provider", providerType},
}}

// schemas/monocle/config/Project/Type.dhall
var projectType = &record{fields: []field{
	{"name", text},
	{"repository_regex", optional(text)},
	{"branch_regex", optional(text)},
	{"file_regex", optional(text)},
}}

// schemas/monocle/config/Ident/Type.dhall
var identType = &record{fields: []field{
	{"ident", text},
	{"aliases", listOf(text)},
	{"groups", optional(listOf(text))},
}}

// schemas/monocle/config/SearchAlias/Type.dhall
var searchAliasType = &record{fields: []field{
	{"name", text},
	{"alias", text},
}}

// schemas/monocle/config/Workspace/Type.dhall (the Index record of
// src/Monocle/Config.hs). Its default.dhall makes crawlers optional in Dhall,
// not in YAML: dhall-json reads the type, and a List is required
// (omissibleLists is off in defaultConversion).
var workspaceType = &record{fields: []field{
	{"name", text},
	{"crawlers_api_key", optional(text)},
	{"crawlers", listOf(crawlerType)},
	{"projects", optional(listOf(projectType))},
	{"idents", optional(listOf(identType))},
	{"search_aliases", optional(listOf(searchAliasType))},
}}

// schemas/monocle/config/Link/Type.dhall and About/Type.dhall
var (
	linkType = &record{fields: []field{
		{"name", text},
		{"url", text},
		{"category", optional(text)},
	}}
	aboutType = &record{fields: []field{
		{"links", listOf(linkType)},
	}}
)

// schemas/monocle/config/Crawlers/Type.dhall
var crawlersType = &record{fields: []field{
	{"loop_delay_sec", optional(natural)},
}}

// schemas/monocle/config/AuthProvider/*/Type.dhall
var (
	githubAuthType = &record{fields: []field{
		{"github_oauth_name", text},
		{"github_oauth_client_id", text},
	}}
	oidcType = &record{fields: []field{
		{"oidc_provider_name", text},
		{"oidc_issuer_url", text},
		{"oidc_client_id", text},
		{"oidc_user_claim", optional(text)},
	}}
)

const (
	altGithubAuth = "GithubAuthProvider"
	altOIDC       = "OIDCProvider"
)

// schemas/monocle/config/Auth/Provider.dhall, sorted: GithubAuthProvider
// comes first, so a map that fits both is read as GitHub auth.
var authProviderType = &union{name: "auth provider", alts: []alternative{
	{altGithubAuth, "GitHub auth provider", githubAuthType},
	{altOIDC, "OIDC provider", oidcType},
}}

// schemas/monocle/config/Auth/Type.dhall
var authType = &record{fields: []field{
	{"enforce_auth", optional(boolean)},
	{"auth_provider", authProviderType},
	{"extra_auth_providers", optional(listOf(authProviderType))},
}}

// configType is schemas/monocle/config/Config/Type.dhall, the type
// loadConfigWithoutEnv gives dhallFromYaml (src/Monocle/Config.hs).
var configType = &record{fields: []field{
	{"about", optional(aboutType)},
	{"auth", optional(authType)},
	{"crawlers", optional(crawlersType)},
	{"workspaces", listOf(workspaceType)},
}}
