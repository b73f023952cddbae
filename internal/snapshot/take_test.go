package snapshot

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// testNow names the snapshot a test run takes.
var testNow = time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)

const newSnapshot = "monocle-20261130-091500"

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testOptions(keep int) Options {
	return Options{
		Repository: "monocle", Location: DefaultLocation, Prefix: "monocle", Keep: keep,
		Now: func() time.Time { return testNow }, Log: quiet(),
	}
}

// withMonocle gives the fake a Monocle's indices (two workspaces) and an
// index that is not Monocle's.
func withMonocle(f *fakeES) {
	f.indices = map[string]string{
		"monocle.config": "open", "monocle.changes.1.demo": "open", "monocle.changes.1.zuul": "open",
		"kibana_sample_data": "open",
	}
}

// registered has the repository registered at the default location.
func registered(f *fakeES) { f.repos["monocle"] = DefaultLocation }

// past is a snapshot that started hoursAgo hours before the fake's clock.
func past(name, state string, hoursAgo int) *fakeSnapshot {
	return &fakeSnapshot{name: name, state: state, indices: []string{"monocle.config"}, start: fakeStart.Add(-time.Duration(hoursAgo) * time.Hour)}
}

func TestTake(t *testing.T) {
	const (
		getRepo  = "GET /_snapshot/monocle"
		putRepo  = "PUT /_snapshot/monocle"
		create   = "PUT /_snapshot/monocle/" + newSnapshot + "?wait_for_completion=true"
		list     = "GET /_snapshot/monocle/monocle-*"
		tookOnly = "" // marker: no retention deletes
	)
	tests := map[string]struct {
		setup   func(f *fakeES)
		options func(o *Options)
		timeout time.Duration // of the run's context; 0 for none
		// wantErr is a substring of the error; "" for success.
		wantErr      string
		wantDeadline bool
		wantRequests []string
		// wantSnapshots is what the repository's location holds after.
		wantSnapshots []string
		// wantIndices are those of the new snapshot.
		wantIndices []string
	}{
		"repository missing: registered, then the snapshot taken": {
			setup:         withMonocle,
			wantRequests:  []string{getRepo, putRepo, create, list},
			wantSnapshots: []string{newSnapshot},
			wantIndices:   []string{"monocle.changes.1.demo", "monocle.changes.1.zuul", "monocle.config"},
		},
		"repository registered: used as it is": {
			setup:         func(f *fakeES) { withMonocle(f); registered(f) },
			wantRequests:  []string{getRepo, create, list},
			wantSnapshots: []string{newSnapshot},
			wantIndices:   []string{"monocle.changes.1.demo", "monocle.changes.1.zuul", "monocle.config"},
		},
		"a name given (kubectl monocle backup): taken under it": {
			setup:         func(f *fakeES) { withMonocle(f); registered(f) },
			options:       func(o *Options) { o.Name = "monocle-20261201-000000" },
			wantRequests:  []string{getRepo, list, "PUT /_snapshot/monocle/monocle-20261201-000000?wait_for_completion=true", list},
			wantSnapshots: []string{"monocle-20261201-000000"},
			wantIndices:   []string{"monocle.changes.1.demo", "monocle.changes.1.zuul", "monocle.config"},
		},
		"a name given that succeeded (the Job's next attempt): kept, not taken again": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				f.seed(DefaultLocation, past("monocle-20261201-000000", "SUCCESS", 1))
			},
			options:       func(o *Options) { o.Name = "monocle-20261201-000000" },
			wantRequests:  []string{getRepo, list, list},
			wantSnapshots: []string{"monocle-20261201-000000"},
		},
		"a name given that failed (an earlier attempt's): deleted, taken again": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				f.seed(DefaultLocation, past("monocle-20261201-000000", "FAILED", 1))
			},
			options:       func(o *Options) { o.Name = "monocle-20261201-000000" },
			wantRequests:  []string{getRepo, list, "DELETE /_snapshot/monocle/monocle-20261201-000000", "PUT /_snapshot/monocle/monocle-20261201-000000?wait_for_completion=true", list},
			wantSnapshots: []string{"monocle-20261201-000000"},
			wantIndices:   []string{"monocle.changes.1.demo", "monocle.changes.1.zuul", "monocle.config"},
		},
		"a name retention would never delete: refused before any request": {
			setup:   withMonocle,
			options: func(o *Options) { o.Name = "before-upgrade" },
			wantErr: `name "before-upgrade" is not monocle-YYYYMMDD-HHMMSS`,
		},
		"a Monocle without workspaces yet: the config index alone": {
			setup: func(f *fakeES) {
				registered(f)
				f.indices = map[string]string{"monocle.config": "open"}
			},
			wantRequests:  []string{getRepo, create, list},
			wantSnapshots: []string{newSnapshot},
			wantIndices:   []string{"monocle.config"},
		},
		"repository registered elsewhere: not touched, no snapshot": {
			setup:         func(f *fakeES) { withMonocle(f); f.repos["monocle"] = PathRepo + "/other" },
			wantErr:       `repository monocle is registered as type "fs" at "` + PathRepo + `/other"`,
			wantRequests:  []string{getRepo},
			wantSnapshots: nil,
		},
		"no path.repo on the node: the registration's error": {
			setup:        func(f *fakeES) { withMonocle(f); f.pathRepo = "" },
			wantErr:      "registering repository monocle at " + DefaultLocation + ": PUT /_snapshot/monocle: 500 repository_exception: [monocle] location [" + DefaultLocation + "] doesn't match any of the locations specified by path.repo because this setting is empty",
			wantRequests: []string{getRepo, putRepo},
		},
		"config index missing (the API never started): index_not_found_exception": {
			setup: func(f *fakeES) {
				registered(f)
				f.indices = map[string]string{"monocle.changes.1.demo": "open"}
			},
			wantErr:      "404 index_not_found_exception: no such index [monocle.config]",
			wantRequests: []string{getRepo, create},
		},
		"snapshot FAILED: an error, and retention deletes nothing": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				f.seed(DefaultLocation, past("monocle-20261129-091500", "SUCCESS", 24))
				f.nextState = "FAILED"
			},
			options:       func(o *Options) { o.Keep = 1 },
			wantErr:       "snapshot " + newSnapshot + " is FAILED: Indices don't have primary shards [monocle.config] (3 of 3 shards failed",
			wantRequests:  []string{getRepo, create},
			wantSnapshots: []string{"monocle-20261129-091500", newSnapshot},
		},
		"snapshot PARTIAL: an error naming the failed shard": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				f.seed(DefaultLocation, past("monocle-20261129-091500", "SUCCESS", 24))
				f.nextState = "PARTIAL"
			},
			options:       func(o *Options) { o.Keep = 1 },
			wantErr:       "snapshot " + newSnapshot + " is PARTIAL (1 of 3 shards failed; [monocle.changes.1.demo][0] IndexShardSnapshotFailedException[disk full])",
			wantRequests:  []string{getRepo, create},
			wantSnapshots: []string{"monocle-20261129-091500", newSnapshot},
		},
		"snapshot INCOMPATIBLE: an error": {
			setup:         func(f *fakeES) { withMonocle(f); registered(f); f.nextState = "INCOMPATIBLE" },
			wantErr:       "snapshot " + newSnapshot + " is INCOMPATIBLE",
			wantRequests:  []string{getRepo, create},
			wantSnapshots: []string{newSnapshot},
		},
		"two runs in the same second: the second is refused": {
			setup: func(f *fakeES) {
				withMonocle(f)
				registered(f)
				f.seed(DefaultLocation, past(newSnapshot, "SUCCESS", 0))
			},
			wantErr:       "400 invalid_snapshot_name_exception: [monocle:" + newSnapshot + "] Invalid snapshot name [" + newSnapshot + "], snapshot with the same name already exists",
			wantRequests:  []string{getRepo, create},
			wantSnapshots: []string{newSnapshot},
		},
		"timeout: the snapshot outlasts the run's timeout": {
			setup:        func(f *fakeES) { withMonocle(f); registered(f); f.hang["create snapshot"] = true },
			timeout:      300 * time.Millisecond,
			wantDeadline: true,
			wantRequests: []string{getRepo, create},
		},
		"timeout: Elasticsearch does not answer the repository check": {
			setup:        func(f *fakeES) { withMonocle(f); f.hang["get repository"] = true },
			wantDeadline: true,
			wantRequests: []string{getRepo},
		},
		"timeout: the listing for retention hangs after a good snapshot": {
			setup:         func(f *fakeES) { withMonocle(f); registered(f); f.hang["get snapshot"] = true },
			wantDeadline:  true,
			wantRequests:  []string{getRepo, create, list},
			wantSnapshots: []string{newSnapshot},
		},
		"keep 0 is refused before any request": {
			setup:   withMonocle,
			options: func(o *Options) { o.Keep = 0 },
			wantErr: "keep is 0: at least 1",
		},
		"a prefix Elasticsearch would refuse is refused first": {
			setup:   withMonocle,
			options: func(o *Options) { o.Prefix = "Monocle" },
			wantErr: `prefix "Monocle": only lowercase letters`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFakeES(t)
			tc.setup(f)
			o := testOptions(3)
			if tc.options != nil {
				tc.options(&o)
			}
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			client := f.client()
			client.callTimeout = 300 * time.Millisecond
			if tc.timeout > 0 {
				client.callTimeout = time.Minute // the run's timeout is what ends it
			}

			result, err := Take(ctx, client, o)

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
					t.Fatalf("Take: %v", err)
				}
				if want := cmp.Or(o.Name, newSnapshot); result.Snapshot != want {
					t.Errorf("took %q, want %q", result.Snapshot, want)
				}
			}
			if got := f.requestLog(); !slices.Equal(got, tc.wantRequests) {
				t.Errorf("requests:\n got %q\nwant %q", got, tc.wantRequests)
			}
			if got := f.snapshotNames(DefaultLocation); !slices.Equal(got, tc.wantSnapshots) {
				t.Errorf("snapshots after: %q, want %q", got, tc.wantSnapshots)
			}
			if tc.wantIndices != nil {
				f.mu.Lock()
				got := f.volumes[DefaultLocation][len(f.volumes[DefaultLocation])-1].indices
				f.mu.Unlock()
				if !slices.Equal(got, tc.wantIndices) {
					t.Errorf("snapshot holds %q, want %q (never another's index)", got, tc.wantIndices)
				}
			}
			if tc.wantErr == "" && !tc.wantDeadline && f.repos["monocle"] != DefaultLocation {
				t.Errorf("repository at %q after a good run", f.repos["monocle"])
			}
		})
	}
}

// Retention keeps the newest Keep successful snapshots of ours and deletes,
// oldest first, every one of ours that started before the Keep-th newest
// success; never another name, never one in progress.
func TestRetention(t *testing.T) {
	tests := map[string]struct {
		seeds       []*fakeSnapshot
		keep        int
		wantDeleted []string // in the order of the DELETE requests
	}{
		"deletes exactly the oldest beyond keep, oldest first": {
			seeds: []*fakeSnapshot{
				past("monocle-20261130-051500", "SUCCESS", 4),
				past("monocle-20261130-061500", "SUCCESS", 3),
				past("monocle-20261130-071500", "SUCCESS", 2),
				past("monocle-20261130-081500", "SUCCESS", 1),
			},
			keep:        3,
			wantDeleted: []string{"monocle-20261130-051500", "monocle-20261130-061500"},
		},
		"as many as keep: nothing deleted": {
			seeds: []*fakeSnapshot{
				past("monocle-20261130-071500", "SUCCESS", 2),
				past("monocle-20261130-081500", "SUCCESS", 1),
			},
			keep: 3,
		},
		"keep 1: only the new snapshot stays": {
			seeds:       []*fakeSnapshot{past("monocle-20261130-081500", "SUCCESS", 1)},
			keep:        1,
			wantDeleted: []string{"monocle-20261130-081500"},
		},
		"never a name without our prefix or not of our format": {
			seeds: []*fakeSnapshot{
				past("monocle-before-upgrade", "SUCCESS", 900),
				past("monocle-20250101-000000-manual", "SUCCESS", 800),
				past("monocle-2025-01-01", "SUCCESS", 700),
				past("monocle-20251301-000000", "SUCCESS", 650), // month 13: not a time Name makes
				past("monocle2-20250101-000000", "SUCCESS", 600),
				past("monoclex-20250101-000000", "SUCCESS", 500),
				past("other-20250101-000000", "SUCCESS", 400),
				past("monocle-20261130-071500", "SUCCESS", 2),
				past("monocle-20261130-081500", "SUCCESS", 1),
			},
			keep:        1,
			wantDeleted: []string{"monocle-20261130-071500", "monocle-20261130-081500"},
		},
		"failed runs never push a good snapshot out": {
			seeds: []*fakeSnapshot{
				past("monocle-20261130-051500", "SUCCESS", 4),
				past("monocle-20261130-061500", "SUCCESS", 3),
				past("monocle-20261130-071500", "FAILED", 2),
				past("monocle-20261130-081500", "PARTIAL", 1),
			},
			keep: 2,
			// Kept: the new one and 06:15, with the failures after it.
			wantDeleted: []string{"monocle-20261130-051500"},
		},
		"a failed snapshot older than the keep-th success is deleted": {
			seeds: []*fakeSnapshot{
				past("monocle-20261130-051500", "FAILED", 4),
				past("monocle-20261130-061500", "INCOMPATIBLE", 3),
				past("monocle-20261130-081500", "SUCCESS", 1),
			},
			keep:        2,
			wantDeleted: []string{"monocle-20261130-051500", "monocle-20261130-061500"},
		},
		"fewer successes than keep: nothing deleted, failures included": {
			seeds: []*fakeSnapshot{
				past("monocle-20261130-061500", "FAILED", 3),
				past("monocle-20261130-081500", "SUCCESS", 1),
			},
			keep: 3,
		},
		"one in progress is never deleted (that would abort it)": {
			seeds: []*fakeSnapshot{
				past("monocle-20261130-051500", "IN_PROGRESS", 4),
				past("monocle-20261130-081500", "SUCCESS", 1),
			},
			keep:        1,
			wantDeleted: []string{"monocle-20261130-081500"},
		},
		"start time orders, not the name (a clock that was wrong)": {
			seeds: []*fakeSnapshot{
				past("monocle-20990101-000000", "SUCCESS", 3),
				past("monocle-20000101-000000", "SUCCESS", 2),
			},
			keep:        2,
			wantDeleted: []string{"monocle-20990101-000000"},
		},
		"equal start times: the name breaks the tie": {
			seeds: []*fakeSnapshot{
				past("monocle-20261130-081501", "SUCCESS", 1),
				past("monocle-20261130-081500", "SUCCESS", 1),
			},
			keep:        2,
			wantDeleted: []string{"monocle-20261130-081500"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFakeES(t)
			withMonocle(f)
			registered(f)
			f.seed(DefaultLocation, tc.seeds...)
			result, err := Take(context.Background(), f.client(), testOptions(tc.keep))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(result.Deleted, tc.wantDeleted) {
				t.Errorf("deleted %q, want %q", result.Deleted, tc.wantDeleted)
			}
			var deletes []string
			for _, r := range f.requestLog() {
				if name, ok := strings.CutPrefix(r, "DELETE /_snapshot/monocle/"); ok {
					deletes = append(deletes, name)
				}
			}
			if !slices.Equal(deletes, tc.wantDeleted) {
				t.Errorf("DELETE requests for %q, want %q", deletes, tc.wantDeleted)
			}
			want := []string{newSnapshot}
			for _, s := range tc.seeds {
				if !slices.Contains(tc.wantDeleted, s.name) {
					want = append(want, s.name)
				}
			}
			got := f.snapshotNames(DefaultLocation)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("repository holds %q, want %q", got, want)
			}
		})
	}
}

func TestNameAndOurs(t *testing.T) {
	// A zone other than UTC: the name is UTC all the same.
	paris := time.FixedZone("CET", 3600)
	name := Name("monocle", time.Date(2026, 11, 30, 10, 15, 0, 0, paris))
	if name != "monocle-20261130-091500" {
		t.Errorf("Name = %q", name)
	}
	tests := map[string]struct {
		prefix, name string
		want         bool
	}{
		"ours":                 {"monocle", "monocle-20261130-091500", true},
		"another prefix":       {"monocle", "other-20261130-091500", false},
		"our prefix extended":  {"monocle", "monocle2-20261130-091500", false},
		"a suffix":             {"monocle", "monocle-20261130-091500-x", false},
		"not a time":           {"monocle", "monocle-before-upgrade", false},
		"an invalid time":      {"monocle", "monocle-20261130-256000", false},
		"a prefix with a dash": {"nightly-es", "nightly-es-20261130-091500", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ours(tc.prefix, tc.name); got != tc.want {
				t.Errorf("ours(%q, %q) = %t", tc.prefix, tc.name, got)
			}
		})
	}
}

// CheckWritten takes what the snapshot command writes (a --prefix it
// takes, and Name's stamp) and nothing else, before any Job is made of it.
func TestCheckWritten(t *testing.T) {
	for name, want := range map[string]string{
		"monocle-20261130-091500":    "monocle",
		"nightly-es-20261130-091500": "nightly-es",
		"a-20261130-091500":          "a",
	} {
		if prefix, err := CheckWritten(name); err != nil || prefix != want {
			t.Errorf("CheckWritten(%q) = %q, %v; want %q", name, prefix, err, want)
		}
	}
	for _, bad := range []string{
		"", "monocle", "monocle-before-upgrade", "-20261130-091500", "20261130-091500",
		"monocle-20261130-256000", "monocle-20261130-091500-x", "Monocle-20261130-091500",
		"_x-20261130-091500", "a b-20261130-091500", "../x-20261130-091500",
		"\x1b]0;t\a-20261130-091500", "m\u202e-20261130-091500", strings.Repeat("m", 190) + "-20261130-091500",
	} {
		if _, err := CheckWritten(bad); err == nil || !printable.Clean(err.Error()) {
			t.Errorf("CheckWritten(%q): %v", bad, err)
		}
	}
}
