package e2e

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/internal/mcapply"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// A Monocle that 0.1.0 made (hook/testdata/v0.1.0: Elasticsearch without
// security, its clients with a plain URL), on the real API server, synced
// by this hook: the API server takes the StatefulSet answered with the
// pods' template it runs, and Elasticsearch's security turns on only once
// the API has rolled out onto its credentials and the snapshot run under
// way has ended. The workload controllers' progress is written through
// the status subresource (no kubelet runs here).
func TestSecurityTurnsOnAfterItsClients(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, nil)
	d := newDriver(t, ns)
	m := d.createMonocle("snapshots-demo", map[string]any{"elasticsearch": map[string]any{"storageSize": "20Gi",
		"snapshots": map[string]any{"schedule": "0 3 * * *", "timeZone": "Europe/Paris", "keep": int64(14), "storageSize": "30Gi"}}})
	objs, err := testbodies.Release010("../hook/testdata/v0.1.0/snapshots-demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		// As Metacontroller created it for 0.1.0's answer.
		u := &unstructured.Unstructured{Object: obj}
		if err := mcapply.SetLastApplied(u.Object, obj); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(ns)
		u.SetLabels(map[string]string{"controller-uid": string(m.GetUID()), "app.kubernetes.io/instance": "snapshots-demo"})
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: m.GetAPIVersion(), Kind: m.GetKind(), Name: m.GetName(), UID: m.GetUID(),
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
		if _, err := d.dyn.Resource(childTypeOf(u.GetKind()).gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating 0.1.0's %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	d.markReady("StatefulSet.apps/v1", "snapshots-demo-elastic")
	d.markReady("Deployment.apps/v1", "snapshots-demo-api")
	d.markReady("Deployment.apps/v1", "snapshots-demo-crawler")
	setCronJobActive := func(active []any) {
		cj := d.get("CronJob.batch/v1", "snapshots-demo-snapshots")
		cj.Object["status"] = map[string]any{"active": active}
		if _, err := d.dyn.Resource(childTypeOf("CronJob").gvr).Namespace(ns).UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("writing the CronJob's status: %v", err)
		}
	}
	// A snapshot run of 0.1.0's template is under way.
	setCronJobActive([]any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": "snapshots-demo-snapshots-29000000", "namespace": ns}})

	security := func() string {
		sts := d.get("StatefulSet.apps/v1", "snapshots-demo-elastic")
		containers, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers")
		env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
		for _, e := range env {
			if e := e.(map[string]any); e["name"] == "xpack.security.enabled" {
				return e["value"].(string)
			}
		}
		return "unset"
	}
	progressing := func(wantReason, says string) {
		t.Helper()
		c := conditionOf(d.monocle("snapshots-demo"), "Progressing")
		if c["reason"] != wantReason || !strings.Contains(c["message"].(string), says) {
			t.Fatalf("Progressing %v, want %s saying %q", c, wantReason, says)
		}
	}
	readsCredentials := func(key, name string, path ...string) bool {
		o := d.get(key, name)
		field := "containers"
		if path[len(path)-1] == "init" {
			path, field = path[:len(path)-1], "initContainers"
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, append(path, field)...)
		env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
		for _, e := range env {
			e := e.(map[string]any)
			if name, _, _ := unstructured.NestedString(e, "valueFrom", "secretKeyRef", "name"); e["name"] == "MONOCLE_ELASTIC_URL" && name == "snapshots-demo-elastic" {
				return true
			}
		}
		return false
	}

	// 1. The clients move to their credentials; Elasticsearch stays as it runs.
	d.sync("snapshots-demo")
	if got := security(); got != "false" {
		t.Fatalf("after the first sync, xpack.security.enabled is %s, want false as 0.1.0 left it", got)
	}
	if !readsCredentials("Deployment.apps/v1", "snapshots-demo-api", "spec", "template", "spec", "init") ||
		!readsCredentials("CronJob.batch/v1", "snapshots-demo-snapshots", "spec", "jobTemplate", "spec", "template", "spec") {
		t.Fatal("the API or the snapshot CronJob does not read its credentials after the first sync")
	}
	progressing("SecuringElasticsearch", "the API")

	// 2. The API has rolled out; the snapshot run has not ended.
	d.markReady("Deployment.apps/v1", "snapshots-demo-api")
	d.sync("snapshots-demo")
	if got := security(); got != "false" {
		t.Fatalf("with a snapshot run under way, xpack.security.enabled is %s", got)
	}
	progressing("SecuringElasticsearch", "the snapshot CronJob snapshots-demo-snapshots's running Job to end")

	// 3. The run has ended: security on.
	setCronJobActive(nil)
	d.sync("snapshots-demo")
	if got := security(); got != "true" {
		t.Fatalf("once no client lacks credentials, xpack.security.enabled is %s, want true", got)
	}
	if c := conditionOf(d.monocle("snapshots-demo"), "Progressing"); c["reason"] == "SecuringElasticsearch" {
		t.Fatalf("Progressing %v after security turned on", c)
	}
}
