package snapshot

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/change-metrics/monocle-hook/internal/fakerealm"
)

// fakeES is a single-node Elasticsearch 7.17 with its repositories,
// snapshots and indices in memory. It answers the APIs this package uses,
// in the shapes Elastic's API reference documents, and checks every request
// against that reference: a path or method outside it, a query parameter
// the API does not take or with a bad value, a body field it does not
// document, a body without Content-Type: application/json fails the test.
// It also enforces the rules a real node would: path.repo for an fs
// repository's location, unique lowercase snapshot names, missing indices,
// and that a restore never replaces an open index.
//
// References (7.17), one per route below:
//
//	get snapshot repository  https://www.elastic.co/guide/en/elasticsearch/reference/7.17/get-snapshot-repo-api.html
//	put snapshot repository  https://www.elastic.co/guide/en/elasticsearch/reference/7.17/put-snapshot-repo-api.html
//	create snapshot          https://www.elastic.co/guide/en/elasticsearch/reference/7.17/create-snapshot-api.html
//	get snapshot             https://www.elastic.co/guide/en/elasticsearch/reference/7.17/get-snapshot-api.html
//	                         (the 7.15+ answer {snapshots, total, remaining}: SnapshotGetResponse.ts in
//	                         github.com/elastic/elasticsearch-specification)
//	delete snapshot          https://www.elastic.co/guide/en/elasticsearch/reference/7.17/delete-snapshot-api.html
//	restore snapshot         https://www.elastic.co/guide/en/elasticsearch/reference/7.17/restore-snapshot-api.html
//	                         (its answer: SnapshotRestoreResponse.ts in the same specification)
//	close index              https://www.elastic.co/guide/en/elasticsearch/reference/7.17/indices-close.html
//	cat indices              https://www.elastic.co/guide/en/elasticsearch/reference/7.17/cat-indices.html
//	cluster health           https://www.elastic.co/guide/en/elasticsearch/reference/7.17/cluster-health.html
//	errors                   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/common-options.html
type fakeES struct {
	t        *testing.T
	server   *httptest.Server
	pathRepo string // the node's path.repo; "" for none

	mu       sync.Mutex
	repos    map[string]string          // repository name → fs location
	volumes  map[string][]*fakeSnapshot // location → the snapshots stored there
	indices  map[string]string          // index → "open" or "close"
	clock    time.Time                  // the next snapshot's start time
	requests []string                   // "METHOD /path?query", in order

	// realm, when not nil, is security on: each request must carry a
	// user's credentials and its roles must grant the route's action.
	realm *fakerealm.Realm

	// Faults.
	nextState     string          // of the next snapshot taken: SUCCESS (default), FAILED, PARTIAL, INCOMPATIBLE
	restoreFailed int             // shards that fail in the next restore
	health        string          // of restored indices: green (default) or red (never active)
	hang          map[string]bool // routes that answer only once the client gives up
}

type fakeSnapshot struct {
	name    string
	state   string
	indices []string
	start   time.Time
}

// fakeStart is where the fake's clock starts: after every seeded snapshot.
var fakeStart = time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)

func newFakeES(t *testing.T) *fakeES {
	f := &fakeES{
		t:        t,
		pathRepo: PathRepo,
		repos:    map[string]string{},
		volumes:  map[string][]*fakeSnapshot{},
		indices:  map[string]string{},
		clock:    fakeStart,
		hang:     map[string]bool{},
	}
	mux := http.NewServeMux()
	for _, r := range f.routes() {
		mux.HandleFunc(r.pattern, f.handle(r))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.t.Errorf("not an Elasticsearch 7.17 API this package uses: %s %s", r.Method, r.URL)
		f.write(w, 400, map[string]any{"error": fmt.Sprintf("no handler found for uri [%s] and method [%s]", r.URL.Path, r.Method), "status": 400})
	})
	f.server = httptest.NewServer(mux)
	t.Cleanup(f.server.Close)
	return f
}

// client talks to the fake, with short timeouts for the calls that do not
// wait, so that a hanging call ends the test quickly.
func (f *fakeES) client() *Client {
	c, err := NewClient(f.server.URL)
	if err != nil {
		f.t.Fatal(err)
	}
	c.callTimeout = 2 * time.Second
	return c
}

// seed stores snapshots at a location, as a previous Elasticsearch left them.
func (f *fakeES) seed(location string, snaps ...*fakeSnapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.volumes[location] = append(f.volumes[location], snaps...)
}

// snapshotNames lists what a location holds, by start time.
func (f *fakeES) snapshotNames(location string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, s := range sortedSnapshots(f.volumes[location]) {
		out = append(out, s.name)
	}
	return out
}

func (f *fakeES) requestLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

type route struct {
	name    string
	pattern string
	// action is the Elasticsearch action a realm authorizes (x-pack's
	// names); an index action names the path's {index}.
	action      string
	indexAction bool
	params      map[string]func(string) bool // the query parameters the API takes
	body        func() any                   // a new value to decode the body into; nil: no body
	serve       func(f *fakeES, r *http.Request, body any) (int, any)
}

var (
	isBool     = func(v string) bool { return v == "true" || v == "false" || v == "" }
	isTime     = regexp.MustCompile(`^(-1|0|[0-9]+(d|h|m|s|ms|micros|nanos))$`).MatchString
	isAny      = func(string) bool { return true }
	isWildcard = regexp.MustCompile(`^(all|open|closed|hidden|none)(,(all|open|closed|hidden|none))*$`).MatchString
	isCount    = regexp.MustCompile(`^([0-9]+|all)$`).MatchString
)

func (f *fakeES) routes() []route {
	masterTimeout := map[string]func(string) bool{"master_timeout": isTime}
	with := func(base map[string]func(string) bool, more map[string]func(string) bool) map[string]func(string) bool {
		out := map[string]func(string) bool{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range more {
			out[k] = v
		}
		return out
	}
	return []route{
		{
			name: "get repository", pattern: "GET /_snapshot/{repository}",
			action: "cluster:admin/repository/get",
			params: with(masterTimeout, map[string]func(string) bool{"local": isBool}),
			serve:  (*fakeES).getRepository,
		},
		{
			name: "put repository", pattern: "PUT /_snapshot/{repository}",
			action: "cluster:admin/repository/put",
			params: with(masterTimeout, map[string]func(string) bool{"timeout": isTime, "verify": isBool}),
			body:   func() any { return &putRepositoryBody{} },
			serve:  (*fakeES).putRepository,
		},
		{
			name: "create snapshot", pattern: "PUT /_snapshot/{repository}/{snapshot}",
			action: "cluster:admin/snapshot/create",
			params: with(masterTimeout, map[string]func(string) bool{"wait_for_completion": isBool}),
			body:   func() any { return &createSnapshotBody{} },
			serve:  (*fakeES).createSnapshot,
		},
		{
			name: "get snapshot", pattern: "GET /_snapshot/{repository}/{snapshot}",
			action: "cluster:admin/snapshot/get",
			params: with(masterTimeout, map[string]func(string) bool{
				"ignore_unavailable": isBool, "verbose": isBool, "index_details": isBool, "include_repository": isBool,
				"sort": isAny, "size": isAny, "order": isAny, "after": isAny, "offset": isAny, "from_sort_value": isAny,
			}),
			serve: (*fakeES).getSnapshots,
		},
		{
			name: "delete snapshot", pattern: "DELETE /_snapshot/{repository}/{snapshot}",
			action: "cluster:admin/snapshot/delete",
			params: masterTimeout,
			serve:  (*fakeES).deleteSnapshots,
		},
		{
			name: "restore snapshot", pattern: "POST /_snapshot/{repository}/{snapshot}/_restore",
			action: "cluster:admin/snapshot/restore",
			params: with(masterTimeout, map[string]func(string) bool{"wait_for_completion": isBool}),
			body:   func() any { return &restoreBody{} },
			serve:  (*fakeES).restoreSnapshot,
		},
		{
			name: "close index", pattern: "POST /{index}/_close",
			action: "indices:admin/close", indexAction: true,
			params: with(masterTimeout, map[string]func(string) bool{
				"allow_no_indices": isBool, "expand_wildcards": isWildcard, "ignore_unavailable": isBool,
				"wait_for_active_shards": isCount, "timeout": isTime,
			}),
			serve: (*fakeES).closeIndex,
		},
		{
			name: "cat indices", pattern: "GET /_cat/indices/{index}",
			action: "indices:monitor/stats", indexAction: true,
			params: with(masterTimeout, map[string]func(string) bool{
				"format": isAny, "h": isAny, "expand_wildcards": isWildcard, "bytes": isAny, "health": isAny,
				"help": isBool, "include_unloaded_segments": isBool, "local": isBool, "pri": isBool, "s": isAny,
				"time": isAny, "v": isBool,
			}),
			serve: (*fakeES).catIndices,
		},
		{
			name: "cluster health", pattern: "GET /_cluster/health/{index}",
			action: "cluster:monitor/health",
			params: with(masterTimeout, map[string]func(string) bool{
				"expand_wildcards": isWildcard, "level": isAny, "local": isBool, "timeout": isTime,
				"wait_for_active_shards": isCount, "wait_for_events": isAny, "wait_for_no_initializing_shards": isBool,
				"wait_for_no_relocating_shards": isBool, "wait_for_nodes": isAny,
				"wait_for_status": func(v string) bool { return v == "green" || v == "yellow" || v == "red" },
			}),
			serve: (*fakeES).clusterHealth,
		},
	}
}

// handle checks a request against its route, then serves it.
func (f *fakeES) handle(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
		hang := f.hang[rt.name]
		f.mu.Unlock()
		for name, values := range r.URL.Query() {
			valid, known := rt.params[name]
			if !known {
				f.t.Errorf("%s: query parameter %q is not in the API", rt.name, name)
			} else if len(values) != 1 || !valid(values[0]) {
				f.t.Errorf("%s: bad value %q for %s", rt.name, values, name)
			}
		}
		if f.realm != nil && !f.authorized(w, r, rt) {
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body any
		switch {
		case rt.body == nil && len(raw) > 0:
			f.t.Errorf("%s takes no body, got %s", rt.name, raw)
		case rt.body != nil && len(raw) > 0:
			// Elasticsearch refuses a body without a JSON content type.
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				f.t.Errorf("%s: Content-Type %q", rt.name, ct)
				f.write(w, 406, map[string]any{"error": "Content-Type header [" + ct + "] is not supported", "status": 406})
				return
			}
			body = rt.body()
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(body); err != nil {
				f.t.Errorf("%s: body %s is not the API's: %v", rt.name, raw, err)
				f.write(w, 400, esError(400, "x_content_parse_exception", err.Error()))
				return
			}
		}
		if hang {
			// Answer only once the client gives up (its context ends the
			// connection); a client that never does fails the test.
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
				f.t.Errorf("%s: the client waited 20 s and never gave up", rt.name)
			}
			return
		}
		f.mu.Lock()
		status, answer := rt.serve(f, r, body)
		f.mu.Unlock()
		f.write(w, status, answer)
	}
}

// authorized answers a request the realm refuses as a secured node does:
// 401 without a user's credentials, 403 outside its roles.
func (f *fakeES) authorized(w http.ResponseWriter, r *http.Request, rt route) bool {
	user, status := f.realm.Authenticate(r)
	if status != http.StatusOK {
		w.Header().Set("WWW-Authenticate", `Basic realm="security" charset="UTF-8"`)
		f.write(w, status, esError(status, "security_exception", "unable to authenticate user for REST request ["+r.URL.Path+"]"))
		return false
	}
	index := ""
	if rt.indexAction {
		index = r.PathValue("index")
	}
	if !f.realm.Allowed(user, rt.action, index) {
		f.write(w, 403, esError(403, "security_exception", "action ["+rt.action+"] is unauthorized for user ["+user+"]"))
		return false
	}
	// _cat/indices reads the cluster's state too.
	if rt.name == "cat indices" && !f.realm.Allowed(user, "cluster:monitor/state", "") {
		f.write(w, 403, esError(403, "security_exception", "action [cluster:monitor/state] is unauthorized for user ["+user+"]"))
		return false
	}
	return true
}

func (f *fakeES) write(w http.ResponseWriter, status int, answer any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(answer); err != nil {
		f.t.Error(err)
	}
}

// esError is Elasticsearch's error answer.
func esError(status int, errorType, reason string) map[string]any {
	cause := map[string]any{"type": errorType, "reason": reason}
	return map[string]any{
		"error":  map[string]any{"root_cause": []any{cause}, "type": errorType, "reason": reason},
		"status": status,
	}
}

func (f *fakeES) getRepository(r *http.Request, _ any) (int, any) {
	name := r.PathValue("repository")
	location, ok := f.repos[name]
	if !ok {
		return 404, esError(404, "repository_missing_exception", "["+name+"] missing")
	}
	return 200, map[string]any{name: map[string]any{"type": "fs", "settings": map[string]any{"location": location}}}
}

type putRepositoryBody struct {
	Type     *string `json:"type"`
	Settings *struct {
		Location *string `json:"location"`
		Compress *bool   `json:"compress"`
		Readonly *bool   `json:"readonly"`
	} `json:"settings"`
}

func (f *fakeES) putRepository(r *http.Request, b any) (int, any) {
	name := r.PathValue("repository")
	body, _ := b.(*putRepositoryBody)
	if body == nil || body.Type == nil || body.Settings == nil {
		f.t.Errorf("put repository: type and settings are required, got %+v", body)
		return 400, esError(400, "action_request_validation_exception", "Validation Failed: 1: type is missing;")
	}
	if *body.Type != "fs" {
		return 500, esError(500, "repository_exception", "["+name+"] repository type ["+*body.Type+"] does not exist")
	}
	if body.Settings.Location == nil {
		return 500, esError(500, "repository_exception", "["+name+"] missing location")
	}
	location := *body.Settings.Location
	if f.pathRepo == "" {
		return 500, esError(500, "repository_exception", "["+name+"] location ["+location+"] doesn't match any of the locations specified by path.repo because this setting is empty")
	}
	if location != f.pathRepo && !strings.HasPrefix(location, f.pathRepo+"/") {
		return 500, esError(500, "repository_exception", "["+name+"] location ["+location+"] doesn't match any of the locations specified by path.repo")
	}
	f.repos[name] = location
	return 200, map[string]any{"acknowledged": true}
}

type createSnapshotBody struct {
	Indices            json.RawMessage `json:"indices"` // string or array of strings
	IgnoreUnavailable  *bool           `json:"ignore_unavailable"`
	IncludeGlobalState *bool           `json:"include_global_state"`
	Partial            *bool           `json:"partial"`
	ExpandWildcards    *string         `json:"expand_wildcards"`
	FeatureStates      []string        `json:"feature_states"`
	Metadata           map[string]any  `json:"metadata"`
}

// targets reads a multi-target "indices": a comma-separated string or an
// array of strings.
func (f *fakeES) targets(what string, raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.Split(s, ",")
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		f.t.Errorf("%s: indices %s is neither a string nor an array of strings", what, raw)
	}
	return list
}

var snapshotNameRules = regexp.MustCompile(`^[^A-Z_\\/*?"<>|,# ][^A-Z\\/*?"<>|,# ]*$`)

func (f *fakeES) createSnapshot(r *http.Request, b any) (int, any) {
	repo, name := r.PathValue("repository"), r.PathValue("snapshot")
	location, ok := f.repos[repo]
	if !ok {
		return 404, esError(404, "repository_missing_exception", "["+repo+"] missing")
	}
	if !snapshotNameRules.MatchString(name) {
		return 400, esError(400, "invalid_snapshot_name_exception", "["+repo+":"+name+"] Invalid snapshot name ["+name+"], must be lowercase and not contain whitespace or special characters")
	}
	for _, s := range f.volumes[location] {
		if s.name == name {
			return 400, esError(400, "invalid_snapshot_name_exception", "["+repo+":"+name+"] Invalid snapshot name ["+name+"], snapshot with the same name already exists")
		}
	}
	body, _ := b.(*createSnapshotBody)
	if body == nil {
		body = &createSnapshotBody{}
	}
	if len(body.Metadata) > 0 {
		if m, _ := json.Marshal(body.Metadata); len(m) > 1024 {
			return 400, esError(400, "illegal_argument_exception", "metadata must be smaller than 1024 bytes")
		}
	}
	ignoreUnavailable := body.IgnoreUnavailable != nil && *body.IgnoreUnavailable
	var indices []string
	for _, target := range f.targets("create snapshot", body.Indices) {
		if strings.Contains(target, "*") {
			for index, state := range f.indices {
				if state == "open" && glob(target, index) {
					indices = append(indices, index)
				}
			}
			continue
		}
		if _, ok := f.indices[target]; !ok {
			if ignoreUnavailable {
				continue
			}
			return 404, esError(404, "index_not_found_exception", "no such index ["+target+"]")
		}
		indices = append(indices, target)
	}
	// Not the API's rules but this package's: only Monocle's indices,
	// never the cluster's global state.
	if len(body.Indices) == 0 {
		f.t.Errorf("create snapshot: no indices: the whole cluster would be snapshotted")
	}
	if body.IncludeGlobalState == nil || *body.IncludeGlobalState {
		f.t.Errorf("create snapshot: include_global_state is not false")
	}
	slices.Sort(indices)
	indices = slices.Compact(indices)

	snap := &fakeSnapshot{name: name, state: cmp.Or(f.nextState, "SUCCESS"), indices: indices, start: f.clock}
	f.clock = f.clock.Add(time.Minute)
	f.nextState = ""
	f.volumes[location] = append(f.volumes[location], snap)
	info := snap.info()
	if body.IncludeGlobalState == nil || *body.IncludeGlobalState {
		info["include_global_state"] = true
	}
	if body.Metadata != nil {
		info["metadata"] = body.Metadata
	}
	if r.URL.Query().Get("wait_for_completion") != "true" {
		return 200, map[string]any{"accepted": true}
	}
	return 200, map[string]any{"snapshot": info}
}

// info is the snapshot as the create and get snapshot APIs show it.
func (s *fakeSnapshot) info() map[string]any {
	total := len(s.indices)
	failed := 0
	var failures []any
	reason := ""
	switch s.state {
	case "FAILED":
		failed, reason = total, "Indices don't have primary shards [monocle.config]"
	case "PARTIAL":
		failed = min(1, total)
	}
	for _, index := range s.indices[:failed] {
		failures = append(failures, map[string]any{
			"index": index, "index_uuid": "uuid-" + index, "shard_id": 0, "node_id": "node-1",
			"reason": "IndexShardSnapshotFailedException[disk full]", "status": "INTERNAL_SERVER_ERROR",
		})
	}
	end := s.start.Add(3 * time.Second)
	info := map[string]any{
		"snapshot":             s.name,
		"uuid":                 "uuid-" + s.name,
		"version_id":           7172699,
		"version":              "7.17.26",
		"indices":              nonNil(s.indices),
		"data_streams":         []string{},
		"feature_states":       []any{},
		"include_global_state": false,
		"state":                s.state,
		"start_time":           s.start.Format("2006-01-02T15:04:05.000Z"),
		"start_time_in_millis": s.start.UnixMilli(),
		"end_time":             end.Format("2006-01-02T15:04:05.000Z"),
		"end_time_in_millis":   end.UnixMilli(),
		"duration_in_millis":   end.Sub(s.start).Milliseconds(),
		"failures":             nonNil(failures),
		"shards":               map[string]any{"total": total, "failed": failed, "successful": total - failed},
	}
	if reason != "" {
		info["reason"] = reason
	}
	if s.state == "IN_PROGRESS" {
		delete(info, "end_time")
		delete(info, "end_time_in_millis")
		info["duration_in_millis"] = 0
	}
	return info
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func sortedSnapshots(list []*fakeSnapshot) []*fakeSnapshot {
	out := slices.Clone(list)
	slices.SortFunc(out, func(a, b *fakeSnapshot) int {
		return cmp.Or(a.start.Compare(b.start), strings.Compare(a.name, b.name))
	})
	return out
}

// matchSnapshots resolves a snapshot path parameter (names and wildcards,
// comma-separated); a missing plain name is snapshot_missing_exception.
func (f *fakeES) matchSnapshots(repo, location, param string) ([]*fakeSnapshot, map[string]any) {
	var out []*fakeSnapshot
	for _, target := range strings.Split(param, ",") {
		found := false
		for _, s := range f.volumes[location] {
			if target == "_all" || glob(target, s.name) {
				found = true
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
		if !found && !strings.Contains(target, "*") && target != "_all" {
			return nil, esError(404, "snapshot_missing_exception", "["+repo+":"+target+"] is missing")
		}
	}
	return sortedSnapshots(out), nil
}

func (f *fakeES) getSnapshots(r *http.Request, _ any) (int, any) {
	repo := r.PathValue("repository")
	location, ok := f.repos[repo]
	if !ok {
		return 404, esError(404, "repository_missing_exception", "["+repo+"] missing")
	}
	snaps, missing := f.matchSnapshots(repo, location, r.PathValue("snapshot"))
	if missing != nil {
		return 404, missing
	}
	infos := []any{}
	for _, s := range snaps {
		infos = append(infos, s.info())
	}
	return 200, map[string]any{"snapshots": infos, "total": len(infos), "remaining": 0}
}

func (f *fakeES) deleteSnapshots(r *http.Request, _ any) (int, any) {
	repo := r.PathValue("repository")
	location, ok := f.repos[repo]
	if !ok {
		return 404, esError(404, "repository_missing_exception", "["+repo+"] missing")
	}
	snaps, missing := f.matchSnapshots(repo, location, r.PathValue("snapshot"))
	if missing != nil {
		return 404, missing
	}
	f.volumes[location] = slices.DeleteFunc(f.volumes[location], func(s *fakeSnapshot) bool { return slices.Contains(snaps, s) })
	return 200, map[string]any{"acknowledged": true}
}

type restoreBody struct {
	Indices             json.RawMessage `json:"indices"`
	IgnoreUnavailable   *bool           `json:"ignore_unavailable"`
	IgnoreIndexSettings json.RawMessage `json:"ignore_index_settings"`
	IncludeAliases      *bool           `json:"include_aliases"`
	IncludeGlobalState  *bool           `json:"include_global_state"`
	FeatureStates       []string        `json:"feature_states"`
	IndexSettings       map[string]any  `json:"index_settings"`
	Partial             *bool           `json:"partial"`
	RenamePattern       *string         `json:"rename_pattern"`
	RenameReplacement   *string         `json:"rename_replacement"`
}

func (f *fakeES) restoreSnapshot(r *http.Request, b any) (int, any) {
	repo, name := r.PathValue("repository"), r.PathValue("snapshot")
	location, ok := f.repos[repo]
	if !ok {
		return 404, esError(404, "repository_missing_exception", "["+repo+"] missing")
	}
	snaps, missing := f.matchSnapshots(repo, location, name)
	if missing != nil {
		return 404, missing
	}
	snap := snaps[0]
	prefix := "[" + repo + ":" + name + "/uuid-" + name + "] "
	if snap.state != "SUCCESS" && snap.state != "PARTIAL" {
		return 500, esError(500, "snapshot_restore_exception", prefix+"cannot restore, unsupported snapshot state ["+snap.state+"]")
	}
	body, _ := b.(*restoreBody)
	if body == nil {
		body = &restoreBody{}
	}
	if snap.state == "PARTIAL" && (body.Partial == nil || !*body.Partial) {
		return 500, esError(500, "snapshot_restore_exception", prefix+"index [x] wasn't fully snapshotted - cannot restore")
	}
	if body.IncludeGlobalState != nil && *body.IncludeGlobalState {
		f.t.Errorf("restore: include_global_state true would replace the cluster's settings and templates")
	}
	var indices []string
	for _, target := range f.targets("restore", body.Indices) {
		matched := false
		for _, index := range snap.indices {
			if glob(target, index) {
				matched = true
				indices = append(indices, index)
			}
		}
		if !matched && !strings.Contains(target, "*") && (body.IgnoreUnavailable == nil || !*body.IgnoreUnavailable) {
			return 404, esError(404, "index_not_found_exception", "no such index ["+target+"]")
		}
	}
	if len(body.Indices) == 0 {
		indices = snap.indices
	}
	slices.Sort(indices)
	indices = slices.Compact(indices)
	for _, index := range indices {
		if f.indices[index] == "open" {
			return 500, esError(500, "snapshot_restore_exception", prefix+"cannot restore index ["+index+"] because an open index with same name already exists in the cluster. Either close or delete the existing index or restore the index under a different name by providing a rename pattern and replacement name")
		}
	}
	failed := min(f.restoreFailed, len(indices))
	f.restoreFailed = 0
	for _, index := range indices {
		f.indices[index] = "open"
	}
	if r.URL.Query().Get("wait_for_completion") != "true" {
		return 200, map[string]any{"accepted": true}
	}
	return 200, map[string]any{"snapshot": map[string]any{
		"snapshot": name,
		"indices":  indices,
		"shards":   map[string]any{"total": len(indices), "failed": failed, "successful": len(indices) - failed},
	}}
}

// resolveIndices resolves an index path parameter; a missing plain name is
// index_not_found_exception.
func (f *fakeES) resolveIndices(param string, states ...string) ([]string, map[string]any) {
	var out []string
	for _, target := range strings.Split(param, ",") {
		if !strings.Contains(target, "*") {
			if _, ok := f.indices[target]; !ok {
				return nil, esError(404, "index_not_found_exception", "no such index ["+target+"]")
			}
			out = append(out, target)
			continue
		}
		for index, state := range f.indices {
			if glob(target, index) && slices.Contains(states, state) {
				out = append(out, index)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func (f *fakeES) closeIndex(r *http.Request, _ any) (int, any) {
	indices, missing := f.resolveIndices(r.PathValue("index"), "open")
	if missing != nil {
		return 404, missing
	}
	closed := map[string]any{}
	for _, index := range indices {
		f.indices[index] = "close"
		closed[index] = map[string]any{"closed": true}
	}
	return 200, map[string]any{"acknowledged": true, "shards_acknowledged": true, "indices": closed}
}

func (f *fakeES) catIndices(r *http.Request, _ any) (int, any) {
	q := r.URL.Query()
	if q.Get("format") != "json" || q.Get("h") != "index,status" {
		f.t.Errorf("cat indices: the fake answers only format=json&h=index,status, got %s", r.URL.RawQuery)
	}
	states := []string{"open"}
	if q.Get("expand_wildcards") == "all" {
		states = append(states, "close")
	}
	indices, missing := f.resolveIndices(r.PathValue("index"), states...)
	if missing != nil {
		return 404, missing
	}
	rows := []any{}
	for _, index := range indices {
		rows = append(rows, map[string]any{"index": index, "status": f.indices[index]})
	}
	return 200, rows
}

func (f *fakeES) clusterHealth(r *http.Request, _ any) (int, any) {
	if _, missing := f.resolveIndices(r.PathValue("index"), "open", "close"); missing != nil {
		return 404, missing
	}
	status := cmp.Or(f.health, "green")
	wanted := r.URL.Query().Get("wait_for_status")
	rank := map[string]int{"red": 0, "yellow": 1, "green": 2}
	timedOut := wanted != "" && rank[status] < rank[wanted]
	answer := map[string]any{
		"cluster_name": "docker-cluster", "status": status, "timed_out": timedOut,
		"number_of_nodes": 1, "number_of_data_nodes": 1, "active_primary_shards": 2, "active_shards": 2,
		"relocating_shards": 0, "initializing_shards": 0, "unassigned_shards": 0, "delayed_unassigned_shards": 0,
		"number_of_pending_tasks": 0, "number_of_in_flight_fetch": 0, "task_max_waiting_in_queue_millis": 0,
		"active_shards_percent_as_number": 100.0,
	}
	if timedOut {
		// The health API answers 408 when its wait times out.
		return 408, answer
	}
	return 200, answer
}

// glob matches Elasticsearch's simple wildcards: '*' only.
func glob(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, parts[len(parts)-1])
}
