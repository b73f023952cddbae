package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/change-metrics/monocle-hook/internal/mcapply"
)

// keptDefaults are the fields of the hook's answer the API server would
// default to the same value, answered all the same, and why: leaving them
// out would let them drift. Under server-side apply (the shipped values) and
// under the three-way merge alike, Metacontroller sets again only what the
// answer carries: an edit by anyone else to a field it leaves out stays
// (TestKeptDefaultsHoldAgainstEdits shows each). Each key is a kind and a
// path, list indices written [].
var keptDefaults = map[string]string{
	// One single-node Elasticsearch: a second replica would be a second
	// node with its own volume and none of the data.
	"StatefulSet.spec.replicas": "enforced: one Elasticsearch",
	// The spec's elasticsearch.deleteDataOnDelete, Retain by default: an
	// edit to Delete would lose the data with the Monocle.
	"StatefulSet.spec.persistentVolumeClaimRetentionPolicy": "enforced: the spec's retention of the data",
	// The spec's api.replicas (1 by default), and one crawler: two would
	// crawl everything twice.
	"Deployment.spec.replicas": "enforced: the spec's replicas, one crawler",
	// The API's RollingUpdate (the crawler's is Recreate): an edit to
	// Recreate would take the web UI down at each rollout.
	"Deployment.spec.strategy": "enforced: the API's rollouts",
	// The spec's elasticsearch.snapshots.suspend.
	"CronJob.spec.suspend": "enforced: the spec's suspend",
	// In a list Metacontroller's three-way merge replaces whole (a list of
	// no merge key: ingress), answered as stored: else the rule differs from
	// the stored one at every sync, and is written again (TestListsReplacedWhole).
	"NetworkPolicy.spec.ingress[].ports[].protocol": "in a list replaced whole",
	// An immutable field, answered for a StatefulSet that exists exactly as
	// it is stored (hook/elastic/statefulset.go), and for a new one as the
	// server stores it: a claim template cannot change, and under
	// server-side apply a field Metacontroller stops applying is removed.
	"StatefulSet.spec.volumeClaimTemplates[].apiVersion":      "immutable, answered as stored",
	"StatefulSet.spec.volumeClaimTemplates[].kind":            "immutable, answered as stored",
	"StatefulSet.spec.volumeClaimTemplates[].spec.volumeMode": "immutable, answered as stored",
	"StatefulSet.spec.volumeClaimTemplates[].status":          "immutable, answered as stored",
}

// TestAnswerCarriesNoServerDefault: for the children the hook answers for
// each example, converged, each field is left out in turn and the child
// created again (dry run) in a namespace of its own: a field whose absence
// stores the very same object is one the API server defaults, which the
// answer must not carry (issue 52: each costs an entry in the child's
// managedFields, its last-applied annotation and Metacontroller's cache),
// unless keptDefaults says why. A field that the server refuses to go
// without, or defaults otherwise, is the hook's choice.
func TestAnswerCarriesNoServerDefault(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	probeNS := createNamespace(t, nil)
	seen := map[string]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			d := newDriver(t, restrictedNamespace(t))
			name := d.createExample(f)
			answer := d.converge(name).answer
			for _, c := range answer.Children {
				child := &unstructured.Unstructured{Object: c}
				for _, path := range serverDefaults(t, d, probeNS, child) {
					key := child.GetKind() + "." + path
					seen[key] = true
					if _, ok := keptDefaults[key]; !ok {
						t.Errorf("%s %s answers %s, which the API server defaults to the same value", child.GetKind(), child.GetName(), path)
					}
				}
			}
		})
	}
	for key := range keptDefaults {
		if !seen[key] {
			t.Errorf("keptDefaults names %s, which no answer carries as a default: remove it", key)
		}
	}
}

// serverDefaults returns the fields of child (outside its metadata) that the
// API server would default to the same value: created without one (dry
// run, in namespace ns), the child is stored the same. A field found so is
// not looked into further.
func serverDefaults(t *testing.T, d *driver, ns string, child *unstructured.Unstructured) []string {
	t.Helper()
	client := d.dyn.Resource(childTypeOf(child.GetKind()).gvr).Namespace(ns)
	stored := func(obj map[string]any) (string, error) {
		u := &unstructured.Unstructured{Object: obj}
		u.SetNamespace(ns)
		out, err := client.Create(context.Background(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return "", err
		}
		// What the server makes anew on every create.
		for _, f := range []string{"uid", "creationTimestamp", "resourceVersion", "managedFields", "generation"} {
			unstructured.RemoveNestedField(out.Object, "metadata", f)
		}
		unstructured.RemoveNestedField(out.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(out.Object, "spec", "clusterIPs")
		b, err := json.Marshal(out.Object)
		return string(b), err
	}
	whole, err := stored(child.DeepCopy().Object)
	if err != nil {
		t.Fatalf("%s %s as answered: %v", child.GetKind(), child.GetName(), err)
	}
	var found []string
	var walk func(path []any, v any)
	walk = func(path []any, v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				p := append(slices.Clone(path), k)
				if len(p) == 1 && (k == "metadata" || k == "apiVersion" || k == "kind") {
					continue
				}
				without := child.DeepCopy().Object
				removeAt(without, p)
				if got, err := stored(without); err == nil && got == whole {
					found = append(found, pathString(p))
					continue
				}
				walk(p, v[k])
			}
		case []any:
			for i, e := range v {
				walk(append(slices.Clone(path), i), e)
			}
		}
	}
	walk(nil, child.Object)
	return found
}

// removeAt deletes the map key at the end of path.
func removeAt(obj any, path []any) {
	for _, p := range path[:len(path)-1] {
		switch p := p.(type) {
		case string:
			obj = obj.(map[string]any)[p]
		case int:
			obj = obj.([]any)[p]
		}
	}
	delete(obj.(map[string]any), path[len(path)-1].(string))
}

// pathString writes a path as keptDefaults does: spec.ports[].protocol.
func pathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		case int:
			b.WriteString("[]")
		}
	}
	return b.String()
}

// BenchmarkStoredChildren measures what a new Monocle's children cost where
// they are stored and cached (Metacontroller caches every object of its child
// kinds whole): their managedFields, their last-applied annotations and the
// whole objects, in bytes of JSON per Monocle, once converged through the
// driver as Metacontroller applies them, under server-side apply (the
// shipped values) and under its default three-way merge. BENCHMARKS.md has
// the figures.
func BenchmarkStoredChildren(b *testing.B) {
	for _, ssa := range []bool{true, false} {
		b.Run(map[bool]string{true: "server-side-apply", false: "three-way-merge"}[ssa], func(b *testing.B) {
			var managed, annotations, whole int
			n := 0
			for b.Loop() {
				managed, annotations, whole = 0, 0, 0
				n++
				storedChildren(b, ssa, func(o *unstructured.Unstructured) {
					mf, _ := json.Marshal(o.GetManagedFields())
					managed += len(mf)
					annotations += len(o.GetAnnotations()[mcapply.LastAppliedAnnotation])
					all, _ := json.Marshal(o.Object)
					whole += len(all)
				})
			}
			b.ReportMetric(float64(managed), "managedFields-B/Monocle")
			b.ReportMetric(float64(annotations), "last-applied-B/Monocle")
			b.ReportMetric(float64(whole), "stored-B/Monocle")
		})
	}
}

// storedChildren converges a new Monocle of the sample's spec in a
// namespace of its own, its children applied by server-side apply or by
// the three-way merge, and calls each with every child as stored.
func storedChildren(tb testing.TB, ssa bool, each func(*unstructured.Unstructured)) {
	tb.Helper()
	d := newDriver(tb, restrictedNamespace(tb))
	d.ssa = ssa
	d.createMonocle("m", map[string]any{})
	d.converge("m")
	for _, objs := range d.children(d.monocle("m").GetUID()) {
		for _, o := range objs {
			each(o)
		}
	}
}

// snapshotsExample has a child of every kind that carries a kept default.
const snapshotsExample = "../examples/monocle-snapshots.yaml"

// TestKeptDefaultsHoldAgainstEdits shows, for each field keptDefaults keeps
// as enforced, what leaving it out would do,
// under server-side apply as the shipped values run Metacontroller: another
// manager's edit (kubectl edit, scale or patch) to a field the answer leaves
// out stays through Metacontroller's next apply; answered, the field is set
// back.
func TestKeptDefaultsHoldAgainstEdits(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, kind, suffix string
		leaveOut           func(obj map[string]any)
		edit               string // a strategic merge patch
		edited             func(obj map[string]any) bool
	}{
		{"a second Elasticsearch", "StatefulSet", "-elastic",
			func(o map[string]any) { unstructured.RemoveNestedField(o, "spec", "replicas") },
			`{"spec":{"replicas":2}}`,
			func(o map[string]any) bool { n, _, _ := unstructured.NestedInt64(o, "spec", "replicas"); return n == 2 }},
		{"the data deleted with the Monocle", "StatefulSet", "-elastic",
			func(o map[string]any) {
				unstructured.RemoveNestedField(o, "spec", "persistentVolumeClaimRetentionPolicy")
			},
			`{"spec":{"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete"}}}`,
			func(o map[string]any) bool {
				p, _, _ := unstructured.NestedString(o, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted")
				return p == "Delete"
			}},
		{"the API scaled", "Deployment", "-api",
			func(o map[string]any) { unstructured.RemoveNestedField(o, "spec", "replicas") },
			`{"spec":{"replicas":3}}`,
			func(o map[string]any) bool { n, _, _ := unstructured.NestedInt64(o, "spec", "replicas"); return n == 3 }},
		{"a second crawler", "Deployment", "-crawler",
			func(o map[string]any) { unstructured.RemoveNestedField(o, "spec", "replicas") },
			`{"spec":{"replicas":2}}`,
			func(o map[string]any) bool { n, _, _ := unstructured.NestedInt64(o, "spec", "replicas"); return n == 2 }},
		{"the API recreated at each rollout", "Deployment", "-api",
			func(o map[string]any) { unstructured.RemoveNestedField(o, "spec", "strategy") },
			`{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}`,
			func(o map[string]any) bool {
				s, _, _ := unstructured.NestedString(o, "spec", "strategy", "type")
				return s == "Recreate"
			}},
		{"snapshots suspended", "CronJob", "-snapshots",
			func(o map[string]any) { unstructured.RemoveNestedField(o, "spec", "suspend") },
			`{"spec":{"suspend":true}}`,
			func(o map[string]any) bool { s, _, _ := unstructured.NestedBool(o, "spec", "suspend"); return s }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDriver(t, restrictedNamespace(t))
			d.ssa = true
			name := d.createExample(snapshotsExample)
			answer := d.converge(name).answer
			var answered *unstructured.Unstructured
			for _, c := range answer.Children {
				if u := (&unstructured.Unstructured{Object: c}); u.GetKind() == tc.kind && u.GetName() == name+tc.suffix {
					answered = u
				}
			}
			if answered == nil {
				t.Fatalf("no %s %s in the answer", tc.kind, name+tc.suffix)
			}
			client := d.dyn.Resource(childTypeOf(tc.kind).gvr).Namespace(d.ns)
			stored, err := client.Get(ctx, answered.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The answer as Metacontroller applies it.
			answered.SetNamespace(d.ns)
			answered.SetLabels(stored.GetLabels())
			answered.SetOwnerReferences(stored.GetOwnerReferences())
			without := answered.DeepCopy()
			tc.leaveOut(without.Object)
			if _, err := serverSideApply(ctx, client, without); err != nil {
				t.Fatalf("applying the answer without the field: %v", err)
			}
			if _, err := client.Patch(ctx, answered.GetName(), types.StrategicMergePatchType, []byte(tc.edit), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatalf("the edit: %v", err)
			}
			out, err := serverSideApply(ctx, client, without)
			if err != nil {
				t.Fatalf("applying the answer without the field over the edit: %v", err)
			}
			if !tc.edited(out.Object) {
				t.Fatalf("left out of the answer, the field did not keep the edit %s: the case shows nothing", tc.edit)
			}
			if out, err = serverSideApply(ctx, client, answered); err != nil {
				t.Fatalf("answered, the apply over the edit: %v", err)
			}
			if tc.edited(out.Object) {
				t.Errorf("answered, the field kept the edit %s", tc.edit)
			}
		})
	}
}

// TestDefaultsLeaveNothingRolling: a Monocle whose children were applied
// with every default the server fills in (all an earlier hook answered, and
// more) is synced by this hook, under each of Metacontroller's apply
// strategies: no child's content moves (a StatefulSet or a Deployment
// whose template moved would roll its pods), and the next syncs change
// nothing. (A Deployment's generation counts its annotations' changes too,
// the last-applied one's under the three-way merge: its pods roll only when
// its template moves.)
func TestDefaultsLeaveNothingRolling(t *testing.T) {
	ctx := context.Background()
	for _, ssa := range []bool{true, false} {
		t.Run(map[bool]string{true: "server-side apply", false: "three-way merge"}[ssa], func(t *testing.T) {
			d := newDriver(t, restrictedNamespace(t))
			d.ssa = ssa
			name := d.createExample(snapshotsExample)
			d.converge(name)
			uid := d.monocle(name).GetUID()
			// The old answer: each child as stored but what only the
			// server writes (its status, the ClusterIP it allocated).
			for key, objs := range d.children(uid) {
				client := d.dyn.Resource(childTypeOf(strings.SplitN(key, ".", 2)[0]).gvr).Namespace(d.ns)
				for _, o := range objs {
					old := &unstructured.Unstructured{Object: map[string]any{}}
					for k, v := range o.DeepCopy().Object {
						if k != "metadata" && k != "status" {
							old.Object[k] = v
						}
					}
					unstructured.RemoveNestedField(old.Object, "spec", "clusterIP")
					unstructured.RemoveNestedField(old.Object, "spec", "clusterIPs")
					old.SetName(o.GetName())
					old.SetNamespace(d.ns)
					old.SetLabels(o.GetLabels())
					var err error
					if ssa {
						old.SetOwnerReferences(o.GetOwnerReferences())
						_, err = serverSideApply(ctx, client, old)
					} else {
						if err := mcapply.SetLastApplied(o.Object, old.Object); err != nil {
							t.Fatal(err)
						}
						_, err = client.Update(ctx, o, metav1.UpdateOptions{})
					}
					if err != nil {
						t.Fatalf("applying the old answer of %s %s: %v", key, o.GetName(), err)
					}
				}
			}
			before := storedContent(d, uid)
			if r := d.sync(name); len(r.created)+len(r.deleted) > 0 {
				t.Fatalf("the sync over the old answer created %v, deleted %v", r.created, r.deleted)
			}
			after := storedContent(d, uid)
			for child, b := range before {
				if after[child] != b {
					t.Errorf("%s moved:\nold answer: %s\nnew answer: %s", child, b, after[child])
				}
			}
			d.steady(name)
		})
	}
}

// storedContent is each child of a Monocle as stored, but for its
// metadata: its content.
func storedContent(d *driver, uid types.UID) map[string]string {
	out := map[string]string{}
	for key, objs := range d.children(uid) {
		for _, o := range objs {
			c := o.DeepCopy()
			delete(c.Object, "metadata")
			b, err := json.Marshal(c.Object)
			if err != nil {
				d.t.Fatal(err)
			}
			out[key+"/"+o.GetName()] = string(b)
		}
	}
	return out
}

// TestListsReplacedWhole: Metacontroller's three-way merge replaces whole a
// list whose items have none of its merge keys (internal/mcapply, as
// pkg/dynamic/apply in v4.17.2), such as a NetworkPolicy's ingress rules:
// a default left out of an item there makes the answer differ from the
// stored object at every sync, which is then written again, forever.
// Answered as stored, the second sync writes nothing.
func TestListsReplacedWhole(t *testing.T) {
	ctx := context.Background()
	d := newDriver(t, restrictedNamespace(t))
	name := d.createExample(snapshotsExample)
	answer := d.converge(name).answer
	client := d.dyn.Resource(childTypeOf("NetworkPolicy").gvr).Namespace(d.ns)
	for _, c := range answer.Children {
		answered := &unstructured.Unstructured{Object: c}
		if answered.GetKind() != "NetworkPolicy" {
			continue
		}
		// Without the protocol of its port, as the server would default it.
		without := answered.DeepCopy()
		rules, _, _ := unstructured.NestedSlice(without.Object, "spec", "ingress")
		for _, r := range rules {
			for _, p := range r.(map[string]any)["ports"].([]any) {
				delete(p.(map[string]any), "protocol")
			}
		}
		if err := unstructured.SetNestedSlice(without.Object, rules, "spec", "ingress"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			desired    *unstructured.Unstructured
			writesMore bool
		}{{without, true}, {answered, false}} {
			var changed bool
			for range 2 {
				stored, err := client.Get(ctx, answered.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				desired := tc.desired.DeepCopy()
				desired.SetNamespace(d.ns)
				desired.SetLabels(stored.GetLabels())
				var merged map[string]any
				if merged, changed, err = mcapply.Update(stored.Object, desired.Object); err != nil {
					t.Fatal(err)
				}
				if changed {
					if _, err := client.Update(ctx, &unstructured.Unstructured{Object: merged}, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if changed != tc.writesMore {
				t.Errorf("answered as %v, the second sync writes: %v, want %v", tc.desired.Object["spec"], changed, tc.writesMore)
			}
		}
		return
	}
	t.Fatal("no NetworkPolicy in the answer")
}
