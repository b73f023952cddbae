package monocleconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/change-metrics/monocle-hook/internal/monoclesearch"
)

// checker applies what Monocle does with the decoded config: extraction
// (mkIndexName), loadConfig's environment lookup, and the API's start-up.
// Its problems go, as the decoder's do, to the sink at the path.
type checker struct {
	decoder
	env      func(string) bool
	warnings []Problem
	// warningCount counts every warning, listed or not.
	warningCount int
	tokens       tokenCheck
	oidc         bool
	// enforceAuth and oidcSecret: Config's EnforceAuth and OIDCSecret.
	enforceAuth bool
	oidcSecret  string
}

// problemAt is a problem with the value of key in the one checked.
func (c *checker) problemAt(key, format string, args ...any) {
	c.path.pushKey(key)
	c.problem(format, args...)
	c.path.pop()
}

// warn records a warning at the path. A config may have one per crawler,
// thousands: the first maxWarnings are kept, in the order found (the
// config's), and the others only counted, unformatted; check ends the list
// with their count.
func (c *checker) warn(format string, args ...any) {
	c.warningCount++
	if len(c.warnings) < maxWarnings {
		c.warnings = append(c.warnings, Problem{Path: c.path.String(), Message: fmt.Sprintf(format, args...)})
	}
}

// warnAt is a warning about the value of key in the one checked.
func (c *checker) warnAt(key, format string, args ...any) {
	c.path.pushKey(key)
	c.warn(format, args...)
	c.path.pop()
}

// envSet is the env callback on a name as getenv sees it: GHC passes the
// name as a C string, so it ends at a NUL.
func (c *checker) envSet(name string) bool {
	name, _, _ = strings.Cut(name, "\x00")
	return c.env(name)
}

// forEach runs f on each record of the list at key in r, with the path at
// it; a value that failed to decode is nil, and skipped.
func (c *checker) forEach(r *recordValue, key string, f func(*recordValue)) {
	c.path.pushKey(key)
	for i, v := range r.list(key) {
		if v, ok := v.(*recordValue); ok {
			c.path.pushIndex(i)
			f(v)
			c.path.pop()
		}
	}
	c.path.pop()
}

// check runs on a decoded config, or on what decoded of one that did not:
// a value that failed to decode is nil, and skipped.
func (c *checker) check(value any) *Config {
	out := &Config{}
	cfg, _ := value.(*recordValue)
	if auth, ok := cfg.get("auth").(*recordValue); ok {
		c.path.pushKey("auth")
		c.checkAuth(auth)
		c.path.pop()
	}
	c.forEach(cfg, "workspaces", func(w *recordValue) {
		out.Workspaces = append(out.Workspaces, c.checkWorkspace(w))
	})
	out.Warnings = c.warnings
	if more := c.warningCount - len(c.warnings); more > 0 {
		word := "warnings"
		if more == 1 {
			word = "warning"
		}
		out.Warnings = append(out.Warnings, Problem{Message: fmt.Sprintf("%d more %s, not listed", more, word)})
	}
	out.Tokens = c.tokens.result()
	out.OIDC, out.EnforceAuth, out.OIDCSecret = c.oidc, c.enforceAuth, c.oidcSecret
	return out
}

func (c *checker) checkWorkspace(w *recordValue) Workspace {
	name, named := w.get("name").(string)
	// src/Monocle/Config.hs: FromDhall IndexName runs mkIndexName.
	if p := indexNameProblem(name); named && p != "" {
		c.problemAt("name", "%s is not a valid index name: %s", quoteName(name), p)
	} else if p := elasticIndexProblem(name); named && p != "" {
		c.problemAt("name", "%s %s", quoteName(name), p)
	}
	if c.env != nil {
		c.checkAPIKey(w)
	}
	var crawlers []string
	var entities [][]string
	c.forEach(w, "crawlers", func(cr *recordValue) {
		c.checkCrawler(cr)
		crawlers = append(crawlers, cr.text("name"))
		provider, _ := cr.get("provider").(*unionValue)
		entities = append(entities, crawledEntities(provider))
	})
	c.checkAliases(w)
	apiKey, named := w.get("crawlers_api_key").(string)
	if !named {
		apiKey = "CRAWLERS_API_KEY"
	}
	return Workspace{Name: name, Crawlers: crawlers, Entities: entities, Idents: identsValue(w.get("idents")), APIKey: apiKey}
}

// checkAPIKey: every workspace's crawlers_api_key (default
// CRAWLERS_API_KEY) names a variable getEnv' must find, at the start of the
// API and of the crawler (src/Monocle/Config.hs, loadConfig).
func (c *checker) checkAPIKey(w *recordValue) {
	switch key, named := w.get("crawlers_api_key").(string); {
	case !named:
		if !c.envSet("CRAWLERS_API_KEY") {
			c.problem("Monocle reads the crawlers' API key from CRAWLERS_API_KEY (no crawlers_api_key is set), which the pods do not get")
		}
	case c.envSet(key):
	case key == "HOSTNAME":
		// src/Monocle/Api/Server.hs compares the key a crawler sends with
		// the API's own value of the variable.
		c.problemAt("crawlers_api_key", "names HOSTNAME, which Kubernetes sets to each pod's own name: the crawler would send its name as the key and the API refuse it; name a variable of the Secrets in the pods' environment")
	default:
		c.problemAt("crawlers_api_key", "names the environment variable %s, which the pods do not all get with one value; Monocle exits at start without it", envName(key))
	}
}

// checkAliases checks each search alias against its workspace: project:X
// and group:X must name one of its projects or ident groups.
func (c *checker) checkAliases(w *recordValue) {
	scope := monoclesearch.Workspace{}
	// A project name or a group that did not decode is read as "", which
	// no term names (the lexer makes no empty literal).
	c.forEach(w, "projects", func(p *recordValue) {
		scope.Projects = append(scope.Projects, p.text("name"))
	})
	c.forEach(w, "idents", func(ident *recordValue) {
		for _, g := range ident.list("groups") {
			g, _ := g.(string)
			scope.Groups = append(scope.Groups, g)
		}
	})
	c.forEach(w, "search_aliases", func(a *recordValue) {
		if expr, ok := a.get("alias").(string); ok {
			if err := scope.ValidateAlias(expr); err != nil {
				c.problemAt("alias", "%s", err.Error())
			}
		}
	})
}

// identsValue is the idents of a workspace in the shape of Workspace.Idents.
func identsValue(v any) any {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]any, len(list))
	for i, elem := range list {
		// nil when it did not decode, read as empty: the config is
		// refused, and the value not used.
		ident, _ := elem.(*recordValue)
		m := map[string]any{"ident": ident.text("ident"), "aliases": ident.list("aliases")}
		if groups, ok := ident.get("groups").([]any); ok {
			m["groups"] = groups
		}
		out[i] = m
	}
	return out
}

func (c *checker) checkCrawler(cr *recordValue) {
	provider, ok := cr.get("provider").(*unionValue)
	if !ok {
		return
	}
	// src/Monocle/Backend/Index.hs: at start the API initializes each
	// crawler's entities (I.ensureIndex, initCrawlerMetadata) and, for a new
	// one, reads update_since with parseDateValue: "Invalid date format" is
	// fatal. Crawlers without entities never read it (getCrawlerEntities).
	if since, ok := cr.get("update_since").(string); ok && hasEntities(provider) && !ParsesDate(since) {
		c.problemAt("update_since", `is not a date Monocle reads: it must be YYYY-MM-DD, "YYYY-MM-DD hh:mm:ss UTC" or YYYY-MM-DDThh:mm:ssZ; the API fails at start on it`)
	}

	if c.env != nil {
		c.checkToken(provider)
	}
	if note := crawlerNote(provider); note != "" {
		c.warnAt("provider", "the crawler %s %s", quoteName(cr.text("name")), note)
	}
}

// crawlerNote says what Monocle 1.11.2's crawler (src/Macroscope/Main.hs,
// getCrawler) does not do of a crawler it accepts: never crawls it, or
// gets nothing to crawl from it; "" when it crawls as configured. One
// crawler gets one note (Gerrit's two clauses are joined).
//
// A TaskDataProvider crawler gets none, though the crawler never runs it
// either (Main.hs:377, "This is a generic crawler, not managed by the
// macroscope"): that is what it is for. It only names a crawler in the
// workspace for a tool outside Monocle, which pushes task data to the API
// with the crawlers' key (src/Monocle/Api/Server.hs:301-324, addTDs); it
// is written on purpose, as the exact string TaskDataProvider, and a note
// on every config that has one would teach users to skip notes.
func crawlerNote(provider *unionValue) string {
	p := provider.payload
	switch provider.alt {
	case altGithubApplication:
		// src/Macroscope/Main.hs:376: pure Nothing -- "Not (yet) implemented".
		return "is a GitHub application (github_app_id), which Monocle 1.11.2's crawler does not implement (\"Not (yet) implemented\"): it never crawls it"
	case altGerrit:
		var clauses []string
		switch {
		case p.get("gerrit_repositories") == nil:
			// Main.hs:356-358: both streams (projects by regex, changes)
			// need gerrit_repositories; without it, none is made.
			clauses = append(clauses, "has no gerrit_repositories: Monocle's crawler starts nothing for it and never crawls it")
		case !hasEntities(provider):
			// Main.hs:358: the changes stream is made, but the config
			// gives it no project (src/Monocle/Config.hs:428, 442).
			clauses = append(clauses, "has an empty gerrit_repositories: "+fromConfigOnly("project"))
		}
		if _, login := p.get("gerrit_login").(string); !login {
			if _, password := p.get("gerrit_password").(string); password {
				// Main.hs:349-353: the password is read only with a login.
				clauses = append(clauses, "sets gerrit_password without gerrit_login: Monocle ignores the password and reads Gerrit anonymously")
			}
		}
		return strings.Join(clauses, "; and ")
	case altBugzilla:
		// Main.hs:360-363 makes the stream; Config.hs:451 gives it the
		// products as entities, none when bugzilla_products is absent.
		if !hasEntities(provider) {
			return "lists no bugzilla_products: " + fromConfigOnly("product")
		}
	case altGithubUser:
		// Main.hs:372-375 makes the stream; Config.hs:434 gives it the
		// users as entities.
		if !hasEntities(provider) {
			return "lists no github_users: " + fromConfigOnly("user")
		}
	}
	return ""
}

// fromConfigOnly is the note on a crawler whose stream runs, but to which
// the config gives no entity (what to crawl). The crawler asks the API for
// the crawler's oldest entity (src/Macroscope/Worker.hs:188-192), which it
// looks up in Elasticsearch by the crawler's name, whatever the config now
// says (src/Monocle/Backend/Index.hs:921-941, getLastUpdated); entities
// are added at start, never removed (Index.hs:943-956, 1000-1001).
func fromConfigOnly(entity string) string {
	return "Monocle crawls no " + entity + " for it, except any that an earlier config gave a crawler of this name (Elasticsearch keeps them)"
}

// The kinds of entity of Monocle 1.11.2's crawler streams, its API's
// EntityType (src/Macroscope/Worker.hs:43-48, streamEntity: Projects,
// Changes, TaskDatas and UserChanges; schemas/monocle/protob/crawler.proto).
const (
	EntityOrganization = "organization"
	EntityProject      = "project"
	EntityTaskData     = "task data"
	EntityUser         = "user"
)

// crawledEntities are the kinds of entity the streams Monocle 1.11.2's
// crawler runs for a provider crawl (src/Macroscope/Main.hs:335-377,
// getCrawler): GitLab's and GitHub's organization only without
// repositories, Gerrit's only with a regexp ("^...") among them; none for
// a GitHub application or task data crawler, which it does not run.
func crawledEntities(provider *unionValue) []string {
	if provider == nil {
		return nil
	}
	p := provider.payload
	var kinds []string
	switch provider.alt {
	case altGitlab:
		if p.get("gitlab_repositories") == nil {
			kinds = append(kinds, EntityOrganization)
		}
		kinds = append(kinds, EntityProject)
	case altGerrit:
		if slices.ContainsFunc(p.list("gerrit_repositories"), func(r any) bool { s, _ := r.(string); return strings.HasPrefix(s, "^") }) {
			kinds = append(kinds, EntityOrganization)
		}
		if p.get("gerrit_repositories") != nil {
			kinds = append(kinds, EntityProject)
		}
	case altBugzilla:
		kinds = append(kinds, EntityTaskData)
	case altGithub:
		if p.get("github_repositories") == nil {
			kinds = append(kinds, EntityOrganization)
		}
		kinds = append(kinds, EntityProject, EntityTaskData)
	case altGithubUser:
		kinds = append(kinds, EntityUser)
	}
	return kinds
}

// hasEntities is whether getCrawlerEntities (src/Monocle/Backend/Index.hs)
// gives the crawler any entity: projects, organizations, task data, users.
func hasEntities(provider *unionValue) bool {
	p := provider.payload
	switch provider.alt {
	case altGitlab, altGithub:
		return true // the organization is always an entity
	case altGerrit:
		return len(p.list("gerrit_repositories")) > 0
	case altBugzilla:
		return len(p.list("bugzilla_products")) > 0
	case altGithubUser:
		return len(p.list("github_users")) > 0
	}
	return false
}

func (c *checker) checkAuth(auth *recordValue) {
	// schemas/monocle/config/Auth/Type.dhall:3 has extra_auth_providers,
	// which nothing in Monocle 1.11.2's src/ reads: getAuthProvider
	// (src/Monocle/Config.hs:287-320) takes auth_provider only.
	if len(auth.list("extra_auth_providers")) > 0 {
		c.warnAt("extra_auth_providers", "is never read by Monocle 1.11.2: login uses auth_provider only")
	}
	provider, ok := auth.get("auth_provider").(*unionValue)
	if !ok {
		return
	}
	c.path.pushKey("auth_provider")
	defer c.path.pop()
	switch provider.alt {
	case altGithubAuth:
		// src/Monocle/Config.hs getAuthProvider, run by src/Monocle/Main.hs
		// at start: error "GithubAuthProvider not yet supported".
		c.problem("is read as a GitHub auth provider (github_oauth_name, github_oauth_client_id), with which Monocle 1.11.2's API does not start (\"GithubAuthProvider not yet supported\")")
	case altOIDC:
		c.oidc = true
		c.enforceAuth = auth.get("enforce_auth") == true
		// getAuthProvider: a misconfigured OIDC provider is logged
		// (AuthSystemFailed) and the API runs without login: with
		// enforce_auth too, it serves every workspace to anyone
		// (src/Monocle/Main.hs:166-171; src/Monocle/Api/Server.hs:103-112,
		// checkAuth: no provider, no check).
		p := provider.payload
		name := p.text("oidc_provider_name")
		if name == "" || p.text("oidc_issuer_url") == "" || p.text("oidc_client_id") == "" {
			if c.enforceAuth {
				c.problem("enforces login (enforce_auth: true), but an OIDC setting (oidc_issuer_url, oidc_client_id, oidc_provider_name) is empty: Monocle would start without login and serve every workspace to anyone (AuthSystemFailed)")
				return
			}
			c.warn("an OIDC setting is empty: the API starts without login (AuthSystemFailed)")
			return
		}
		variable, problem := oidcSecretVariable(name)
		if problem != "" {
			c.problemAt("oidc_provider_name", "%s is not a name the hook can follow: the API reads its client secret from MONOCLE_OIDC_<the name, upper case (Unicode's full mapping: ß as SS), spaces as _>_CLIENT_SECRET, which must be a Secret's key (letters, digits, '-', '_' and '.' of ASCII, at most %d bytes); %s", quoteName(name), maxSecretKey, problem)
			return
		}
		c.oidcSecret = variable
		if c.env != nil && !c.envSet(c.oidcSecret) && !c.enforceAuth {
			// Enforced, the hook holds the API instead (LoginSecretMissing).
			c.warn("the API reads the OIDC client secret from %s, which its pod does not get: it starts without login (AuthSystemFailed)", envName(c.oidcSecret))
		}
	}
}

// secretKeyRune: r may be in a Secret's key (validation.IsConfigMapKey), so
// in a variable its envFrom gives the pods.
func secretKeyRune(r rune) bool {
	return r == '-' || r == '_' || r == '.' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
}
