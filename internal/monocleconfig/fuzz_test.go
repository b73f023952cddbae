package monocleconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse: no panic, a refusal is an *Error
// within its caps, an answer hashes (JSON-encodes), and the limits hold.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(seedDefaultConfig))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add(laughs(3))
	f.Add([]byte("workspaces:\n  - - {key: name, value: demo}\n    - {key: crawlers, value: [{name: c, update_since: '2024-01-01 00:00:00 +01:00', provider: TaskDataProvider}]}\n"))
	f.Add([]byte("auth: {auth_provider: {oidc_provider_name: x, oidc_issuer_url: y, oidc_client_id: z}}\nworkspaces: []\n"))
	f.Add([]byte("%YAML 1.2\n---\nworkspaces: [{name: &a ! 12, crawlers: [{name: c, update_since: '2024-01-01', provider: {bugzilla_url: u}}, {name: d, update_since: '2024-01-01', provider: {bugzilla_url: u}}]}]\n"))
	// Small limits, so the fuzzer reaches them.
	limits := Limits{MaxBytes: 4096, MaxNodes: 500, MaxExpandedBytes: 8192, MaxDepth: 20}
	env := envOf("CRAWLERS_API_KEY")
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseWithLimits(data, env, limits)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T: %v", err, err)
			}
			if len(e.Problems) == 0 || len(e.Problems) > maxProblems || e.Total < len(e.Problems) {
				t.Fatalf("%d problems, total %d", len(e.Problems), e.Total)
			}
			if len(err.Error()) > maxMessage+3 {
				t.Fatalf("message of %d bytes", len(err.Error()))
			}
			return
		}
		if len(data) > limits.MaxBytes {
			t.Fatalf("%d bytes accepted", len(data))
		}
		if len(cfg.Ignored) > maxIgnored || len(cfg.Warnings) > maxWarnings+1 || len(cfg.Tokens.Missing) > 2*maxIgnored {
			t.Fatalf("%d ignored, %d warnings, %d tokens", len(cfg.Ignored), len(cfg.Warnings), len(cfg.Tokens.Missing))
		}
		if cfg.Tokens.Count < len(cfg.Tokens.Missing) || cfg.Tokens.Exits != slices.ContainsFunc(cfg.Tokens.Missing, func(m MissingToken) bool { return m.Exits }) {
			t.Fatalf("tokens %+v", cfg.Tokens)
		}
		for _, w := range cfg.Workspaces {
			if indexNameProblem(w.Name) != "" || elasticIndexProblem(w.Name) != "" {
				t.Fatalf("invalid workspace name %q accepted", w.Name)
			}
		}
		if _, err := json.Marshal(cfg.Workspaces); err != nil {
			t.Fatalf("workspaces do not encode: %v", err)
		}
	})
}
