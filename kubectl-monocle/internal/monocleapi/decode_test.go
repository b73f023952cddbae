package monocleapi

import "testing"

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
