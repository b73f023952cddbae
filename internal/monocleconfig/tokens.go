package monocleconfig

import "fmt"

// Tokens are the provider tokens crawlers read from environment variables
// the crawler's pods lack. Monocle's loader never reads them: the crawler
// process does, once running (src/Macroscope/Main.hs), where a missing one
// either stops the whole process or skips one crawler.
type Tokens struct {
	// Missing lists the first 20 that exit and the first 20 that skip, in
	// the config's order.
	Missing []MissingToken
	// Count counts them all, listed or not.
	Count int
	// Exits: the crawler process exits on one of them (all listed or not),
	// and every crawler of the Monocle stops.
	Exits bool
}

// MissingToken is a crawler's token that its pods lack.
type MissingToken struct {
	// Crawler is the crawler's path, as workspaces[0].crawlers[1].
	Crawler string
	// Variable is the environment variable the crawler reads it from.
	Variable string
	// Exits: the crawler process exits on it; else the crawler is skipped.
	Exits bool
	// Why says what Monocle does without it, from its source.
	Why string
}

func (t MissingToken) String() string {
	return fmt.Sprintf("%s reads %s, which its pods do not get: %s", t.Crawler, envName(t.Variable), t.Why)
}

// Monocle's crawler process (src/Macroscope/Main.hs, runMacroscope') makes
// a client per crawler in getCrawler, outside the catch (tryAny) that
// guards each crawl, and reads the token there with Config.getSecret, whose
// missing variable is an error thunk: an exception when forced.
const (
	// GitHub and GitLab: getClientGraphQL keys the crawler's group by
	// `hash token`, which runCrawlers logs at once.
	whyGraphQL = "Monocle's crawler process reads a GitHub or GitLab token as it starts its crawlers, outside any catch, and exits: every crawler of this Monocle stops"
	// Bugzilla and Gerrit: the token is first forced in the crawl, which
	// catches it, unless mapMutate compares two clients' keys: (url, token)
	// for Bugzilla, (url, Just (login, password)) for Gerrit.
	whySkipped = "Monocle skips this crawler at each crawl (\"Skipping due to an unexpected exception\"); the others run"
	whyShared  = "it shares its URL%s with %s, and Monocle's crawler process compares their tokens as it starts its crawlers, outside any catch, and exits: every crawler of this Monocle stops"
)

// tokenCheck gathers every missing token (at most one per crawler, so
// bounded by the config), and the Bugzilla and Gerrit crawlers by client
// key, whose tokens the crawler process compares.
type tokenCheck struct {
	all    []MissingToken
	keys   []string // all[i]'s client key, "" when it exits whatever
	shared map[string]*sharedClient
}

// sharedClient is the crawlers of one client key (a provider, a URL, and a
// Gerrit login): from two on, their tokens are compared.
type sharedClient struct {
	paths []string // the crawlers' paths
	login string   // " and Gerrit login", for the message
}

// add records a crawler's token variable, missing or not. key is its
// client key when the crawler process compares tokens by it ("" when the
// token is read at start whatever the key).
func (t *tokenCheck) add(path, variable string, missing bool, key, login string) {
	if key != "" {
		if t.shared == nil {
			t.shared = map[string]*sharedClient{}
		}
		if t.shared[key] == nil {
			t.shared[key] = &sharedClient{login: login}
		}
		t.shared[key].paths = append(t.shared[key].paths, path)
	}
	if !missing {
		return
	}
	m := MissingToken{Crawler: path, Variable: variable, Exits: true, Why: whyGraphQL}
	if key != "" {
		m.Exits, m.Why = false, whySkipped
	}
	t.all = append(t.all, m)
	t.keys = append(t.keys, key)
}

// result marks the tokens of crawlers that share a client key as fatal,
// and lists the first 20 of those that exit and of those that skip, in
// the config's order: whatever the count, the ones that exit are named.
func (t *tokenCheck) result() Tokens {
	out := Tokens{Count: len(t.all)}
	listed := map[bool]int{} // by Exits
	for i := range t.all {
		m := &t.all[i]
		if c := t.shared[t.keys[i]]; c != nil && len(c.paths) >= 2 {
			other := c.paths[0]
			if other == m.Crawler {
				other = c.paths[1]
			}
			m.Exits, m.Why = true, fmt.Sprintf(whyShared, c.login, other)
		}
		out.Exits = out.Exits || m.Exits
		if listed[m.Exits] < maxIgnored {
			listed[m.Exits]++
			out.Missing = append(out.Missing, *m)
		}
	}
	return out
}

// checkToken records the token a crawler's provider reads, if any, named
// by its field or by the provider's default variable.
func (c *checker) checkToken(provider *unionValue) {
	p := provider.payload
	read := func(field, fallback, key, login string) {
		name, named := p.get(field).(string)
		if !named {
			name = fallback
		}
		c.tokens.add(c.path.String(), name, !c.envSet(name), key, login)
	}
	switch provider.alt {
	case altGitlab:
		read("gitlab_token", "GITLAB_TOKEN", "", "")
	case altGithub, altGithubUser:
		read("github_token", "GITHUB_TOKEN", "", "")
	case altBugzilla:
		read("bugzilla_token", "BUGZILLA_TOKEN", "bugzilla\x00"+p.text("bugzilla_url"), "")
	case altGerrit:
		// Without a login, no password is read.
		if login, ok := p.get("gerrit_login").(string); ok {
			read("gerrit_password", "GERRIT_PASSWORD", "gerrit\x00"+p.text("gerrit_url")+"\x00"+login, " and Gerrit login")
		}
	}
}
