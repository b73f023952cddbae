package monocleconfig

import "fmt"

// Tokens are the provider tokens crawlers read from environment variables
// the crawler's pods lack. Monocle's loader never reads them: the crawler
// process does, once running (src/Macroscope/Main.hs), where a missing one
// either stops the whole process or skips one crawler.
type Tokens struct {
	// Missing lists the first 20, in the config's order.
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

// tokenCheck gathers the missing tokens, and the Bugzilla and Gerrit
// crawlers by client key, whose tokens the crawler process compares.
type tokenCheck struct {
	out    Tokens
	shared map[string]*sharedClient
}

// sharedClient is the crawlers of one client key (a provider, a URL, and a
// Gerrit login): from two on, their tokens are compared.
type sharedClient struct {
	first   string // the first two crawlers' paths
	second  string
	login   string // " and Gerrit login", for the message
	count   int
	missing []int // indices in out.Missing
	anyMiss bool
}

// add records a crawler's token variable, missing or not. key is its
// client key when the crawler process compares tokens by it ("" when the
// token is read at start whatever the key).
func (t *tokenCheck) add(path, variable string, missing bool, key, login string) {
	if key == "" {
		if missing {
			t.missing(MissingToken{Crawler: path, Variable: variable, Exits: true, Why: whyGraphQL})
		}
		return
	}
	if t.shared == nil {
		t.shared = map[string]*sharedClient{}
	}
	c := t.shared[key]
	if c == nil {
		c = &sharedClient{first: path, login: login}
		t.shared[key] = c
	}
	c.count++
	if c.count == 2 {
		c.second = path
	}
	if !missing {
		return
	}
	c.anyMiss = true
	if i := t.missing(MissingToken{Crawler: path, Variable: variable, Why: whySkipped}); i >= 0 {
		c.missing = append(c.missing, i)
	}
}

// missing lists m (while under the cap) and returns its index, or -1.
func (t *tokenCheck) missing(m MissingToken) int {
	t.out.Count++
	t.out.Exits = t.out.Exits || m.Exits
	if len(t.out.Missing) >= maxIgnored {
		return -1
	}
	t.out.Missing = append(t.out.Missing, m)
	return len(t.out.Missing) - 1
}

// result marks the tokens of crawlers that share a client key as fatal.
func (t *tokenCheck) result() Tokens {
	for _, c := range t.shared {
		if c.count < 2 || !c.anyMiss {
			continue
		}
		t.out.Exits = true
		for _, i := range c.missing {
			m := &t.out.Missing[i]
			other := c.first
			if other == m.Crawler {
				other = c.second
			}
			m.Exits, m.Why = true, fmt.Sprintf(whyShared, c.login, other)
		}
	}
	return t.out
}

// checkToken records the token a crawler's provider reads, if any, named
// by its field or by the provider's default variable.
func (c *checker) checkToken(provider *unionValue) {
	p := provider.payload
	read := func(field, fallback, key, login string) {
		name, named := p.optionalText(field)
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
		if login, ok := p.optionalText("gerrit_login"); ok {
			read("gerrit_password", "GERRIT_PASSWORD", "gerrit\x00"+p.text("gerrit_url")+"\x00"+login, " and Gerrit login")
		}
	}
}
