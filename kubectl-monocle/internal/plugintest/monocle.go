// Package plugintest holds what the plugin's tests share: a fake cluster
// and a fake Monocle API.
package plugintest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/monocleapi"
)

// FakeMonocle is Monocle 1.11.2's API as far as status asks it:
// POST /api/2/crawler/get_commit_info (src/Monocle/Servant/HTTP.hs:45), a
// CommitInfoRequest (schemas/monocle/protob/crawler.proto:114-120) in, a
// CommitInfoResponse out, in Monocle's JSON (codegen/Monocle/Protob/Crawler.hs).
// As src/Monocle/Api/Server.hs:429-460 (crawlerCommitInfo) and
// src/Monocle/Backend/Index.hs:921-941 (getLastUpdated) answer: the oldest
// entity of that crawler and that EntityType, named by the Entity's field
// of its kind (crawler.proto:14-22), else CommitGetNoEntity; a workspace
// not in the config, CommitGetUnknownIndex. Commits holds the oldest
// entity's date of each workspace/crawler/EntityType.
type FakeMonocle struct {
	T       *testing.T
	Commits map[string]string // workspace/crawler/EntityType -> RFC 3339 date
	Status  int               // answer this status instead, when set
	// ErrorFor: answer 500 with this body for a workspace/crawler.
	ErrorFor map[string]string
	mu       sync.Mutex
	Asked    []string // workspace/crawler/EntityType
}

// entityField is the Entity's field of each EntityType's entities
// (crawler.proto:14-29; Index.hs:1008-1020 stores a crawler's entities).
var entityField = map[string]string{
	monocleapi.EntityOrganization: "organization_name", monocleapi.EntityProject: "project_name",
	monocleapi.EntityTaskData: "td_name", monocleapi.EntityUser: "user_name",
}

func (f *FakeMonocle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/2/crawler/get_commit_info" {
		http.NotFound(w, r)
		return
	}
	if f.Status != 0 {
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`, f.Status)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.T.Errorf("Content-Type %q", ct)
	}
	var req struct {
		Index   string `json:"index"`
		Crawler string `json:"crawler"`
		Entity  string `json:"entity"`
		Offset  *int   `json:"offset"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Offset == nil || entityField[req.Entity] == "" {
		// Monocle's parser needs every field, the entity one of EntityType's
		// names (FromJSONPB CommitInfoRequest).
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	key := req.Index + "/" + req.Crawler + "/" + req.Entity
	f.mu.Lock()
	f.Asked = append(f.Asked, key)
	f.mu.Unlock()
	if body, ok := f.ErrorFor[req.Index+"/"+req.Crawler]; ok {
		http.Error(w, body, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	date, ok := f.Commits[key]
	switch {
	case strings.HasPrefix(req.Index, "unknown"):
		w.Write([]byte(`{"error":"CommitGetUnknownIndex"}`))
	case !ok:
		w.Write([]byte(`{"error":"CommitGetNoEntity"}`))
	default:
		json.NewEncoder(w).Encode(map[string]any{"entity": map[string]any{"entity": map[string]string{entityField[req.Entity]: "org/" + req.Crawler}, "last_commit_at": date}})
	}
}

// Start serves f until the test ends, and is the client of it.
func (f *FakeMonocle) Start() *monocleapi.MonocleAPI {
	srv := httptest.NewServer(f)
	f.T.Cleanup(srv.Close)
	return &monocleapi.MonocleAPI{Client: srv.Client(), BaseURL: srv.URL}
}
