package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// The largest Monocle the CRD admits (every list and map at its bound),
// converged, is answered by a hook with the default budget: its cost (the
// body's buffer and decodeCost per byte, valueCost per JSON value, and
// syncCost: its config's parse) fits DefaultMemoryBudget, or Metacontroller
// could never sync it (413). A bound added to the CRD, or a child that
// grows, pays here first. The real API server's objects carry more
// (managedFields: more JSON values), so e2e/largest_test.go, which
// converges it there, is the stricter test: it refused 4 peers that pass
// here (BENCHMARKS.md).
func TestLargestMonocleFitsTheBudget(t *testing.T) {
	crd, err := os.ReadFile("../../crd/monocle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, err := testbodies.LargestRequest(crd, func(b []byte) ([]byte, error) {
		var req wire.SyncRequest
		if err := json.Unmarshal(b, &req); err != nil {
			return nil, err
		}
		resp, err := hook.Sync(&req, testEnv())
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	})
	if err != nil {
		t.Fatal(err)
	}
	var req wire.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	// The buffer as readBody grows it, its Content-Length known.
	size, total := minBodyBuffer, len(body)
	for size < total {
		next := 2 * size
		if size >= maxPooledBuffer {
			next = min(total, next)
		}
		size = next
	}
	cost := bodyCharge(total, size) + valueCost*jsonValues(body) + syncCost(&req)
	t.Logf("the largest converged request: %d bytes, %d JSON values, charged %d of %d (%d to spare)", len(body), jsonValues(body), cost, DefaultMemoryBudget, DefaultMemoryBudget-cost)
	_, srv, _ := budgetServer(t, Options{}, nil)
	resp, err := http.Post(srv.URL+"/sync", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/sync: %d %.200s", resp.StatusCode, answer)
	}
}
