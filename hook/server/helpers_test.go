package server

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/wire"
)

// testEnv fixes the clock, the random source and the hook's image, as the
// hook's own tests do: same input, same bytes.
func testEnv() hook.Env {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return hook.Env{Now: func() time.Time { return now }, Rand: rand.NewChaCha8([32]byte{42}), Image: "ghcr.io/change-metrics/monocle-hook:v0.0.0-test"}
}

// fixtures are the sync requests recorded from a real Metacontroller, which
// the hook's tests hold.
const fixtures = "../testdata/metacontroller"

func fixtureNames(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(fixtures, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var names []string
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".json"); !strings.HasPrefix(name, "customize") {
			names = append(names, name)
		}
	}
	return names
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fixture(t testing.TB, name string) *wire.SyncRequest {
	t.Helper()
	var req wire.SyncRequest
	if err := json.Unmarshal(readFixture(t, name), &req); err != nil {
		t.Fatal(err)
	}
	return &req
}

// syncJSON is Sync's answer, encoded as the server encodes it.
func syncJSON(t testing.TB, req *wire.SyncRequest) []byte {
	t.Helper()
	resp, err := hook.Sync(req, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// child is the answered child of that kind and name, decoded.
func child(t testing.TB, body, kind, name string) map[string]any {
	t.Helper()
	var a struct{ Children []map[string]any }
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatal(err)
	}
	for _, c := range a.Children {
		if md, _ := c["metadata"].(map[string]any); c["kind"] == kind && md["name"] == name {
			return c
		}
	}
	t.Fatalf("no %s %s answered", kind, name)
	return nil
}
