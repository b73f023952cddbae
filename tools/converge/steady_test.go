package main

import (
	"maps"
	"strings"
	"testing"
	"time"
)

// Lines as kube-apiserver 1.37 prints them (read from envtest's): the
// writes on the resources named are summed by verb and subresource; reads,
// dry runs and other resources are left out.
func TestAPIServerWrites(t *testing.T) {
	metrics := `# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="APPLY",version="v1"} 12
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="APPLY",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="All",group="",resource="secrets",scope="resource",subresource="",verb="APPLY",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="GET",version="v1"} 40
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="namespace",subresource="",verb="WATCH",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="monocle.monocle.change-metrics.io",resource="monocles",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 5
apiserver_request_total{code="409",component="apiserver",dry_run="",group="monocle.monocle.change-metrics.io",resource="monocles",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="status",verb="PUT",version="v1"} 9
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 300
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="POST",version="v1"} 2
apiserver_request_total_other{resource="secrets",verb="PUT"} 8
`
	got, err := apiserverWrites(strings.NewReader(metrics), []string{"monocles", "secrets", "deployments"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"APPLY secrets": 15, "POST secrets": 2, "PUT monocles/status": 6, "PUT deployments/status": 9}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}

	if _, err := apiserverWrites(strings.NewReader(`apiserver_request_total{verb="PUT,resource="secrets"} 1`+"\n"), []string{"secrets"}); err == nil {
		t.Error("a label's unterminated quote: no error")
	}
}

func TestParseLabels(t *testing.T) {
	got, err := parseLabels(`a="1",b="x,y=\"z\"",c=""`)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": "1", "b": `x,y="z"`, "c": ""}; !maps.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The window's figures are what moved in it: counters that did not are
// left out, and syncs are per Monocle and per minute.
func TestSteadyWindow(t *testing.T) {
	d := difference(map[string]float64{"GET": 10, "PUT": 4}, map[string]float64{"GET": 25, "PUT": 4, "PATCH": 3})
	if want := map[string]float64{"GET": 15, "PATCH": 3}; !maps.Equal(d, want) {
		t.Errorf("difference: got %v, want %v", d, want)
	}
	s := steady{window: 10 * time.Minute, parents: 301, syncs: 602}
	if got := s.syncsPerMonocleMinute(); got != 0.2 {
		t.Errorf("602 syncs of 301 Monocles in 10 minutes: %v a Monocle a minute, want 0.2", got)
	}
}
