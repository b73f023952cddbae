// Package floor is the yardstick the hook is measured against: a handler
// that only decodes a request into map[string]any and encodes it back with
// encoding/json. The benchmarks (hook/bench_test.go) and the load test
// (tools/loadtest) both use it, so their ratios compare against one floor.
package floor

import (
	"encoding/json"
	"net/http"
)

// Handler decodes a body of at most maxBody bytes and answers it re-encoded.
func Handler(maxBody int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	}
}
