package e2e

import (
	"context"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestNetworkPolicyAdmitsMetacontroller: the chart's NetworkPolicy, on by
// default, admits to the hook's port the pods of the Metacontroller the
// docs/install.md installs (its chart, with metacontroller-values.yaml, and with the
// dedicated values too, in the namespace metacontroller, whose name label
// the API server sets), and no pod of that kind in another namespace nor
// another pod there. Skipped without Metacontroller's chart
// (METACONTROLLER_CHART, as TestChartPrintedCommands' install).
func TestNetworkPolicyAdmitsMetacontroller(t *testing.T) {
	src := os.Getenv("METACONTROLLER_CHART")
	if src == "" {
		t.Skip("METACONTROLLER_CHART is not set (tools/metacontroller-chart.sh): Metacontroller's pods cannot be rendered")
	}
	var np networkingv1.NetworkPolicy
	if o := chartObject(renderChart(t, "monocle-hook"), "NetworkPolicy"); o == nil {
		t.Fatal("the chart's defaults render no NetworkPolicy")
	} else {
		toTyped(t, o, &np)
	}

	// The namespace's labels as the API server sets them (docs/install.md:
	// --create-namespace), for a namespace named metacontroller.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "metacontroller"}}
	if err := k8sClient.Create(context.Background(), ns, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if ns.Labels[corev1.LabelMetadataName] != "metacontroller" {
		t.Fatalf("the namespace metacontroller has labels %v", ns.Labels)
	}

	for _, values := range [][]string{
		{"-f", "../chart/files/metacontroller-values.yaml"},
		{"-f", "../chart/files/metacontroller-values.yaml", "-f", "../chart/files/metacontroller-values-dedicated.yaml"},
	} {
		out, err := runHelm(t, append([]string{"template", "metacontroller", src, "-n", "metacontroller"}, values...)...)
		if err != nil {
			t.Fatal(err)
		}
		var sts appsv1.StatefulSet
		if o := chartObject(decodeYAMLObjects(t, []byte(out)), "StatefulSet"); o == nil {
			t.Fatalf("Metacontroller's chart %v renders no StatefulSet", values)
		} else {
			toTyped(t, o, &sts)
		}
		pod := sts.Spec.Template.Labels
		if !admitted(t, np, ns.Labels, pod) {
			t.Errorf("with %v, Metacontroller's pods (labels %v, namespace metacontroller) are not admitted by %+v", values, pod, np.Spec.Ingress)
		}
		if admitted(t, np, map[string]string{corev1.LabelMetadataName: "tenant"}, pod) {
			t.Errorf("a pod labelled as Metacontroller's (%v) in another namespace is admitted", pod)
		}
	}
	if admitted(t, np, ns.Labels, map[string]string{"app.kubernetes.io/name": "other"}) {
		t.Error("another pod of the namespace metacontroller is admitted")
	}
}

// admitted says whether an ingress rule of np admits a pod of these
// labels in a namespace of these labels to the hook's port, http.
func admitted(t *testing.T, np networkingv1.NetworkPolicy, nsLabels, podLabels map[string]string) bool {
	t.Helper()
	selects := func(s *metav1.LabelSelector, l map[string]string) bool {
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			t.Fatal(err)
		}
		return sel.Matches(labels.Set(l))
	}
	for _, rule := range np.Spec.Ingress {
		if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.StrVal != "http" {
			continue
		}
		for _, peer := range rule.From {
			// No namespaceSelector: the policy's own namespace only.
			inNS := peer.NamespaceSelector != nil && selects(peer.NamespaceSelector, nsLabels) ||
				peer.NamespaceSelector == nil && nsLabels[corev1.LabelMetadataName] == np.Namespace
			if peer.IPBlock == nil && inNS && (peer.PodSelector == nil || selects(peer.PodSelector, podLabels)) {
				return true
			}
		}
	}
	return false
}
