package monocleconfig

import (
	"fmt"
	"strings"
)

// Generators of realistic configs of about size bytes, the shapes a large
// Monocle deployment has: many crawlers, many idents with aliases, comments,
// anchors for shared providers. The bound of prescan.go must keep them all
// within DefaultLimits at MaxBytes.

// fill writes head, then unit(i) for i = 0, 1, ... while the whole stays
// within size bytes.
func fill(size int, head string, unit func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; ; i++ {
		u := unit(i)
		if b.Len()+len(u) > size {
			break
		}
		b.WriteString(u)
	}
	return []byte(b.String())
}

const identsHead = `workspaces:
  - name: people
    crawlers:
      - name: github
        update_since: '2020-01-01'
        provider:
          github_organization: example
    idents:
`

// identsConfig has idents in block style, each with three aliases and a
// group, as update-idents writes them.
func identsConfig(size int) []byte {
	return fill(size, identsHead, func(i int) string {
		return fmt.Sprintf(`      - ident: Firstname Lastname %d
        aliases:
          - github.com/flastname%d
          - review.example.net/Firstname Lastname %d/%d
          - gitlab.com/flast%d
        groups:
          - team-%d
`, i, i, i, 1000+i, i, i%50)
	})
}

// compactIdentsConfig has idents as flow maps with short logins: the
// densest realistic YAML seen, a node every 7 bytes or so.
func compactIdentsConfig(size int) []byte {
	return fill(size, identsHead, func(i int) string {
		return fmt.Sprintf("      - {ident: u%d, aliases: [github.com/u%d, gitlab.com/u%d], groups: [t%d]}\n", i, i, i, i%50)
	})
}

// gerritConfig has Gerrit crawlers with every field and a few projects
// each.
func gerritConfig(size int) []byte {
	return fill(size, "workspaces:\n  - name: openstack\n    crawlers:\n", func(i int) string {
		return fmt.Sprintf(`      - name: gerrit-%d
        update_since: '2020-01-01'
        provider:
          gerrit_url: https://review%d.example.org
          gerrit_login: bot
          gerrit_password: GERRIT_PASSWORD
          gerrit_prefix: g%d/
          gerrit_repositories:
            - ^openstack/nova.*
            - ^openstack/neutron
            - ^openstack/project-%d$
`, i, i, i, i)
	})
}

// shortReposConfig has GitHub crawlers listing many short repository
// names in flow lists.
func shortReposConfig(size int) []byte {
	return fill(size, "workspaces:\n  - name: big\n    crawlers:\n", func(i int) string {
		repos := make([]string, 20)
		for j := range repos {
			repos[j] = fmt.Sprintf("r%d", (i*20+j)%1000)
		}
		return fmt.Sprintf("      - name: gh-%d\n        update_since: '2020-01-01'\n        provider:\n          github_organization: org%d\n          github_repositories: [%s]\n", i, i, strings.Join(repos, ", "))
	})
}

// anchoredConfig shares providers and ident groups through anchors, as
// hand-written configs do to avoid repeating themselves.
func anchoredConfig(size int) []byte {
	head := `x-providers:
  github: &gh
    github_organization: example
    github_token: GITHUB_TOKEN
    github_repositories: [api, web, cli, docs]
  groups: &staff [staff, maintainers]
workspaces:
  - name: shared
    crawlers:
      - name: github
        update_since: '2020-01-01'
        provider: *gh
    idents:
`
	return fill(size, head, func(i int) string {
		return fmt.Sprintf("      - ident: person-%d\n        aliases: [github.com/person-%d, gitlab.com/person-%d]\n        groups: *staff\n", i, i, i)
	})
}

// commentedConfig documents every crawler with comment lines and a
// trailing comment, as a team's shared config does.
func commentedConfig(size int) []byte {
	return fill(size, "# The crawlers of every team.\nworkspaces:\n  - name: teams\n    crawlers:\n", func(i int) string {
		return fmt.Sprintf(`      # Team %d: its GitHub organization.
      # Owner: team-%d@example.com
      - name: team-%d
        update_since: '2020-01-01' # when the team started
        provider:
          github_organization: team-%d
`, i, i, i, i)
	})
}

// workspacesConfig has many small workspaces, each with a crawler, a
// project and search aliases.
func workspacesConfig(size int) []byte {
	return fill(size, "workspaces:\n", func(i int) string {
		return fmt.Sprintf(`  - name: ws-%d
    crawlers:
      - name: gitlab
        update_since: '2020-01-01'
        provider:
          gitlab_organization: group-%d
    projects:
      - name: core
        repository_regex: ^core/.*
    search_aliases:
      - name: recent
        alias: "from:now-3weeks and repo:core"
`, i, i)
	})
}

// realisticConfigs are the generators above, by name.
var realisticConfigs = []struct {
	name string
	make func(size int) []byte
}{
	{"crawlers with repository lists", flatConfig},
	{"idents in block style", identsConfig},
	{"idents as flow maps", compactIdentsConfig},
	{"gerrit crawlers", gerritConfig},
	{"short repository names", shortReposConfig},
	{"anchors for shared providers", anchoredConfig},
	{"comments on every crawler", commentedConfig},
	{"many workspaces", workspacesConfig},
}
