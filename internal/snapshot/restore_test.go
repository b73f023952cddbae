package snapshot

import (
	"context"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

const restored = "monocle-20261129-091500"

// holding seeds the default location with the snapshot restored, in state,
// holding indices.
func holding(f *fakeES, state string, indices ...string) {
	f.seed(DefaultLocation, &fakeSnapshot{name: restored, state: state, indices: indices, start: fakeStart.Add(-24 * time.Hour)})
}

func TestRestore(t *testing.T) {
	const (
		getRepo  = "GET /_snapshot/monocle"
		putRepo  = "PUT /_snapshot/monocle"
		getSnap  = "GET /_snapshot/monocle/" + restored
		cat      = "GET /_cat/indices/monocle.*?expand_wildcards=all&format=json&h=index%2Cstatus"
		restore  = "POST /_snapshot/monocle/" + restored + "/_restore?wait_for_completion=true"
		health   = "GET /_cluster/health/monocle.changes.1.demo,monocle.config?timeout=Ns&wait_for_status=yellow"
		closeTwo = "POST /monocle.changes.1.demo,monocle.config/_close"
	)
	tests := map[string]struct {
		setup        func(f *fakeES)
		timeout      time.Duration
		wantErr      string
		wantDeadline bool
		wantResult   RestoreResult
		wantRequests []string
		wantIndices  map[string]string // the cluster's indices after
	}{
		"in place: Monocle's open indices closed, restored, active; the rest untouched": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				holding(f, "SUCCESS", "monocle.config", "monocle.changes.1.demo", "kibana_sample_data")
			},
			wantResult: RestoreResult{
				Restored:  []string{"monocle.changes.1.demo", "monocle.config"},
				Closed:    []string{"monocle.changes.1.demo", "monocle.config"},
				Untouched: []string{"monocle.changes.1.zuul"},
			},
			wantRequests: []string{getRepo, getSnap, cat, closeTwo, restore, health},
			wantIndices: map[string]string{
				"monocle.config": "open", "monocle.changes.1.demo": "open", "monocle.changes.1.zuul": "open",
				"kibana_sample_data": "open",
			},
		},
		"a new Elasticsearch on the old volume: repository registered, indices created": {
			setup: func(f *fakeES) { holding(f, "SUCCESS", "monocle.config", "monocle.changes.1.demo") },
			wantResult: RestoreResult{
				Restored: []string{"monocle.changes.1.demo", "monocle.config"},
			},
			wantRequests: []string{getRepo, putRepo, getSnap, cat, restore, health},
			wantIndices:  map[string]string{"monocle.config": "open", "monocle.changes.1.demo": "open"},
		},
		"an index left closed by a failed restore: restored, not closed again": {
			setup: func(f *fakeES) {
				registered(f)
				f.indices = map[string]string{"monocle.config": "close", "monocle.changes.1.demo": "open"}
				holding(f, "SUCCESS", "monocle.config", "monocle.changes.1.demo")
			},
			wantResult: RestoreResult{
				Restored: []string{"monocle.changes.1.demo", "monocle.config"},
				Closed:   []string{"monocle.changes.1.demo"},
			},
			wantRequests: []string{getRepo, getSnap, cat, "POST /monocle.changes.1.demo/_close", restore, health},
			wantIndices:  map[string]string{"monocle.config": "open", "monocle.changes.1.demo": "open"},
		},
		"FAILED snapshot: refused, nothing closed": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				holding(f, "FAILED", "monocle.config", "monocle.changes.1.demo")
			},
			wantErr:      "not restoring: snapshot " + restored + " is FAILED",
			wantRequests: []string{getRepo, getSnap},
		},
		"PARTIAL snapshot: refused, nothing closed": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				holding(f, "PARTIAL", "monocle.config", "monocle.changes.1.demo")
			},
			wantErr:      "not restoring: snapshot " + restored + " is PARTIAL (1 of 2 shards failed",
			wantRequests: []string{getRepo, getSnap},
		},
		"snapshot missing: snapshot_missing_exception": {
			setup:        func(f *fakeES) { withMonocle(f); registered(f) },
			wantErr:      "snapshot " + restored + ": GET /_snapshot/monocle/" + restored + ": 404 snapshot_missing_exception: [monocle:" + restored + "] is missing",
			wantRequests: []string{getRepo, getSnap},
		},
		"a snapshot of no Monocle index: refused": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				holding(f, "SUCCESS", "kibana_sample_data", "monocle.changes.1.")
			},
			wantErr:      "snapshot " + restored + " holds no Monocle index",
			wantRequests: []string{getRepo, getSnap},
		},
		"repository registered elsewhere: refused, nothing closed": {
			setup: func(f *fakeES) {
				withMonocle(f)
				f.repos["monocle"] = PathRepo + "/other"
			},
			wantErr:      "repository monocle is registered as type",
			wantRequests: []string{getRepo},
		},
		"shards fail to restore: an error": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				holding(f, "SUCCESS", "monocle.config", "monocle.changes.1.demo")
				f.restoreFailed = 1
			},
			wantErr:      "restoring " + restored + " (closed indices stay closed until restored or reopened): 1 of 2 shards failed to restore",
			wantRequests: []string{getRepo, getSnap, cat, closeTwo, restore},
		},
		"the restored indices never become active: Elasticsearch's 408": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				holding(f, "SUCCESS", "monocle.config", "monocle.changes.1.demo")
				f.health = "red"
			},
			wantErr:      "waiting for the restored indices: GET /_cluster/health/monocle.changes.1.demo,monocle.config: 408",
			wantRequests: []string{getRepo, getSnap, cat, closeTwo, restore, health},
		},
		"timeout: the restore outlasts the run's timeout": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				holding(f, "SUCCESS", "monocle.config", "monocle.changes.1.demo")
				f.hang["restore snapshot"] = true
			},
			timeout:      300 * time.Millisecond,
			wantDeadline: true,
			wantRequests: []string{getRepo, getSnap, cat, closeTwo, restore},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFakeES(t)
			tc.setup(f)
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}

			result, err := Restore(ctx, f.client(), RestoreOptions{
				Repository: "monocle", Location: DefaultLocation, Snapshot: restored, Log: quiet(),
			})

			switch {
			case tc.wantDeadline:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err = %v, want a deadline exceeded", err)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v\nwant it to contain %s", err, tc.wantErr)
				}
			default:
				if err != nil {
					t.Fatalf("Restore: %v", err)
				}
				if !slices.Equal(result.Restored, tc.wantResult.Restored) || !slices.Equal(result.Closed, tc.wantResult.Closed) ||
					!slices.Equal(result.Untouched, tc.wantResult.Untouched) {
					t.Errorf("result %+v, want %+v", result, tc.wantResult)
				}
			}
			// The health wait's timeout is what is left of the run's.
			got := f.requestLog()
			for i, r := range got {
				got[i] = regexp.MustCompile(`timeout=[0-9]+s`).ReplaceAllString(r, "timeout=Ns")
			}
			if !slices.Equal(got, tc.wantRequests) {
				t.Errorf("requests:\n got %q\nwant %q", got, tc.wantRequests)
			}
			if tc.wantIndices != nil {
				f.mu.Lock()
				got := maps.Clone(f.indices)
				f.mu.Unlock()
				if !maps.Equal(got, tc.wantIndices) {
					t.Errorf("indices after: %v, want %v", got, tc.wantIndices)
				}
			}
		})
	}
}
