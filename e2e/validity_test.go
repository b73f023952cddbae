package e2e

// What these tests prove, against a real kube-apiserver: a spec value the
// API server would refuse in a child (bad resources, scheduling, names,
// hosts) is refused by the hook itself (SpecApplied=False, InvalidSpec,
// naming the field, in a bounded message) and by the CRD, never sent on to
// fail Metacontroller's apply; and every good value of those fields, and
// every example, is admitted by the CRD, applied (SpecApplied=True) and
// yields children the API server creates.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/mcapply"
)

// validityUID is the uid of the locally built parents: the hook only
// labels and names with it, and no such Monocle needs to exist.
const validityUID = "5d1c0a7e-0000-4000-8000-00000000e2e1"

// validityBase is a managed-Elasticsearch Monocle with snapshots and an
// Ingress: its answer holds the StatefulSet with both volumeClaimTemplates,
// the Deployments, the snapshot CronJob and the Ingress, so that a bad
// value of any field reaches the child that carries it. A fresh map on
// each call.
func validityBase() map[string]any {
	return map[string]any{
		"elasticsearch": map[string]any{"snapshots": map[string]any{"schedule": "0 3 * * *", "keep": int64(3)}},
		"ingress":       map[string]any{"host": "monocle.example.com"},
	}
}

// sub returns spec[keys...] as a map, creating the maps on the way.
func sub(spec map[string]any, keys ...string) map[string]any {
	m := spec
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	return m
}

// goodToleration goes first in the toleration cases, so that the message
// must name the index of the bad one.
var goodToleration = map[string]any{"key": "dedicated", "operator": "Equal", "value": "metrics", "effect": "NoSchedule"}

// TestSpecValuesTheAPIServerRefuses: each case is the base spec with one
// value the API server refuses in a child. The hook either refuses the spec
// (SpecApplied=False, InvalidSpec, the message naming the field) or answers
// only children the API server accepts (a server-side dry-run create, as
// Metacontroller creates them); refused says the first must hold. The CRD
// refuses the Monocle unless crdAdmits.
func TestSpecValuesTheAPIServerRefuses(t *testing.T) {
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)

	// The control: the base spec is applied, its answer holds every child
	// the cases aim at, the API server accepts them all, and so does the CRD.
	t.Run("base spec (control)", func(t *testing.T) {
		d := *d
		d.t = t
		parent, answer := localSync(&d, validityBase())
		if c := answerCondition(answer, condition.ConditionSpecApplied); c["status"] != "True" {
			t.Fatalf("SpecApplied %v", c)
		}
		var sts, deployments, cronJobs, ingresses int
		for _, child := range answer.Children {
			o := &unstructured.Unstructured{Object: child}
			switch o.GetKind() {
			case "StatefulSet":
				sts++
				if claims, _, _ := unstructured.NestedSlice(o.Object, "spec", "volumeClaimTemplates"); len(claims) != 2 {
					t.Errorf("StatefulSet %s has %d volumeClaimTemplates, want 2 (data and snapshots)", o.GetName(), len(claims))
				}
			case "Deployment":
				deployments++
			case "CronJob":
				cronJobs++
			case "Ingress":
				ingresses++
			}
		}
		if sts != 1 || deployments != 2 || cronJobs != 1 || ingresses != 1 {
			t.Errorf("the base answer holds %d StatefulSet, %d Deployments, %d CronJob, %d Ingress; want 1, 2, 1, 1: %v",
				sts, deployments, cronJobs, ingresses, childNames(answer))
		}
		if errs := dryRunChildren(&d, parent, answer); len(errs) > 0 {
			t.Errorf("the API server refuses the base spec's children:\n%s", strings.Join(errs, "\n"))
		}
		if err := dryRunMonocle(&d, "m", validityBase()); err != nil {
			t.Errorf("the CRD refuses the base spec: %v", err)
		}
	})

	tests := map[string]struct {
		patch func(spec map[string]any)
		// field: the path SpecApplied's message must name.
		field string
		// refused: the hook must refuse it (InvalidSpec naming field).
		refused bool
		// crdAdmits: the CRD admits the Monocle (default: it refuses it).
		crdAdmits bool
		// maxMessage bounds SpecApplied's message; 0 means 32768, the
		// CRD's bound on a condition's message.
		maxMessage int
	}{
		"api requests above limits": {
			patch: func(s map[string]any) {
				sub(s, "api")["resources"] = map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "1"}}
			},
			field: "spec.api.resources.requests", refused: true,
		},
		"api negative limit": {
			patch: func(s map[string]any) {
				sub(s, "api")["resources"] = map[string]any{"limits": map[string]any{"memory": "-1Gi"}}
			},
			field: "spec.api.resources.limits", refused: true,
		},
		"api unknown resource name": {
			patch: func(s map[string]any) {
				sub(s, "api")["resources"] = map[string]any{"limits": map[string]any{"gpu": "1"}}
			},
			field: "spec.api.resources.limits", refused: true,
		},
		"crawler unknown resource name": {
			patch: func(s map[string]any) {
				sub(s, "crawler")["resources"] = map[string]any{"requests": map[string]any{"gpu": "1"}}
			},
			field: "spec.crawler.resources.requests", refused: true,
		},
		"elasticsearch requests.cpu above limits": {
			patch: func(s map[string]any) {
				sub(s, "elasticsearch")["resources"] = map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "1"}}
			},
			field: "spec.elasticsearch.resources.requests", refused: true,
		},
		"nodeSelector key with a space": {
			patch: func(s map[string]any) { s["nodeSelector"] = map[string]any{"bad key": "linux"} },
			field: "spec.nodeSelector", refused: true,
		},
		"nodeSelector value with a space": {
			patch: func(s map[string]any) { s["nodeSelector"] = map[string]any{"kubernetes.io/os": "bad value"} },
			field: "spec.nodeSelector", refused: true,
		},
		"toleration Equal with an empty key": {
			patch: func(s map[string]any) {
				s["tolerations"] = []any{goodToleration, map[string]any{"operator": "Equal", "value": "x", "effect": "NoSchedule"}}
			},
			field: "spec.tolerations[1]", refused: true,
		},
		"toleration Exists with a value": {
			patch: func(s map[string]any) {
				s["tolerations"] = []any{goodToleration, map[string]any{"key": "dedicated", "operator": "Exists", "value": "metrics"}}
			},
			field: "spec.tolerations[1]", refused: true,
		},
		"tolerationSeconds with effect NoSchedule": {
			patch: func(s map[string]any) {
				s["tolerations"] = []any{goodToleration, map[string]any{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": int64(60)}}
			},
			field: "spec.tolerations[1]", refused: true,
		},
		"required node affinity with no nodeSelectorTerms": {
			patch: func(s map[string]any) {
				s["affinity"] = map[string]any{"nodeAffinity": map[string]any{
					"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{}}}}
			},
			field: "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", refused: true,
		},
		"preferred node affinity of weight 0": {
			patch: func(s map[string]any) {
				s["affinity"] = map[string]any{"nodeAffinity": map[string]any{
					"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": int64(0), "preference": map[string]any{
						"matchExpressions": []any{map[string]any{"key": "kubernetes.io/os", "operator": "In", "values": []any{"linux"}}}}}}}}
			},
			field: "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", refused: true,
		},
		"required pod anti-affinity with an empty topologyKey": {
			patch: func(s map[string]any) {
				s["affinity"] = map[string]any{"podAntiAffinity": map[string]any{
					"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
						"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "monocle"}}, "topologyKey": ""}}}}
			},
			field: "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey", refused: true,
		},
		"storageClassName not a DNS subdomain": {
			patch: func(s map[string]any) { s["storageClassName"] = "fast_ssd" },
			field: "spec.storageClassName", refused: true,
		},
		"elasticsearch.storageClassName not a DNS subdomain": {
			patch: func(s map[string]any) { sub(s, "elasticsearch")["storageClassName"] = "fast_ssd" },
			field: "spec.elasticsearch.storageClassName", refused: true,
		},
		"snapshots.storageClassName not a DNS subdomain": {
			patch: func(s map[string]any) { sub(s, "elasticsearch", "snapshots")["storageClassName"] = "fast_ssd" },
			field: "spec.elasticsearch.snapshots.storageClassName", refused: true,
		},
		"ingress.className not a DNS subdomain": {
			patch: func(s map[string]any) { sub(s, "ingress")["className"] = "Bad_Class" },
			field: "spec.ingress.className", refused: true,
		},
		"ingress.tlsSecretName not a DNS subdomain": {
			patch: func(s map[string]any) { sub(s, "ingress")["tlsSecretName"] = "Bad_Name" },
			field: "spec.ingress.tlsSecretName", refused: true,
		},
		"ingress annotation key with a space": {
			patch: func(s map[string]any) { sub(s, "ingress")["annotations"] = map[string]any{"bad key": "x"} },
			field: "spec.ingress.annotations", refused: true,
		},
		"route.host with capitals": {
			patch: func(s map[string]any) {
				delete(s, "ingress")
				s["route"] = map[string]any{"host": "Monocle.Example.com"}
			},
			field: "spec.route.host", refused: true,
		},
		"route.host with a port": {
			patch: func(s map[string]any) {
				delete(s, "ingress")
				s["route"] = map[string]any{"host": "monocle.example.com:8080"}
			},
			field: "spec.route.host", refused: true,
		},
		"secretRef.name not a DNS subdomain": {
			patch: func(s map[string]any) { s["secretRef"] = map[string]any{"name": "Bad_Name"} },
			field: "spec.secretRef.name", refused: true,
		},
		// 40,000 characters: the message quotes at most ~253 of them.
		"secretRef.name of 40,000 characters": {
			patch:      func(s map[string]any) { s["secretRef"] = map[string]any{"name": strings.Repeat("a", 40000)} },
			field:      "spec.secretRef.name",
			refused:    true,
			maxMessage: 1999,
		},
		// Snapshots need a managed Elasticsearch: dropped with urlSecretRef.
		"urlSecretRef.key with a space": {
			patch: func(s map[string]any) {
				s["elasticsearch"] = map[string]any{"urlSecretRef": map[string]any{"name": "es", "key": "bad key"}}
			},
			field: "spec.elasticsearch.urlSecretRef.key", refused: true,
		},
		"urlSecretRef.name not a DNS subdomain": {
			patch: func(s map[string]any) {
				s["elasticsearch"] = map[string]any{"urlSecretRef": map[string]any{"name": "Bad_Name", "key": "url"}}
			},
			field: "spec.elasticsearch.urlSecretRef.name", refused: true,
		},
		"configMapRef.name not a DNS subdomain": {
			patch: func(s map[string]any) { s["configMapRef"] = map[string]any{"name": "Bad_Name"} },
			field: "spec.configMapRef.name", refused: true,
		},
		"networkPolicy peer: except outside its cidr": {
			patch: func(s map[string]any) {
				s["networkPolicy"] = map[string]any{"elasticsearchPeers": []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/16", "except": []any{"10.1.0.0/24"}}}}}
			},
			field: "spec.networkPolicy.elasticsearchPeers[0].ipBlock.except[0]", refused: true,
		},
		"networkPolicy peer: a label key with a space": {
			patch: func(s map[string]any) {
				s["networkPolicy"] = map[string]any{"elasticsearchPeers": []any{map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{"bad key": "x"}}}}}
			},
			field: "spec.networkPolicy.elasticsearchPeers[0].podSelector.matchLabels", refused: true,
		},
		"networkPolicy peer: ipBlock and podSelector": {
			patch: func(s map[string]any) {
				s["networkPolicy"] = map[string]any{"elasticsearchPeers": []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/16"}, "podSelector": map[string]any{}}}}
			},
			field: "spec.networkPolicy.elasticsearchPeers[0]", refused: true,
		},
		// No imagePullSecrets case: the API server accepts any non-empty
		// name there (only a warning for an empty one); see
		// TestImagePullSecretNamesAreNotValidated.
	}
	for _, name := range slices.Sorted(maps.Keys(tests)) {
		tc := tests[name]
		t.Run(name, func(t *testing.T) {
			d := *d
			d.t = t
			spec := validityBase()
			tc.patch(spec)

			// The hook, given this spec and no children.
			parent, answer := localSync(&d, spec)
			c := answerCondition(answer, condition.ConditionSpecApplied)
			msg, _ := c["message"].(string)
			maxMessage := cmp.Or(tc.maxMessage, 32768)
			if len(msg) > maxMessage {
				t.Errorf("SpecApplied's message is %d characters, want at most %d: %s", len(msg), maxMessage, clip(msg))
			}
			hookRefused := c["status"] == "False" && c["reason"] == condition.ReasonInvalidSpec && strings.Contains(msg, tc.field)
			if hookRefused {
				t.Logf("the hook refuses it: %s", clip(msg))
				// With no children observed there is nothing to hold; if it
				// answers any, the API server must take them.
				if errs := dryRunChildren(&d, parent, answer); len(errs) > 0 {
					t.Errorf("a refused spec answered children the API server refuses:\n%s", strings.Join(errs, "\n"))
				}
			} else if errs := dryRunChildren(&d, parent, answer); len(errs) > 0 {
				t.Errorf("the hook neither refuses it (SpecApplied %s) nor answers children the API server accepts:\n%s",
					clipCondition(c), strings.Join(errs, "\n"))
			} else {
				t.Logf("the hook does not refuse it (SpecApplied %s), and the API server accepts every child: %v", clipCondition(c), childNames(answer))
			}
			if tc.refused && !hookRefused {
				t.Errorf("want SpecApplied=False, reason %s, naming %s; got %s", condition.ReasonInvalidSpec, tc.field, clipCondition(c))
			}

			// The CRD, given the Monocle with this spec.
			err := dryRunMonocle(&d, "m", spec)
			switch {
			case tc.crdAdmits && err != nil:
				t.Errorf("the CRD refuses it: %s", clip(err.Error()))
			case !tc.crdAdmits && err == nil:
				t.Errorf("the CRD admits it, want it refused")
			case err != nil && !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err):
				t.Errorf("the CRD refuses it with %s, want an invalid error", clip(err.Error()))
			case err != nil:
				t.Logf("the CRD refuses it: %s", clip(err.Error()))
			}
		})
	}
}

// The case left out of the table above: a pod template's imagePullSecrets
// name is not validated by the API server, so nothing there for the hook or
// the CRD to refuse. Checked here so that the table's reason stays true.
func TestImagePullSecretNamesAreNotValidated(t *testing.T) {
	ns := createNamespace(t, nil)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns},
		Spec: corev1.PodSpec{
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "Bad_Name"}},
			Containers:       []corev1.Container{{Name: "main", Image: "busybox"}},
		},
	}
	if err := k8sClient.Create(context.Background(), pod, client.DryRunAll); err != nil {
		t.Fatalf("the API server refuses imagePullSecrets name Bad_Name (%v): add the case to TestSpecValuesTheAPIServerRefuses", err)
	}
}

// TestSpecValuesTheAPIServerAccepts: every example, the base spec, and a
// spec with a good value of each field of the table above: the CRD admits
// the Monocle, the hook applies it (SpecApplied=True, read from the stored
// Monocle) and every child is created for real by the driver, as
// Metacontroller creates them, in a restricted namespace.
func TestSpecValuesTheAPIServerAccepts(t *testing.T) {
	type accepted struct {
		name    string
		spec    map[string]any
		objects []map[string]any // created in the namespace first
		check   func(t *testing.T, d *driver)
	}
	tests := map[string]accepted{}

	files, _ := filepath.Glob("../examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tc accepted
		for _, doc := range strings.Split(string(b), "\n---") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			switch m["kind"] {
			case hook.Kind:
				tc.name = m["metadata"].(map[string]any)["name"].(string)
				tc.spec, _ = m["spec"].(map[string]any)
			case "ConfigMap", "Secret":
				tc.objects = append(tc.objects, m)
			case nil:
			default:
				t.Fatalf("%s: a %v, which this test does not create", f, m["kind"])
			}
		}
		if tc.name == "" {
			t.Fatalf("%s: no Monocle", f)
		}
		tests["example "+filepath.Base(f)] = tc
	}

	tests["base spec"] = accepted{name: "base", spec: validityBase(), check: func(t *testing.T, d *driver) {
		d.get("StatefulSet.apps/v1", "base-elastic")
		d.get("CronJob.batch/v1", "base-snapshots")
		d.get("Ingress.networking.k8s.io/v1", "base-api")
	}}

	// Each field of the refusal table with a good value, on a managed
	// Elasticsearch.
	good := validityBase()
	good["storageClassName"] = "fast-ssd"
	es := sub(good, "elasticsearch")
	es["storageClassName"] = "fast-ssd"
	sub(es, "snapshots")["storageClassName"] = "fast-ssd"
	es["resources"] = map[string]any{
		"requests": map[string]any{"cpu": "500m", "memory": "2Gi"},
		"limits":   map[string]any{"cpu": "2", "memory": "2Gi"},
	}
	sub(good, "api")["resources"] = map[string]any{
		"requests": map[string]any{"cpu": "500m", "memory": "512Mi", "ephemeral-storage": "1Gi", "example.com/foo": int64(2)},
		"limits":   map[string]any{"cpu": "1", "memory": "1Gi", "ephemeral-storage": "2Gi", "example.com/foo": "2"},
	}
	sub(good, "crawler")["resources"] = map[string]any{
		"requests": map[string]any{"cpu": "100m", "memory": "256Mi"},
		"limits":   map[string]any{"memory": "512Mi"},
	}
	good["nodeSelector"] = map[string]any{"kubernetes.io/os": "linux"}
	good["tolerations"] = []any{
		goodToleration,
		map[string]any{"key": "example.com/gpu", "value": "true"}, // operator Equal by default, every effect
		map[string]any{"key": "dedicated", "operator": "Exists", "effect": "PreferNoSchedule"},
		map[string]any{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)},
		map[string]any{"operator": "Exists"}, // every taint
	}
	good["affinity"] = map[string]any{
		"nodeAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{
				"matchExpressions": []any{
					map[string]any{"key": "kubernetes.io/os", "operator": "In", "values": []any{"linux"}},
					map[string]any{"key": "example.com/cores", "operator": "Gt", "values": []any{"2"}},
				}}}},
			"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": int64(50), "preference": map[string]any{
				"matchExpressions": []any{map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In", "values": []any{"a", "b"}}}}}},
		},
		"podAffinity": map[string]any{
			"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": int64(10), "podAffinityTerm": map[string]any{
				"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "cache"}},
				"namespaces":    []any{"caches"},
				"topologyKey":   "kubernetes.io/hostname",
			}}},
		},
		"podAntiAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
				"labelSelector":  map[string]any{"matchExpressions": []any{map[string]any{"key": "app.kubernetes.io/name", "operator": "In", "values": []any{"monocle"}}}},
				"namespaces":     []any{"monocle", "caches"},
				"topologyKey":    "kubernetes.io/hostname",
				"matchLabelKeys": []any{"pod-template-hash"},
			}},
		},
	}
	ingress := sub(good, "ingress")
	ingress["className"] = "nginx"
	ingress["tlsSecretName"] = "monocle-tls"
	ingress["annotations"] = map[string]any{"cert-manager.io/cluster-issuer": "letsencrypt"}
	good["imagePullSecrets"] = []any{map[string]any{"name": "regcred"}}
	good["secretRef"] = map[string]any{"name": "team-tokens"}
	good["configMapRef"] = map[string]any{"name": "team-config"}
	tests["good values, managed Elasticsearch"] = accepted{name: "good", spec: good, check: func(t *testing.T, d *driver) {
		api := d.get("Deployment.apps/v1", "good-api")
		if tols, _, _ := unstructured.NestedSlice(api.Object, "spec", "template", "spec", "tolerations"); len(tols) != 5 {
			t.Errorf("the API's pods have %d tolerations, want 5", len(tols))
		}
		if _, ok, _ := unstructured.NestedMap(api.Object, "spec", "template", "spec", "affinity", "podAntiAffinity"); !ok {
			t.Error("the API's pods have no podAntiAffinity")
		}
		if ps, _, _ := unstructured.NestedSlice(api.Object, "spec", "template", "spec", "imagePullSecrets"); len(ps) != 1 {
			t.Errorf("the API's pods have imagePullSecrets %v", ps)
		}
		containers, _, _ := unstructured.NestedSlice(api.Object, "spec", "template", "spec", "containers")
		if len(containers) == 0 {
			t.Fatal("the API has no container")
		}
		if foo, _, _ := unstructured.NestedString(containers[0].(map[string]any), "resources", "limits", "example.com/foo"); foo != "2" {
			t.Errorf("the API's example.com/foo limit is %q, want 2", foo)
		}
		claims, _, _ := unstructured.NestedSlice(d.get("StatefulSet.apps/v1", "good-elastic").Object, "spec", "volumeClaimTemplates")
		if len(claims) != 2 {
			t.Fatalf("%d volumeClaimTemplates, want 2", len(claims))
		}
		for _, c := range claims {
			if class, _, _ := unstructured.NestedString(c.(map[string]any), "spec", "storageClassName"); class != "fast-ssd" {
				t.Errorf("a volumeClaimTemplate has storageClassName %q", class)
			}
		}
		d.get("CronJob.batch/v1", "good-snapshots")
		if class, _, _ := unstructured.NestedString(d.get("Ingress.networking.k8s.io/v1", "good-api").Object, "spec", "ingressClassName"); class != "nginx" {
			t.Errorf("ingressClassName %q", class)
		}
	}}

	// The rest with a good value: an external Elasticsearch by
	// urlSecretRef, and the seed's route.host.
	tests["good values, external Elasticsearch and route.host"] = accepted{name: "external", spec: map[string]any{
		"elasticsearch": map[string]any{"urlSecretRef": map[string]any{"name": "es-url", "key": "url"}},
		"route":         map[string]any{"host": "monocle.example.com"},
		"secretRef":     map[string]any{"name": "team-tokens"},
		"configMapRef":  map[string]any{"name": "team-config"},
	}, check: func(t *testing.T, d *driver) {
		if host, _, _ := unstructured.NestedSlice(d.get("Ingress.networking.k8s.io/v1", "external-api").Object, "spec", "rules"); len(host) != 1 {
			t.Errorf("Ingress rules %v", host)
		}
	}}

	for _, name := range slices.Sorted(maps.Keys(tests)) {
		tc := tests[name]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := restrictedNamespace(t)
			d, warnings := newWarningDriver(t, ns)
			for _, o := range tc.objects {
				obj := &unstructured.Unstructured{Object: o}
				if _, err := d.dyn.Resource(childTypeOf(obj.GetKind()).gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
					t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
			createReferenced(t, ns, tc.spec)

			if err := dryRunMonocle(d, tc.name, tc.spec); err != nil {
				t.Fatalf("the CRD refuses it: %s", clip(err.Error()))
			}
			d.createMonocle(tc.name, tc.spec)
			d.converge(tc.name) // creates and updates every child for real
			m := d.monocle(tc.name)
			if c := conditionOf(m, condition.ConditionSpecApplied); c["status"] != "True" {
				t.Fatalf("SpecApplied %v", c)
			}
			children := d.children(m.GetUID())
			if n := len(children["Deployment.apps/v1"]); n < 1 {
				t.Errorf("no Deployment")
			}
			if tc.check != nil {
				tc.check(t, d)
			}
			if len(warnings.messages) > 0 {
				t.Logf("warnings: %v", warnings.messages)
			}
		})
	}
}

// localSync POSTs a sync request for a Monocle built here (never stored)
// with that spec, no children and no related objects.
func localSync(d *driver, spec map[string]any) (*unstructured.Unstructured, syncAnswer) {
	d.t.Helper()
	parent := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": hook.Group + "/" + hook.Version, "kind": hook.Kind,
		"metadata": map[string]any{"name": "m", "namespace": d.ns, "uid": validityUID, "generation": int64(1)},
		"spec":     spec,
	}}
	children := map[string]any{}
	for _, ct := range childTypes {
		children[ct.key] = map[string]any{}
	}
	var answer syncAnswer
	d.post("/sync", map[string]any{
		"controller": map[string]any{"spec": map[string]any{"generateSelector": true}},
		"parent":     parent.Object,
		"children":   children,
		"related":    map[string]any{},
		"finalizing": false,
	}, &answer)
	return parent, answer
}

// dryRunChildren creates every child of the answer with a server-side dry
// run, as the driver creates a missing child under Metacontroller's
// default apply, and returns the API server's refusals.
func dryRunChildren(d *driver, parent *unstructured.Unstructured, answer syncAnswer) []string {
	d.t.Helper()
	var errs []string
	for _, child := range answer.Children {
		obj := (&unstructured.Unstructured{Object: child}).DeepCopy()
		ct := childTypeOf(obj.GetKind())
		if obj.GetNamespace() == "" {
			obj.SetNamespace(d.ns)
		}
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["controller-uid"] = string(parent.GetUID())
		obj.SetLabels(labels)
		if err := mcapply.SetLastApplied(obj.Object, obj.Object); err != nil {
			d.t.Fatal(err)
		}
		obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: parent.GetAPIVersion(), Kind: parent.GetKind(), Name: parent.GetName(),
			UID: parent.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
		_, err := d.dyn.Resource(ct.gvr).Namespace(d.ns).Create(context.Background(), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s %s: %s", obj.GetKind(), clip(obj.GetName()), clip(err.Error())))
		}
	}
	return errs
}

// dryRunMonocle creates the Monocle with a server-side dry run.
func dryRunMonocle(d *driver, name string, spec map[string]any) error {
	m := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": hook.Group + "/" + hook.Version, "kind": hook.Kind,
		"metadata": map[string]any{"name": name, "namespace": d.ns},
		"spec":     spec,
	}}
	_, err := d.dyn.Resource(monocleGVR).Namespace(d.ns).Create(context.Background(), m, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// createReferenced creates the Secrets and the ConfigMap the spec names
// that the hook reads (so that none is ReferenceNotFound), unless already
// there.
func createReferenced(t testing.TB, ns string, spec map[string]any) {
	t.Helper()
	ctx := context.Background()
	create := func(o client.Object) {
		if err := k8sClient.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
	secrets := map[string]map[string]string{}
	if name, _, _ := unstructured.NestedString(spec, "secretRef", "name"); name != "" {
		secrets[name] = map[string]string{"GITHUB_TOKEN": "ghp_e2e"}
	}
	if name, _, _ := unstructured.NestedString(spec, "elasticsearch", "urlSecretRef", "name"); name != "" {
		key, _, _ := unstructured.NestedString(spec, "elasticsearch", "urlSecretRef", "key")
		if secrets[name] == nil {
			secrets[name] = map[string]string{}
		}
		secrets[name][key] = "http://es.example.com:9200"
	}
	for name, data := range secrets {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}
		create(s)
	}
	if name, _, _ := unstructured.NestedString(spec, "configMapRef", "name"); name != "" {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data: map[string]string{"config.yaml": "workspaces:\n  - name: demo\n    crawlers: []\n"}}
		create(cm)
	}
}

// answerCondition is a condition of the answer's status, or nil.
func answerCondition(a syncAnswer, typ string) map[string]any {
	conds, _ := a.Status["conditions"].([]any)
	for _, c := range conds {
		if c, ok := c.(map[string]any); ok && c["type"] == typ {
			return c
		}
	}
	return nil
}

func childNames(a syncAnswer) []string {
	var out []string
	for _, child := range a.Children {
		o := &unstructured.Unstructured{Object: child}
		out = append(out, o.GetKind()+"/"+clip(o.GetName()))
	}
	return out
}

func clipCondition(c map[string]any) string {
	if c == nil {
		return "<none>"
	}
	msg, _ := c["message"].(string)
	return fmt.Sprintf("%v, reason %v: %s", c["status"], c["reason"], clip(msg))
}

// clip keeps logs readable when a value is 40,000 characters.
func clip(s string) string {
	const n = 600
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s... (%d characters)", s[:n], len(s))
}
