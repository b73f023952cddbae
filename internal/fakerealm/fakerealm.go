// Package fakerealm is Elasticsearch 7.17's file realm and role-based
// authorization as the tests' fake Elasticsearch needs them: the users file
// (user:hash, checked as Hasher.PBKDF2 checks it), users_roles, roles.yml,
// and whether a user's roles grant an action on an index. It follows
// Elasticsearch's source (x-pack security: FileUserPasswdStore,
// FileUserRolesStore, FileRolesStore, ClusterPrivilegeResolver,
// IndexPrivilege) for the privileges the project's roles name; it is
// imported only by tests.
package fakerealm

import (
	"bufio"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/internal/elasticusers"
)

// Realm is the users and roles of one node.
type Realm struct {
	hashes map[string]string   // user → hash
	roles  map[string][]string // user → roles
	defs   map[string]role
}

type role struct {
	Cluster []string `json:"cluster"`
	Indices []struct {
		Names      []string `json:"names"`
		Privileges []string `json:"privileges"`
	} `json:"indices"`
}

// New reads the three files as the realm does: a line per entry, # for a
// comment; a malformed line is an error here (the node would log it).
func New(users, usersRoles, rolesYAML string) (*Realm, error) {
	r := &Realm{hashes: map[string]string{}, roles: map[string][]string{}}
	if err := lines(users, func(l string) error {
		user, hash, ok := strings.Cut(l, ":")
		if !ok || user == "" || hash == "" {
			return fmt.Errorf("users: invalid entry %q", l)
		}
		r.hashes[user] = hash
		return nil
	}); err != nil {
		return nil, err
	}
	split := regexp.MustCompile(`\s*,\s*`)
	if err := lines(usersRoles, func(l string) error {
		name, users, ok := strings.Cut(l, ":")
		if !ok || name == "" || users == "" {
			return fmt.Errorf("users_roles: invalid entry %q", l)
		}
		for _, u := range split.Split(strings.TrimSpace(users), -1) {
			r.roles[u] = append(r.roles[u], name)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict([]byte(rolesYAML), &r.defs); err != nil {
		return nil, fmt.Errorf("roles.yml: %w", err)
	}
	for name, d := range r.defs {
		for _, p := range d.Cluster {
			if _, ok := clusterPrivileges[p]; !ok && !strings.HasPrefix(p, "cluster:") {
				return nil, fmt.Errorf("roles.yml: role %s: unknown cluster privilege %q (the node drops the role)", name, p)
			}
		}
		for _, ip := range d.Indices {
			for _, p := range ip.Privileges {
				if _, ok := indexPrivileges[p]; !ok {
					return nil, fmt.Errorf("roles.yml: role %s: unknown index privilege %q (the node drops the role)", name, p)
				}
			}
		}
	}
	return r, nil
}

func lines(text string, f func(string) error) error {
	s := bufio.NewScanner(strings.NewReader(text))
	for s.Scan() {
		l := strings.TrimSpace(s.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if err := f(l); err != nil {
			return err
		}
	}
	return s.Err()
}

// The action patterns of the named privileges the project's roles use
// (ClusterPrivilegeResolver, IndexPrivilege in 7.17).
var (
	clusterPrivileges = map[string][]string{
		"monitor":          {"cluster:monitor/*"},
		"manage_snapshots": {"cluster:admin/snapshot/*", "cluster:admin/repository/*"},
		"manage":           {"cluster:*", "indices:admin/template/*"},
		"all":              {"cluster:*"},
	}
	indexPrivileges = map[string][]string{
		"all":                 {"indices:*"},
		"manage":              {"indices:monitor/*", "indices:admin/*"},
		"monitor":             {"indices:monitor/*"},
		"read":                {"indices:data/read/*"},
		"write":               {"indices:data/write/*", "indices:admin/mapping/put"},
		"create_index":        {"indices:admin/create"},
		"view_index_metadata": {"indices:admin/get", "indices:admin/mappings/get", "indices:admin/aliases/get", "indices:monitor/settings/get"},
		"maintenance":         {"indices:admin/refresh*", "indices:admin/flush*", "indices:admin/synced_flush", "indices:admin/forcemerge*"},
	}
)

// Authenticate is the user a request's basic credentials prove, or the
// status the node answers: 401 without credentials or with wrong ones.
func (r *Realm) Authenticate(req *http.Request) (user string, status int) {
	user, password, ok := req.BasicAuth()
	hash, known := r.hashes[user]
	if !ok || !known || !elasticusers.Verify([]byte(password), hash) {
		return "", http.StatusUnauthorized
	}
	return user, http.StatusOK
}

// Allowed reports whether user's roles grant action: a cluster action
// (index "") or an index action on index (a name or a pattern, which the
// role's names must cover).
func (r *Realm) Allowed(user, action, index string) bool {
	for _, name := range r.roles[user] {
		d, ok := r.defs[name]
		if !ok {
			continue
		}
		if index == "" {
			for _, p := range d.Cluster {
				if matchAny(action, clusterPatterns(p)) {
					return true
				}
			}
			continue
		}
		for _, ip := range d.Indices {
			if !matchAny(index, ip.Names) {
				continue
			}
			for _, p := range ip.Privileges {
				if matchAny(action, indexPrivileges[p]) {
					return true
				}
			}
		}
	}
	return false
}

func clusterPatterns(p string) []string {
	if patterns, ok := clusterPrivileges[p]; ok {
		return patterns
	}
	return []string{p} // a raw action pattern
}

// matchAny: s matches one of the patterns, where * matches anything.
func matchAny(s string, patterns []string) bool {
	for _, p := range patterns {
		// path.Match's * stops at '/': replace it by a wildcard that does not.
		if ok, _ := path.Match(strings.ReplaceAll(p, "/", "\x00"), strings.ReplaceAll(s, "/", "\x00")); ok {
			return true
		}
	}
	return false
}
