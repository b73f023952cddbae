package fakerealm_test

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/fakerealm"
)

// Every call Monocle 1.11.2's API and janitor make to Elasticsearch, as
// the action a secured node authorizes, is granted to the monocle user on
// Monocle's indices, and none on another index or of the cluster's; the
// other users get none of them. The calls are those of
// src/Monocle/Effects.hs:435-507 (bloodhound 0.19.1.0's Client.hs and
// Monocle's src/Database/Bloodhound/Raw.hs): index setup at start
// (src/Monocle/Main.hs:179-183, Backend/Index.hs ensureIndex,
// ensureConfigIndex), the crawlers' documents, the queries, and the
// janitor's update-idents, wipe-crawler-data and set-crawler-commit-date
// (src/Monocle/Backend/Janitor.hs).
func TestMonocleCalls(t *testing.T) {
	realm := realmWith(t, elasticusers.Roles)
	for call, action := range monocleCalls {
		for _, index := range []string{"monocle.config", "monocle.changes.1.demo"} {
			if !realm.Allowed(elasticusers.Monocle.Name, action, index) {
				t.Errorf("%s (%s) on %s is refused to Monocle", call, action, index)
			}
			for _, other := range []elasticusers.User{elasticusers.Snapshots, elasticusers.Probe} {
				if strings.HasPrefix(action, "indices:data/") && realm.Allowed(other.Name, action, index) {
					t.Errorf("%s (%s) on %s is granted to %s", call, action, index, other.Name)
				}
			}
		}
		if realm.Allowed(elasticusers.Monocle.Name, action, "kibana_sample_data") {
			t.Errorf("%s on an index not Monocle's is granted to Monocle", call)
		}
	}
	for _, action := range []string{"cluster:admin/snapshot/create", "cluster:admin/repository/put", "cluster:monitor/health", "cluster:admin/settings/update"} {
		if realm.Allowed(elasticusers.Monocle.Name, action, "") {
			t.Errorf("Monocle's user may %s", action)
		}
	}
}

// monocleCalls are Monocle 1.11.2's calls to Elasticsearch, each as the
// action a secured node authorizes.
var monocleCalls = map[string]string{
	"PUT /idx":                   "indices:admin/create",
	"PUT /idx/_mapping":          "indices:admin/mapping/put",
	"HEAD /idx":                  "indices:admin/get",
	"PUT /idx/_settings":         "indices:admin/settings/update",
	"POST /idx/_refresh":         "indices:admin/refresh",
	"GET /idx/_doc/id":           "indices:data/read/get",
	"PUT /idx/_doc/id":           "indices:data/write/index",
	"POST /idx/_update/id":       "indices:data/write/update",
	"POST /_bulk":                "indices:data/write/bulk",
	"POST /idx/_search":          "indices:data/read/search",
	"POST /_search/scroll":       "indices:data/read/scroll",
	"POST /idx/_count":           "indices:data/read/count",
	"POST /idx/_delete_by_query": "indices:data/write/delete/byquery",
}

// realmWith is a realm of the project's users with roles as roles.yml.
func realmWith(t *testing.T, roles string) *fakerealm.Realm {
	t.Helper()
	var users strings.Builder
	for _, u := range elasticusers.All {
		hash, _ := elasticusers.Hash([]byte(rand.Text()), rand.Reader)
		fmt.Fprintf(&users, "%s:%s\n", u.Name, hash)
	}
	realm, err := fakerealm.New(users.String(), elasticusers.UsersRoles(), roles)
	if err != nil {
		t.Fatal(err)
	}
	return realm
}

// What manage serves in the monocle role (docs/security.md): without it,
// read and write leave four of Monocle's calls refused, the index set-up
// at the API's start (src/Monocle/Backend/Index.hs:249-258, 468-473:
// create, exists, settings) and the refresh after each write (Index.hs:485,
// 589, 612, 1058; Backend/Queries.hs:89); with the named privileges
// narrower than manage that grant those (create_index, view_index_metadata,
// maintenance), the settings update (index.max_regex_length,
// Index.hs:473) is still refused: of Elasticsearch 7.17's named index
// privileges, only manage (and all) grant indices:admin/settings/update.
func TestWhatManageServes(t *testing.T) {
	for privileges, refused := range map[string][]string{
		`"read", "write", "manage"`: nil,
		`"read", "write"`:           {"HEAD /idx", "POST /idx/_refresh", "PUT /idx", "PUT /idx/_settings"},
		`"read", "write", "create_index", "view_index_metadata", "maintenance"`: {"PUT /idx/_settings"},
	} {
		roles := strings.Replace(elasticusers.Roles, `privileges: ["read", "write", "manage"]`, "privileges: ["+privileges+"]", 1)
		if !strings.Contains(roles, privileges) {
			t.Fatalf("the monocle role is not read, write, manage: %s", elasticusers.Roles)
		}
		realm := realmWith(t, roles)
		var got []string
		for call, action := range monocleCalls {
			if !realm.Allowed(elasticusers.Monocle.Name, action, "monocle.changes.1.demo") {
				got = append(got, call)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, refused) {
			t.Errorf("with %s, refused %v, want %v", privileges, got, refused)
		}
	}
}
