package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeMonocle is Monocle 1.11.2's API as far as status asks it:
// POST /api/2/crawler/get_commit_info (src/Monocle/Servant/HTTP.hs:45), a
// CommitInfoRequest (schemas/monocle/protob/crawler.proto:114-120) in, a
// CommitInfoResponse out, in Monocle's JSON (codegen/Monocle/Protob/Crawler.hs).
// As src/Monocle/Api/Server.hs:429-460 (crawlerCommitInfo) and
// src/Monocle/Backend/Index.hs:921-941 (getLastUpdated) answer: the oldest
// entity of that crawler and that EntityType, named by the Entity's field
// of its kind (crawler.proto:14-22), else CommitGetNoEntity; a workspace
// not in the config, CommitGetUnknownIndex. commits holds the oldest
// entity's date of each workspace/crawler/EntityType.
type fakeMonocle struct {
	t       *testing.T
	commits map[string]string // workspace/crawler/EntityType -> RFC 3339 date
	status  int               // answer this status instead, when set
	// errorFor: answer 500 with this body for a workspace/crawler.
	errorFor map[string]string
	mu       sync.Mutex
	asked    []string // workspace/crawler/EntityType
}

// entityField is the Entity's field of each EntityType's entities
// (crawler.proto:14-29; Index.hs:1008-1020 stores a crawler's entities).
var entityField = map[string]string{
	EntityOrganization: "organization_name", EntityProject: "project_name",
	EntityTaskData: "td_name", EntityUser: "user_name",
}

func (f *fakeMonocle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/2/crawler/get_commit_info" {
		http.NotFound(w, r)
		return
	}
	if f.status != 0 {
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`, f.status)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("Content-Type %q", ct)
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
	f.asked = append(f.asked, key)
	f.mu.Unlock()
	if body, ok := f.errorFor[req.Index+"/"+req.Crawler]; ok {
		http.Error(w, body, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	date, ok := f.commits[key]
	switch {
	case strings.HasPrefix(req.Index, "unknown"):
		w.Write([]byte(`{"error":"CommitGetUnknownIndex"}`))
	case !ok:
		w.Write([]byte(`{"error":"CommitGetNoEntity"}`))
	default:
		json.NewEncoder(w).Encode(map[string]any{"entity": map[string]any{"entity": map[string]string{entityField[req.Entity]: "org/" + req.Crawler}, "last_commit_at": date}})
	}
}

func (f *fakeMonocle) start() *MonocleAPI {
	srv := httptest.NewServer(f)
	f.t.Cleanup(srv.Close)
	return &MonocleAPI{Client: srv.Client(), BaseURL: srv.URL}
}

func TestCommitInfo(t *testing.T) {
	f := &fakeMonocle{t: t, commits: map[string]string{"ws/github/" + EntityProject: "2026-11-30T10:00:00Z"}}
	api := f.start()
	ctx := context.Background()
	got, err := api.CommitInfo(ctx, "ws", "github", EntityProject)
	want := CommitInfo{Entity: "project_name: org/github", LastCommitAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	if err != nil || got != want {
		t.Errorf("CommitInfo: %+v %v, want %+v", got, err, want)
	}
	if got, err := api.CommitInfo(ctx, "ws", "gerrit", EntityProject); err != nil || !got.NoEntity {
		t.Errorf("no entity: %+v %v", got, err)
	}
	if _, err := api.CommitInfo(ctx, "unknown", "gerrit", EntityProject); err == nil || !strings.Contains(err.Error(), "CommitGetUnknownIndex") {
		t.Errorf("unknown workspace: %v", err)
	}
	f.status = http.StatusForbidden
	if _, err := api.CommitInfo(ctx, "ws", "github", EntityProject); !Forbidden(err) {
		t.Errorf("403: %v", err)
	}
	f.status = http.StatusServiceUnavailable
	if _, err := api.CommitInfo(ctx, "ws", "github", EntityProject); err == nil || Forbidden(err) || !strings.Contains(err.Error(), "503") {
		t.Errorf("503: %v", err)
	}
}

func TestDecodeCommitInfo(t *testing.T) {
	for _, bad := range []string{`[`, `{}`, `{"entity":{"entity":{"project_name":"p"}}}`} {
		if _, err := decodeCommitInfo([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	got, err := decodeCommitInfo([]byte(`{"entity":{"entity":{"organization_name":"o"},"last_commit_at":"2026-01-02T03:04:05.123Z"}}`))
	if err != nil || got.Entity != "organization_name: o" || got.LastCommitAt.Nanosecond() != 123000000 {
		t.Errorf("%+v %v", got, err)
	}
}

// The proxy path itself is the API server's: only its address is checked
// here (the e2e suite runs it against a real API server, where no pod
// answers behind it).
func TestServiceProxyURL(t *testing.T) {
	got := ServiceProxyURL("https://10.0.0.1:6443/", "ns", "m-api")
	if want := "https://10.0.0.1:6443/api/v1/namespaces/ns/services/m-api:http/proxy"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}
