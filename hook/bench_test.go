package hook

// Benchmarks of the hook's hot path. None asserts a time: they are run by
// hand (make bench, or the commands in BENCHMARKS.md) and their figures are
// read as ratios, since the machines they run on are shared and noisy.
//
//	BenchmarkSync/<fixture>              Sync alone, on an already decoded request
//	BenchmarkDecode/<fixture>            json.Unmarshal of the body into SyncRequest
//	BenchmarkEncode/<fixture>            json.Marshal of Sync's answer
//	BenchmarkDecodeSyncEncode/<fixture>  the three, as /sync does them
//	BenchmarkLastApplied                 the last-applied path on 100 observed children
//
// The handler's own (BenchmarkHTTP, BenchmarkFloor, BenchmarkRequestHeap)
// are hook/server's.
//
// <fixture> is every recorded sync request in testdata/metacontroller, plus
// "large-100-children" (the all-ready request grown to 100 children) and
// "large-100-children-invalid-spec" (the same with a spec the hook cannot
// honour, so that every child takes the last-applied path).

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/change-metrics/monocle-hook/hook/applied"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// benchBodies are the request bodies every benchmark runs on
// (testbodies.Bench).
func benchBodies(t testing.TB) []testbodies.Named {
	t.Helper()
	bodies, err := testbodies.Bench("testdata/metacontroller")
	if err != nil {
		t.Fatal(err)
	}
	return bodies
}

// largeRequest is the all-ready request grown to total children
// (testbodies.WithChildren).
func largeRequest(b testing.TB, total int, invalidSpec bool) []byte {
	b.Helper()
	body, err := testbodies.WithChildren(readFixture(b, "sync-v1-all-ready-job-complete"), total, invalidSpec)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

var writeLarge = flag.String("write-large", "", "TestLargeRequest writes the large request here, e.g. for tools/loadtest -body")

// TestLargeRequest checks what the large benchmarks measure: 100 observed
// children, the usual answer for the valid spec, every child for the
// invalid one.
func TestLargeRequest(t *testing.T) {
	for _, invalid := range []bool{false, true} {
		body := largeRequest(t, 100, invalid)
		req := decodeRequest(t, body)
		c := req.Children
		observed := len(c.Secrets) + len(c.ConfigMaps) + len(c.Services) + len(c.StatefulSets) + len(c.Deployments) + len(c.Jobs)
		if observed != 100 {
			t.Errorf("invalid=%v: %d observed children, want 100", invalid, observed)
		}
		a := decodeAnswer(t, syncJSON(t, req))
		want := 10 // with N-elastic, Elasticsearch's users and NetworkPolicy
		if invalid {
			want = 100
		}
		if len(a.Children) != want {
			t.Errorf("invalid=%v: %d children answered, want %d", invalid, len(a.Children), want)
		}
		names := a.names()
		for i := 1; i < len(names); i++ {
			if names[i] == names[i-1] {
				t.Errorf("invalid=%v: %s answered twice", invalid, names[i])
			}
		}
		t.Logf("invalid=%v: request %d bytes, answer %d children", invalid, len(body), len(a.Children))
		if *writeLarge != "" && !invalid {
			if err := os.WriteFile(*writeLarge, body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func BenchmarkSync(b *testing.B) {
	for _, f := range benchBodies(b) {
		req := decodeRequest(b, f.Body)
		env := testEnv()
		b.Run(f.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sync(req, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, f := range benchBodies(b) {
		b.Run(f.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(f.Body)))
			for b.Loop() {
				var req wire.SyncRequest
				if err := json.Unmarshal(f.Body, &req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, f := range benchBodies(b) {
		resp, err := Sync(decodeRequest(b, f.Body), testEnv())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeSyncEncode(b *testing.B) {
	for _, f := range benchBodies(b) {
		env := testEnv()
		b.Run(f.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(f.Body)))
			for b.Loop() {
				var req wire.SyncRequest
				if err := json.Unmarshal(f.Body, &req); err != nil {
					b.Fatal(err)
				}
				resp, err := Sync(&req, env)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLastApplied is the invalid-spec path on the large request's 100
// observed children.
func BenchmarkLastApplied(b *testing.B) {
	objs := wire.Observe(decodeRequest(b, largeRequest(b, 100, true)).Children, "").All()
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range objs {
			if _, err := applied.Child(c.Object, c.Type); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// A Monocle as the hook leaves it (converged, Elasticsearch's users
// observed): what most syncs are. The recorded fixtures above predate the
// Secret N-elastic, so each of their syncs makes its three password hashes
// (internal/elasticusers.BenchmarkHash): the first sync of a Monocle.
func BenchmarkSyncConverged(b *testing.B) {
	req := converged(b).request(b)
	env := testEnv()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sync(req, env); err != nil {
			b.Fatal(err)
		}
	}
}
