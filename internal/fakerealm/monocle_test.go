package fakerealm_test

import (
	"crypto/rand"
	"fmt"
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
	calls := map[string]string{
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
	var users strings.Builder
	passwords := map[string]string{}
	for _, u := range elasticusers.All {
		passwords[u.Name] = rand.Text()
		hash, _ := elasticusers.Hash([]byte(passwords[u.Name]), rand.Reader)
		fmt.Fprintf(&users, "%s:%s\n", u.Name, hash)
	}
	realm, err := fakerealm.New(users.String(), elasticusers.UsersRoles(), elasticusers.Roles)
	if err != nil {
		t.Fatal(err)
	}
	for call, action := range calls {
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
