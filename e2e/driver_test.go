package e2e

// A test driver that plays Metacontroller's part honestly, against the real
// API server: it reads the parent and its children from the server, keys the
// children as a v1 or v2 hook expects, asks the hook's customize endpoint
// which related objects to send, POSTs the sync request to the real HTTP
// handler, then applies the answer the way Metacontroller v4.17 does, each
// child in its own namespace (the parent's when the answer leaves it empty:
// pkg/controller/composite/hooks.go, applyNamespaceDefaults), keyed by
// kind, namespace and name (pkg/controller/common/manage_children.go):
// creating missing children (a create that meets an existing object is
// swallowed) (with the last-applied annotation, the
// controller ownerReference and the controller-uid label), updating the
// others through the three-way merge of internal/mcapply (InPlace) or
// server-side apply with field manager "metacontroller" and force, never
// updating Jobs in three-way mode (OnDelete), deleting every observed child
// the answer leaves out, and writing the answer's status (plus
// observedGeneration) through the status subresource. It records every
// write it makes (writes), so that a child answered outside its Monocle
// shows as a write outside the namespace.

import (
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/server"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/mcapply"
)

var monocleGVR = schema.GroupVersionResource{Group: hook.Group, Version: hook.Version, Resource: "monocles"}

// childType is one of the CompositeController's childResources.
type childType struct {
	key      string // the sync request's type key
	gvr      schema.GroupVersionResource
	onDelete bool
}

// childTypes are the hook's ChildKinds, which the CompositeController's
// childResources follow.
var childTypes = func() []childType {
	var out []childType
	for _, k := range wire.ChildKinds {
		gv := schema.FromAPIVersionAndKind(k.APIVersion, k.Kind).GroupVersion()
		out = append(out, childType{k.Key(), gv.WithResource(k.Resource), k.UpdateStrategy == "OnDelete"})
	}
	return out
}()

func childTypeOf(kind string) childType {
	for _, ct := range childTypes {
		if strings.HasPrefix(ct.key, kind+".") {
			return ct
		}
	}
	panic("no child type " + kind)
}

type driver struct {
	t testing.TB
	// requestBytes is the size of the last sync request posted.
	requestBytes int
	// storedSpec, when set, is sent as the parent's spec instead of the
	// one the server has: a Monocle stored before the CRD refused it.
	storedSpec map[string]any
	dyn        *dynamic.DynamicClient
	hookURL    string
	ns         string
	ssa        bool // Metacontroller's --apply-strategy=server-side-apply
	v2         bool // hook version v2: children keyed namespace/name
	// writes are every write the driver made, in order.
	writes []write
}

// write is one write to the API server: its verb and the object's type
// key, namespace and name.
type write struct{ verb, key, namespace, name string }

// writesOutside are the writes the driver made outside namespace ns.
func (d *driver) writesOutside(ns string) []write {
	return slices.DeleteFunc(slices.Clone(d.writes), func(w write) bool { return w.namespace == ns })
}

func newDriver(t testing.TB, ns string) *driver {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Random as in production: a key or password removed is made anew,
	// not the same again.
	s := server.New(hook.Env{Now: time.Now, Rand: cryptorand.Reader, Image: e2eHookImage}, slog.New(slog.NewJSONHandler(io.Discard, nil)), prometheus.NewRegistry(), server.Options{})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &driver{t: t, dyn: dyn, hookURL: srv.URL, ns: ns}
}

// newWarningDriver is a driver whose client keeps the API server's
// warnings (PodSecurity's, for one).
func newWarningDriver(t *testing.T, ns string) (*driver, *warningLog) {
	t.Helper()
	warnings := &warningLog{}
	c := *cfg
	c.WarningHandler = warnings
	d := newDriver(t, ns)
	d.dyn = mustDynamic(t, &c)
	return d, warnings
}

// result is what one sync did.
type result struct {
	answer                    syncAnswer
	created, updated, deleted []string
}

func (r result) changed() bool { return len(r.created)+len(r.updated)+len(r.deleted) > 0 }

type syncAnswer struct {
	Status   map[string]any   `json:"status"`
	Children []map[string]any `json:"children"`
}

func (d *driver) createMonocle(name string, spec map[string]any) *unstructured.Unstructured {
	d.t.Helper()
	m := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": hook.Group + "/" + hook.Version, "kind": hook.Kind,
		"metadata": map[string]any{"name": name, "namespace": d.ns},
		"spec":     spec,
	}}
	out, err := d.dyn.Resource(monocleGVR).Namespace(d.ns).Create(context.Background(), m, metav1.CreateOptions{})
	if err != nil {
		d.t.Fatalf("creating Monocle %s: %v", name, err)
	}
	return out
}

func (d *driver) monocle(name string) *unstructured.Unstructured {
	d.t.Helper()
	m, err := d.dyn.Resource(monocleGVR).Namespace(d.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		d.t.Fatalf("getting Monocle %s: %v", name, err)
	}
	return m
}

func (d *driver) setSpec(name string, spec map[string]any) {
	d.t.Helper()
	m := d.monocle(name)
	m.Object["spec"] = spec
	if _, err := d.dyn.Resource(monocleGVR).Namespace(d.ns).Update(context.Background(), m, metav1.UpdateOptions{}); err != nil {
		d.t.Fatalf("updating Monocle %s: %v", name, err)
	}
}

// children lists the children of a parent as Metacontroller observes them:
// labelled with its uid and controlled by it.
func (d *driver) children(uid types.UID) map[string]map[string]*unstructured.Unstructured {
	d.t.Helper()
	out := map[string]map[string]*unstructured.Unstructured{}
	for _, ct := range childTypes {
		out[ct.key] = map[string]*unstructured.Unstructured{}
		list, err := d.dyn.Resource(ct.gvr).Namespace(d.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "controller-uid=" + string(uid)})
		if err != nil {
			d.t.Fatalf("listing %s: %v", ct.key, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			if ref := metav1.GetControllerOfNoCopy(o); ref != nil && ref.UID == uid {
				out[ct.key][o.GetName()] = o
			}
		}
	}
	return out
}

// resourceVersions of every child, by type key and name.
func (d *driver) resourceVersions(name string) map[string]string {
	rv := map[string]string{}
	for key, objs := range d.children(d.monocle(name).GetUID()) {
		for n, o := range objs {
			rv[key+"/"+n] = o.GetResourceVersion()
		}
	}
	return rv
}

func (d *driver) post(path string, body any, out any) {
	d.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		d.t.Fatal(err)
	}
	if path == "/sync" {
		d.requestBytes = len(b)
	}
	resp, err := http.Post(d.hookURL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		d.t.Fatalf("%s: %d %s", path, resp.StatusCode, answer)
	}
	// Numbers as int64, as Metacontroller's unstructured objects hold them.
	if err := utiljson.Unmarshal(answer, out); err != nil {
		d.t.Fatalf("%s answered %s: %v", path, answer, err)
	}
}

// related asks the customize hook which objects to send, and reads them.
func (d *driver) related(parent *unstructured.Unstructured) map[string]map[string]any {
	var rules wire.CustomizeResponse
	d.post("/customize", map[string]any{"controller": map[string]any{}, "parent": parent.Object}, &rules)
	out := map[string]map[string]any{}
	for _, r := range rules.RelatedResources {
		gvr := schema.GroupVersionResource{Version: r.APIVersion, Resource: r.Resource}
		// Metacontroller refuses a rule in another namespace than the
		// parent's; one without names or namespace lists the cluster.
		if r.Namespace != d.ns || len(r.Names) == 0 {
			d.t.Fatalf("customize rule %+v: not by names in the parent's namespace %s", r, d.ns)
		}
		var items []unstructured.Unstructured
		for _, n := range r.Names {
			o, err := d.dyn.Resource(gvr).Namespace(r.Namespace).Get(context.Background(), n, metav1.GetOptions{})
			if err == nil {
				items = append(items, *o)
			} else if !apierrors.IsNotFound(err) {
				d.t.Fatal(err)
			}
		}
		for _, o := range items {
			key := o.GetKind() + "." + o.GetAPIVersion()
			if out[key] == nil {
				out[key] = map[string]any{}
			}
			out[key][d.key(&o)] = o.Object
		}
	}
	return out
}

func (d *driver) key(o *unstructured.Unstructured) string {
	if d.v2 {
		return o.GetNamespace() + "/" + o.GetName()
	}
	return o.GetName()
}

// sync runs one sync of the named Monocle.
func (d *driver) sync(name string) result {
	d.t.Helper()
	ctx := context.Background()
	parent := d.monocle(name)
	if d.storedSpec != nil {
		parent.Object["spec"] = d.storedSpec
	}
	uid := parent.GetUID()
	observed := d.children(uid)
	children := map[string]map[string]any{}
	for key, objs := range observed {
		children[key] = map[string]any{}
		for _, o := range objs {
			children[key][d.key(o)] = o.Object
		}
	}
	var res result
	d.post("/sync", map[string]any{
		"controller": map[string]any{"spec": map[string]any{"generateSelector": true}},
		"parent":     parent.Object,
		"children":   children,
		"related":    d.related(parent),
		"finalizing": false,
	}, &res.answer)

	desired := map[string]bool{}
	for _, child := range res.answer.Children {
		obj := &unstructured.Unstructured{Object: child}
		ct := childTypeOf(obj.GetKind())
		// What Metacontroller adds before applying: the parent's namespace
		// and, with generateSelector, the controller-uid label.
		if obj.GetNamespace() == "" {
			obj.SetNamespace(d.ns)
		}
		desired[ct.key+"/"+obj.GetNamespace()+"/"+obj.GetName()] = true
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["controller-uid"] = string(uid)
		obj.SetLabels(labels)
		client := d.dyn.Resource(ct.gvr).Namespace(obj.GetNamespace())
		var old *unstructured.Unstructured
		if obj.GetNamespace() == d.ns {
			old = observed[ct.key][obj.GetName()]
		}
		w := write{"", ct.key, obj.GetNamespace(), obj.GetName()}
		ref := metav1.OwnerReference{APIVersion: parent.GetAPIVersion(), Kind: parent.GetKind(), Name: parent.GetName(), UID: uid,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}

		if d.ssa {
			obj.SetOwnerReferences([]metav1.OwnerReference{ref})
			w.verb = "apply"
			d.writes = append(d.writes, w)
			out, err := serverSideApply(ctx, client, obj)
			if err != nil {
				d.t.Fatalf("server-side apply of %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
			switch {
			case old == nil:
				res.created = append(res.created, ct.key+"/"+obj.GetName())
			case out.GetResourceVersion() != old.GetResourceVersion():
				res.updated = append(res.updated, ct.key+"/"+obj.GetName())
			}
			continue
		}
		if old == nil {
			if err := mcapply.SetLastApplied(obj.Object, obj.Object); err != nil {
				d.t.Fatal(err)
			}
			obj.SetOwnerReferences([]metav1.OwnerReference{ref})
			w.verb = "create"
			d.writes = append(d.writes, w)
			if _, err := client.Create(ctx, obj, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
				continue
			} else if err != nil {
				d.t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
			res.created = append(res.created, ct.key+"/"+obj.GetName())
			continue
		}
		merged, changed, err := mcapply.Update(old.Object, obj.Object)
		if err != nil {
			d.t.Fatal(err)
		}
		if !changed || ct.onDelete {
			continue
		}
		w.verb = "update"
		d.writes = append(d.writes, w)
		if _, err := client.Update(ctx, &unstructured.Unstructured{Object: merged}, metav1.UpdateOptions{}); err != nil {
			d.t.Fatalf("updating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		res.updated = append(res.updated, ct.key+"/"+obj.GetName())
	}
	for _, ct := range childTypes {
		for n, o := range observed[ct.key] {
			if desired[ct.key+"/"+d.ns+"/"+n] || o.GetDeletionTimestamp() != nil {
				continue
			}
			d.writes = append(d.writes, write{"delete", ct.key, d.ns, n})
			uid := o.GetUID()
			err := d.dyn.Resource(ct.gvr).Namespace(d.ns).Delete(ctx, n, metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
			if err != nil && !apierrors.IsNotFound(err) {
				d.t.Fatalf("deleting %s %s: %v", ct.key, n, err)
			}
			res.deleted = append(res.deleted, ct.key+"/"+n)
		}
	}
	slices.Sort(res.created)
	slices.Sort(res.updated)
	slices.Sort(res.deleted)

	// The answer's status replaces the parent's, with observedGeneration;
	// written only when it differs.
	status := res.answer.Status
	status["observedGeneration"] = parent.GetGeneration()
	var current any = parent.Object["status"]
	if !jsonEqual(current, status) {
		parent.Object["status"] = status
		d.writes = append(d.writes, write{"status", "Monocle", d.ns, name})
		if _, err := d.dyn.Resource(monocleGVR).Namespace(d.ns).UpdateStatus(ctx, parent, metav1.UpdateOptions{}); err != nil {
			d.t.Fatalf("writing status: %v", err)
		}
	}
	return res
}

// serverSideApply applies obj as Metacontroller's server-side apply does:
// field manager "metacontroller", forced.
func serverSideApply(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	return client.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "metacontroller", Force: ptr.To(true)})
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y any
	json.Unmarshal(ja, &x)
	json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

// converge syncs until a sync changes nothing, at most three times, then
// checks that five more syncs change nothing at all on the server.
func (d *driver) converge(name string) result {
	d.t.Helper()
	var last result
	for i := 1; ; i++ {
		last = d.sync(name)
		if !last.changed() {
			break
		}
		if i == 3 {
			d.t.Fatalf("no convergence in 3 syncs: still created %v, updated %v, deleted %v", last.created, last.updated, last.deleted)
		}
	}
	d.steady(name)
	return last
}

// steady: five syncs leave every child's resourceVersion where it was.
func (d *driver) steady(name string) {
	d.t.Helper()
	before := d.resourceVersions(name)
	for i := 1; i <= 5; i++ {
		if r := d.sync(name); r.changed() {
			d.t.Fatalf("steady sync %d: created %v, updated %v, deleted %v", i, r.created, r.updated, r.deleted)
		}
	}
	if after := d.resourceVersions(name); !reflect.DeepEqual(before, after) {
		d.t.Fatalf("resourceVersions moved in steady state:\nbefore %v\nafter  %v", before, after)
	}
}

// e2eHookImage is the hook's image the snapshot CronJobs run here.
const e2eHookImage = "ghcr.io/change-metrics/monocle-hook:e2e"

// randReader is a fixed random source: the tests do not need secrecy.
type randReader struct{}

func (randReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(i*7 + 3)
	}
	return len(p), nil
}

type warningLog struct{ messages []string }

func (w *warningLog) HandleWarningHeader(code int, agent string, text string) {
	w.messages = append(w.messages, text)
}

func mustDynamic(t *testing.T, c *rest.Config) *dynamic.DynamicClient {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

func clientKey(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}
