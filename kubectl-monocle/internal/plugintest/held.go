package plugintest

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

// HeldAnswer is a fake cluster of a Monocle whose spec the hook refuses:
// it holds its children as last applied, a copy anyone who may edit the
// child can write.
func HeldAnswer(t *testing.T) *plugin.Clients {
	held := strings.Replace(SnapshotsMonocle, "spec:\n", "spec:\n  publicURL: \"not a url\"\n", 1)
	// Its CronJob, held as the tenant wrote it.
	cronJob := `
apiVersion: batch/v1
kind: CronJob
metadata: {name: m-snapshots, namespace: ns, labels: {app.kubernetes.io/instance: m}}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          hostPID: true
          containers: [{name: snapshot, image: evil, args: [snapshot]}]
`
	return &plugin.Clients{Dyn: FakeCluster(t, held, cronJob)}
}

// Unchanged says whether a refused command changed the cluster c, or
// created a Job.
func Unchanged(t *testing.T, c *plugin.Clients) {
	t.Helper()
	for _, a := range c.Dyn.(*dynamicfake.FakeDynamicClient).Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" {
			t.Errorf("%s %s: a refused command changed the cluster", a.GetVerb(), a.GetResource().Resource)
		}
	}
	if jobs, err := c.Dyn.Resource(plugin.JobGVR).Namespace("ns").List(context.Background(), metav1.ListOptions{}); err != nil || len(jobs.Items) > 0 {
		t.Errorf("Jobs created: %v (%v)", jobs, err)
	}
}
