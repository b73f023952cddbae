package e2e

// The chart's helm test Pod (chart/templates/tests/test-hook.yaml): rendered
// with every value set, checked against the hook it tests, and (in
// TestChartRender) admitted by a server-side dry run in a restricted
// namespace. No Pod runs here (no kubelet): TestPushAndInstallFromRegistry
// runs its command, the image's own binary with the Pod's arguments, from
// the host against a hook.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const testPodTemplate = "templates/tests/test-hook.yaml"

// renderTestPod renders the helm test Pod alone, as renderChart renders the
// rest.
func renderTestPod(t *testing.T, ns string, args ...string) *corev1.Pod {
	t.Helper()
	out, err := runHelm(t, append([]string{"template", chartRelease, chartDir, "--namespace", ns,
		"--api-versions", apiCompositeController, "--show-only", testPodTemplate}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeYAMLObjects(t, []byte(out))
	if len(objs) != 1 || objs[0].GetKind() != "Pod" {
		t.Fatalf("%s rendered %v, want one Pod", testPodTemplate, chartKinds(objs))
	}
	var pod corev1.Pod
	toTyped(t, objs[0], &pod)
	return &pod
}

// checkTestPod: a helm test hook that runs `monocle-hook test` against the
// URL the CompositeController calls, restricted and placed as the hook is,
// which the Service never selects and the NetworkPolicy admits.
func checkTestPod(t *testing.T, pod *corev1.Pod, objs []*unstructured.Unstructured, v map[string]any) {
	t.Helper()
	var dep appsv1.Deployment
	var svc corev1.Service
	toTyped(t, chartObject(objs, "Deployment"), &dep)
	toTyped(t, chartObject(objs, "Service"), &svc)
	if pod.Name != dep.Name+"-test" || pod.Namespace != dep.Namespace {
		t.Errorf("helm test Pod %s/%s, want %s/%s-test", pod.Namespace, pod.Name, dep.Namespace, dep.Name)
	}
	if pod.Annotations["helm.sh/hook"] != "test" {
		t.Errorf("helm test Pod annotations %v, want helm.sh/hook: test", pod.Annotations)
	}

	// Never one of the hook's endpoints.
	if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Service's selector %v selects the helm test Pod (labels %v): it would send it syncs", svc.Spec.Selector, pod.Labels)
	}
	// Admitted by the NetworkPolicy, to the hook's port, from its own
	// namespace only.
	if o := chartObject(objs, "NetworkPolicy"); o != nil {
		var np networkingv1.NetworkPolicy
		toTyped(t, o, &np)
		admitted := false
		for _, rule := range np.Spec.Ingress {
			toHTTP := len(rule.Ports) == 1 && rule.Ports[0].Port != nil && *rule.Ports[0].Port == intstr.FromString("http")
			for _, peer := range rule.From {
				if peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil || !toHTTP {
					continue
				}
				sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
				if err != nil {
					t.Fatal(err)
				}
				admitted = admitted || sel.Matches(labels.Set(pod.Labels))
			}
		}
		if !admitted {
			t.Errorf("no ingress rule of the NetworkPolicy admits the helm test Pod (labels %v) to the hook's port: %+v", pod.Labels, np.Spec.Ingress)
		}
	}

	// Restricted and placed as the hook is, with no API access.
	hookSpec, spec := dep.Spec.Template.Spec, pod.Spec
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("helm test Pod containers %d (init %d), want 1", len(spec.Containers), len(spec.InitContainers))
	}
	c, hc := spec.Containers[0], hookSpec.Containers[0]
	if spec.RestartPolicy != corev1.RestartPolicyNever || c.Image != hc.Image || c.ImagePullPolicy != hc.ImagePullPolicy ||
		spec.ServiceAccountName != hookSpec.ServiceAccountName || !ptrFalse(spec.AutomountServiceAccountToken) ||
		!apiequality.Semantic.DeepEqual(spec.SecurityContext, hookSpec.SecurityContext) ||
		!apiequality.Semantic.DeepEqual(c.SecurityContext, hc.SecurityContext) ||
		!apiequality.Semantic.DeepEqual(spec.ImagePullSecrets, hookSpec.ImagePullSecrets) ||
		!apiequality.Semantic.DeepEqual(spec.NodeSelector, hookSpec.NodeSelector) ||
		!apiequality.Semantic.DeepEqual(spec.Tolerations, hookSpec.Tolerations) {
		t.Errorf("helm test Pod spec %+v\nwant restartPolicy Never, and the image, pull policy and secrets, ServiceAccount (no token), security contexts, node selector and tolerations of the hook's %+v", spec, hookSpec)
	}

	// Its command: the URL the CompositeController's sync webhook calls
	// (Metacontroller's form: protocol://name.namespace:port), and its CA.
	cc := chartObject(objs, "CompositeController")
	webhook, _, _ := unstructured.NestedMap(cc.Object, "spec", "hooks", "sync", "webhook", "service")
	want := []string{"test", fmt.Sprintf("--url=%s://%s.%s:%v", webhook["protocol"], webhook["name"], webhook["namespace"], webhook["port"])}
	if ca := valStr(v, "tls.caBundle"); ca != "" {
		want = append(want, "--ca-bundle="+strings.TrimSpace(ca))
	}
	if len(c.Command) != 0 || !slices.Equal(c.Args, want) {
		t.Errorf("helm test Pod command %q args %q, want the image's entrypoint with %q", c.Command, c.Args, want)
	}
}
