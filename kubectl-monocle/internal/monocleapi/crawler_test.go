package monocleapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/monocleapi"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

func TestCommitInfo(t *testing.T) {
	f := &plugintest.FakeMonocle{T: t, Commits: map[string]string{"ws/github/" + monocleapi.EntityProject: "2026-11-30T10:00:00Z"}}
	api := f.Start()
	ctx := context.Background()
	got, err := api.CommitInfo(ctx, "ws", "github", monocleapi.EntityProject)
	want := monocleapi.CommitInfo{Entity: "project_name: org/github", LastCommitAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	if err != nil || got != want {
		t.Errorf("CommitInfo: %+v %v, want %+v", got, err, want)
	}
	if got, err := api.CommitInfo(ctx, "ws", "gerrit", monocleapi.EntityProject); err != nil || !got.NoEntity {
		t.Errorf("no entity: %+v %v", got, err)
	}
	if _, err := api.CommitInfo(ctx, "unknown", "gerrit", monocleapi.EntityProject); err == nil || !strings.Contains(err.Error(), "CommitGetUnknownIndex") {
		t.Errorf("unknown workspace: %v", err)
	}
	f.Status = http.StatusForbidden
	if _, err := api.CommitInfo(ctx, "ws", "github", monocleapi.EntityProject); !monocleapi.Forbidden(err) {
		t.Errorf("403: %v", err)
	}
	f.Status = http.StatusServiceUnavailable
	if _, err := api.CommitInfo(ctx, "ws", "github", monocleapi.EntityProject); err == nil || monocleapi.Forbidden(err) || !strings.Contains(err.Error(), "503") {
		t.Errorf("503: %v", err)
	}
}

// The proxy path itself is the API server's: only its address is checked
// here (the e2e suite runs it against a real API server, where no pod
// answers behind it).
func TestServiceProxyURL(t *testing.T) {
	got := monocleapi.ServiceProxyURL("https://10.0.0.1:6443/", "ns", "m-api")
	if want := "https://10.0.0.1:6443/api/v1/namespaces/ns/services/m-api:http/proxy"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}
