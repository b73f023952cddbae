package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestKubectlGetMonocles: `kubectl get mon` (the short name) says whether
// each Monocle is ready and why not; -o wide adds the Ready message and the
// API's image.
func TestKubectlGetMonocles(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, nil)
	m := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monocle.monocle.change-metrics.io/v1alpha1",
		"kind":       "Monocle",
		"metadata":   map[string]any{"name": "columns", "namespace": ns},
		"spec":       map[string]any{"publicURL": "http://monocle.example.com"},
	}}
	if err := k8sClient.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	m.Object["status"] = map[string]any{
		"url":      "http://monocle.example.com",
		"versions": map[string]any{"monocle": "quay.io/change-metrics/monocle:1.11.2"},
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "False", "reason": "ComponentsNotReady",
			"message":            "waiting for monocle-elastic",
			"lastTransitionTime": "2026-11-30T00:00:00Z",
		}},
	}
	if err := k8sClient.Status().Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	kubeconfig := adminKubeconfig(t, "kubectl-columns")

	for _, tc := range []struct {
		name, args string
		header     []string
		row        []string
	}{
		{"default", "", []string{"NAME", "READY", "REASON", "URL", "AGE"},
			[]string{"columns", "False", "ComponentsNotReady", "http://monocle.example.com"}},
		{"wide", "-o wide", []string{"NAME", "READY", "REASON", "URL", "AGE", "MESSAGE", "IMAGE"},
			[]string{"columns", "False", "ComponentsNotReady", "http://monocle.example.com", "waiting for monocle-elastic", "quay.io/change-metrics/monocle:1.11.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := shell(t, kubeconfig, "kubectl get mon -n "+ns+" "+tc.args)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 {
				t.Fatalf("kubectl get mon %s printed:\n%s", tc.args, out)
			}
			if got := strings.Fields(lines[0]); !slices.Equal(got, tc.header) {
				t.Errorf("columns %q, want %q", got, tc.header)
			}
			for _, want := range tc.row {
				if !strings.Contains(lines[1], want) {
					t.Errorf("the row does not show %q:\n%s", want, out)
				}
			}
		})
	}
}
