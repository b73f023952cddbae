package monocleconfig

import (
	"fmt"
	"strings"
	"testing"
)

// crawlers is a config of one workspace with the given crawlers, each a
// provider (a flow map), named c0, c1, ...
func crawlers(providers ...string) string {
	var b strings.Builder
	for i, p := range providers {
		fmt.Fprintf(&b, "      - name: c%d\n        update_since: \"2024-01-01\"\n        provider: %s\n", i, p)
	}
	return ws(b.String())
}

// TestMissingTokens holds the cases read in src/Macroscope/Main.hs
// (getCrawler, getClientGraphQL, getClientBZ, getClientGerrit, mapMutate):
// which missing token makes Monocle's crawler process exit, and which only
// skips its crawler.
func TestMissingTokens(t *testing.T) {
	type token struct {
		crawler, variable string
		exits             bool
	}
	tests := map[string]struct {
		config string
		env    func(string) bool // nil: CRAWLERS_API_KEY only
		want   []token
	}{
		"every default token there": {
			config: crawlers("{github_organization: x}", "{gitlab_organization: g}", "{bugzilla_url: https://b}", "{gerrit_url: https://r, gerrit_login: bot}"),
			env:    allTokens,
		},
		"GitHub without its token exits": {
			config: crawlers("{github_organization: x}"),
			want:   []token{{"workspaces[0].crawlers[0]", "GITHUB_TOKEN", true}},
		},
		"GitHub users read the GitHub token": {
			config: crawlers("{github_users: [alice]}"),
			want:   []token{{"workspaces[0].crawlers[0]", "GITHUB_TOKEN", true}},
		},
		"GitLab with a named token exits without it": {
			config: crawlers("{gitlab_organization: g, gitlab_token: TEAM_GITLAB}"),
			env:    allTokens,
			want:   []token{{"workspaces[0].crawlers[0]", "TEAM_GITLAB", true}},
		},
		"a GitHub application reads no token": {
			config: crawlers("{github_app_id: '1', github_app_key_path: /k}"),
		},
		"task data reads no token": {
			config: crawlers("TaskDataProvider"),
		},
		"a Gerrit without login reads no password": {
			config: crawlers("{gerrit_url: https://r}", "{gerrit_url: https://r}"),
		},
		"one Bugzilla without its token is skipped": {
			config: crawlers("{bugzilla_url: https://b}"),
			want:   []token{{"workspaces[0].crawlers[0]", "BUGZILLA_TOKEN", false}},
		},
		"one Gerrit without its password is skipped": {
			config: crawlers("{gerrit_url: https://r, gerrit_login: bot}"),
			want:   []token{{"workspaces[0].crawlers[0]", "GERRIT_PASSWORD", false}},
		},
		"two Bugzillas on one URL, one token missing: exits": {
			config: crawlers("{bugzilla_url: https://b, bugzilla_token: B1}", "{bugzilla_url: https://b, bugzilla_token: B2}"),
			env:    envOf("CRAWLERS_API_KEY", "B1"),
			want:   []token{{"workspaces[0].crawlers[1]", "B2", true}},
		},
		"two Bugzillas on one URL in two workspaces: exits": {
			config: "workspaces:\n" +
				"  - name: a\n    crawlers:\n      - {name: c, update_since: '2024-01-01', provider: {bugzilla_url: https://b}}\n" +
				"  - name: b\n    crawlers:\n      - {name: c, update_since: '2024-01-01', provider: {bugzilla_url: https://b}}\n",
			want: []token{{"workspaces[0].crawlers[0]", "BUGZILLA_TOKEN", true}, {"workspaces[1].crawlers[0]", "BUGZILLA_TOKEN", true}},
		},
		"two Bugzillas on two URLs: each skipped": {
			config: crawlers("{bugzilla_url: https://b}", "{bugzilla_url: https://b/}"),
			want:   []token{{"workspaces[0].crawlers[0]", "BUGZILLA_TOKEN", false}, {"workspaces[0].crawlers[1]", "BUGZILLA_TOKEN", false}},
		},
		"two Gerrits on one URL and login: exits": {
			config: crawlers("{gerrit_url: https://r, gerrit_login: bot}", "{gerrit_url: https://r, gerrit_login: bot, gerrit_password: P2}"),
			env:    envOf("CRAWLERS_API_KEY", "P2"),
			want:   []token{{"workspaces[0].crawlers[0]", "GERRIT_PASSWORD", true}},
		},
		"two Gerrits on one URL, two logins: skipped": {
			config: crawlers("{gerrit_url: https://r, gerrit_login: bot}", "{gerrit_url: https://r, gerrit_login: other}"),
			want:   []token{{"workspaces[0].crawlers[0]", "GERRIT_PASSWORD", false}, {"workspaces[0].crawlers[1]", "GERRIT_PASSWORD", false}},
		},
		"a Gerrit with login and one without on one URL: skipped": {
			config: crawlers("{gerrit_url: https://r, gerrit_login: bot}", "{gerrit_url: https://r}"),
			want:   []token{{"workspaces[0].crawlers[0]", "GERRIT_PASSWORD", false}},
		},
		"a Bugzilla and a Gerrit on one URL: skipped": {
			config: crawlers("{bugzilla_url: https://x}", "{gerrit_url: https://x, gerrit_login: bot}"),
			want:   []token{{"workspaces[0].crawlers[0]", "BUGZILLA_TOKEN", false}, {"workspaces[0].crawlers[1]", "GERRIT_PASSWORD", false}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = envOf("CRAWLERS_API_KEY")
			}
			cfg, err := Parse([]byte(tc.config), env)
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Tokens
			exits := false
			for _, w := range tc.want {
				exits = exits || w.exits
			}
			if got.Count != len(tc.want) || len(got.Missing) != len(tc.want) || got.Exits != exits {
				t.Fatalf("tokens %+v, want %+v", got, tc.want)
			}
			for i, w := range tc.want {
				m := got.Missing[i]
				if m.Crawler != w.crawler || m.Variable != w.variable || m.Exits != w.exits {
					t.Errorf("missing[%d] = %+v, want %+v", i, m, w)
				}
				if strings.Contains(m.Why, "exits") != w.exits {
					t.Errorf("missing[%d] says %q", i, m.Why)
				}
			}
		})
	}
}

// TestMissingTokensListed: the list is capped, the count and Exits are
// not, and a token that exits is listed even past 20 that skip.
func TestMissingTokensListed(t *testing.T) {
	providers := make([]string, 0, 42)
	for i := range 40 {
		providers = append(providers, fmt.Sprintf("{bugzilla_url: https://b%d}", i))
	}
	providers = append(providers, "{gitlab_organization: g}")
	cfg, err := Parse([]byte(crawlers(providers...)), envOf("CRAWLERS_API_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	tok := cfg.Tokens
	if len(tok.Missing) != maxIgnored+1 || tok.Count != 41 || !tok.Exits {
		t.Errorf("%d listed, count %d, exits %v; want %d, 41, true", len(tok.Missing), tok.Count, tok.Exits, maxIgnored+1)
	}
	for i, m := range tok.Missing {
		if m.Exits != (i == maxIgnored) {
			t.Errorf("missing[%d] = %+v", i, m)
		}
	}
}

// TestCrawlersAPIKeyPerPod: HOSTNAME is set in every pod, to the pod's own
// name, so the crawler would send another key than the API compares.
func TestCrawlersAPIKeyPerPod(t *testing.T) {
	config := "workspaces:\n  - name: demo\n    crawlers_api_key: HOSTNAME\n    crawlers: []\n"
	_, err := Parse([]byte(config), envOf("PATH"))
	assertProblems(t, err, []want{{"workspaces[0].crawlers_api_key", "each pod's own name"}})
	config = strings.Replace(config, "HOSTNAME", "PATH", 1)
	if _, err := Parse([]byte(config), envOf("PATH")); err != nil {
		t.Error(err)
	}
}
