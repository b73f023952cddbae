package hook

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/applied"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// Forged last-applied annotations: what anyone who may edit a child may
// write, each naming another object than the child it sits on.
var forgeries = map[string]struct {
	kind, name, annotation string
}{
	"a ConfigMap of kube-system": {"ConfigMap", "monocle-sample-api",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"coredns","namespace":"kube-system"},"data":{"Corefile":"evil"}}`},
	"a privileged Deployment of kube-system": {"Deployment", "monocle-sample-api",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"pwn","namespace":"kube-system"},"spec":{"selector":{"matchLabels":{"a":"b"}},` +
			`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"hostPID":true,"containers":[{"name":"x","image":"evil","securityContext":{"privileged":true},` +
			`"volumeMounts":[{"name":"host","mountPath":"/host"}]}],"volumes":[{"name":"host","hostPath":{"path":"/"}}]}}}}`},
	"the child's own name in another namespace": {"Deployment", "monocle-sample-crawler",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"monocle-sample-crawler","namespace":"kube-system"}}`},
	"a Secret of another namespace": {"Secret", "monocle-sample-api",
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"monocle-sample-api","namespace":"team-b"},"data":{"k":"dg=="}}`},
	"another Monocle's child": {"ConfigMap", "monocle-sample-api",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other-api","namespace":"default"},"data":{"config.yaml":"evil"}}`},
	"another kind": {"Service", "monocle-sample-api",
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"monocle-sample-api"},"roleRef":{"kind":"ClusterRole","name":"cluster-admin"}}`},
	"a namespace that is not a string": {"StatefulSet", "monocle-sample-elastic",
		`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"monocle-sample-elastic","namespace":["kube-system"]}}`},
	"metadata that is not an object": {"Service", "monocle-sample-elastic",
		`{"apiVersion":"v1","kind":"Service","metadata":"kube-system/x"}`},
	"a name that is not a string": {"Secret", "monocle-sample-api",
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":null,"namespace":"default"}}`},
}

// A forged last-applied copy is never answered: the hook holds the child it
// sits on as observed, in its own namespace and under its own name, whether
// a bad spec holds every child or a refused config holds the pods'.
func TestForgedLastAppliedStaysInItsMonocle(t *testing.T) {
	specs := map[string]string{
		"InvalidSpec":    `{"publicURL":"not a url"}`,
		"ConfigInvalid":  `{"config":"workspaces:\n  - name: my team\n"}`,
		"a spec applied": ``,
	}
	for name, f := range forgeries {
		for reason, spec := range specs {
			t.Run(name+", "+reason, func(t *testing.T) {
				req := fixture(t, "sync-v1-all-ready-job-complete")
				if spec != "" {
					req.Parent.Spec = json.RawMessage(spec)
				}
				forge(t, req, f.kind, f.name, f.annotation)
				resp, err := Sync(req, testEnv())
				if err != nil {
					t.Fatalf("Sync: %v", err)
				}
				b, _ := json.Marshal(resp)
				a := decodeAnswer(t, b)
				if spec != "" {
					if got := a.Status.Condition(condition.ConditionSpecApplied).Reason; got != reason {
						t.Fatalf("SpecApplied's reason %s, want %s", got, reason)
					}
				}
				assertInMonocle(t, req, a)
				if strings.Contains(string(b), "evil") || strings.Contains(string(b), "cluster-admin") {
					t.Errorf("the forgery's content is in the answer: %s", b)
				}
			})
		}
	}
}

// forge writes a last-applied annotation on an observed child.
func forge(t testing.TB, req *wire.SyncRequest, kind, name, annotation string) {
	t.Helper()
	for _, c := range wire.Observe(req.Children, req.Parent.Metadata.Namespace).All() {
		if c.Type.Kind == kind && c.Object.GetName() == name {
			c.Object.SetAnnotations(map[string]string{applied.Annotation: annotation})
			return
		}
	}
	t.Fatalf("no observed %s %s", kind, name)
}

// assertInMonocle: every child answered is of a kind of child, in the
// parent's namespace (or none) and named as a child of this Monocle or an
// observed child of its kind in that namespace. Written apart from
// checkBoundary, from the request's JSON, so that each checks the other.
func assertInMonocle(t testing.TB, req *wire.SyncRequest, a answer) {
	t.Helper()
	ns := req.Parent.Metadata.Namespace
	body, err := json.Marshal(req.Children)
	if err != nil {
		t.Fatal(err)
	}
	var children map[string]map[string]struct {
		Metadata struct{ Namespace, Name string }
	}
	if err := json.Unmarshal(body, &children); err != nil {
		t.Fatal(err)
	}
	name := regexp.QuoteMeta(req.Parent.Metadata.Name)
	own := regexp.MustCompile(`^` + name + `-(api|elastic|crawler|snapshots|config-[0-9a-f]{10}|update-idents-[0-9a-f]{10})$`)
	for _, c := range a.Children {
		kind, _ := c["kind"].(string)
		apiVersion, _ := c["apiVersion"].(string)
		key := kind + "." + apiVersion
		if !slices.ContainsFunc(wire.ChildKinds, func(k wire.ChildKind) bool { return k.Key() == key }) {
			t.Errorf("a child of kind %s", key)
			continue
		}
		childNS, childName := nestedString(c, "metadata", "namespace"), nestedString(c, "metadata", "name")
		if md, _ := c["metadata"].(map[string]any); md["namespace"] != nil && childNS != ns {
			t.Errorf("%s %s in namespace %v, not %q", kind, childName, md["namespace"], ns)
		}
		observed := false
		for _, o := range children[key] {
			observed = observed || (o.Metadata.Name == childName && (o.Metadata.Namespace == "" || o.Metadata.Namespace == ns))
		}
		if !own.MatchString(childName) && !observed {
			t.Errorf("%s %q is neither the hook's name nor an observed child's", kind, childName)
		}
	}
}

// An observed object of another namespace (a v2 key says where) is neither
// read nor answered, whatever its name.
func TestObservedChildOfAnotherNamespaceIsNotAnswered(t *testing.T) {
	req := fixture(t, "sync-v2-observed-children")
	cm := req.Children.ConfigMaps["default/team-b-api"].DeepCopy()
	cm.Namespace = "kube-system"
	req.Children.ConfigMaps = map[string]*corev1.ConfigMap{"kube-system/team-b-api": cm}
	for _, spec := range []string{`{"publicURL":"not a url"}`, string(req.Parent.Spec)} {
		req.Parent.Spec = json.RawMessage(spec)
		resp, err := Sync(req, testEnv())
		if err != nil {
			t.Fatalf("Sync: %v", err)
		}
		b, _ := json.Marshal(resp)
		if strings.Contains(string(b), "kube-system") {
			t.Errorf("spec %s: kube-system in the answer", spec)
		}
		assertInMonocle(t, req, decodeAnswer(t, b))
	}
}

// The guard refuses every way out it knows, and lets the hook's own and
// the observed children through.
func TestCheckBoundary(t *testing.T) {
	n := instance.For("m")
	obs := wire.Children{ConfigMaps: map[string]*corev1.ConfigMap{"odd": {ObjectMeta: metav1.ObjectMeta{Name: "odd"}}}}
	deployment := func(ns, name string) *appsv1.Deployment {
		return &appsv1.Deployment{TypeMeta: wire.TypeDeployment, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	tests := map[string]struct {
		child wire.Child
		ok    bool
	}{
		"the API":                              {deployment("", "m-api"), true},
		"the API, in the namespace":            {deployment("ns", "m-api"), true},
		"a mounted config":                     {held(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m-config-0123456789"}}`), true},
		"an update-idents Job":                 {held(t, `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"m-update-idents-abcdef0123"}}`), true},
		"an observed name":                     {held(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"odd"}}`), true},
		"another namespace":                    {deployment("kube-system", "m-api"), false},
		"another namespace, raw":               {held(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m-api","namespace":"x"}}`), false},
		"another Monocle's child":              {deployment("ns", "other-api"), false},
		"Monocle m-config-x's API":             {held(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m-config-x-api"}}`), false},
		"an observed name of another kind":     {held(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"odd"}}`), false},
		"a kind not of the table":              {held(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"m-api"}}`), false},
		"a version not of the table":           {held(t, `{"apiVersion":"apps/v1beta1","kind":"Deployment","metadata":{"name":"m-api"}}`), false},
		"a namespace that is no string":        {held(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m-api","namespace":1}}`), false},
		"a namespace with a terminal's escape": {held(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m-api","namespace":"\u001b]52;c;eA==\u0007"}}`), false},
		"a list with a terminal's escape":      {held(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m-api","namespace":["\u001b]52;c;eA==\u0007"]}}`), false},
		"no Kubernetes object":                 {struct{ Kind string }{"ConfigMap"}, false},
	}
	for name, tc := range tests {
		err := checkBoundary([]wire.Child{tc.child}, "ns", n, obs)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrOutsideMonocle)) {
			t.Errorf("%s: %v, want ok %v", name, err, tc.ok)
		}
		if err != nil && !printable.Clean(err.Error()) {
			t.Errorf("%s: the error carries a control character: %q", name, err)
		}
	}
}

// FuzzBoundary feeds Sync observed children that whoever may edit them
// could have written: any last-applied annotation, any managedFields entry
// of Metacontroller's, any name, any namespace. Every child answered stays
// in its Monocle, and the guard never fires: a request it refused would
// leave the Monocle's status unwritten.
func FuzzBoundary(f *testing.F) {
	for _, forged := range forgeries {
		f.Add(uint8(0), forged.annotation, `{"f:spec":{"f:replicas":{}}}`, "", "", true)
	}
	f.Add(uint8(4), `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"monocle-sample-api","namespace":"default"}}`, `{"f:metadata":{"f:namespace":{},"f:name":{}}}`, "", "default", false)
	f.Add(uint8(1), "null", "{}", "other-api", "kube-system", true)
	// The recorded request less its managedFields, which are half its
	// bytes: each run decodes it twice, and gives one child its own.
	recorded := fixture(f, "sync-v1-all-ready-job-complete")
	for _, c := range wire.Observe(recorded.Children, recorded.Parent.Metadata.Namespace).All() {
		c.Object.SetManagedFields(nil)
	}
	base, err := json.Marshal(recorded)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, index uint8, annotation, fields, name, namespace string, invalid bool) {
		req := decodeRequest(t, base)
		if invalid {
			req.Parent.Spec = json.RawMessage(`{"publicURL":"not a url"}`)
		}
		all := wire.Observe(req.Children, req.Parent.Metadata.Namespace).All()
		obj := all[int(index)%len(all)].Object
		obj.SetAnnotations(map[string]string{applied.Annotation: annotation})
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: applied.Manager, Operation: metav1.ManagedFieldsOperationApply,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}})
		if name != "" {
			obj.SetName(name)
		}
		if namespace != "" {
			obj.SetNamespace(namespace)
		}
		// As it arrives: through JSON (which makes any string valid UTF-8);
		// one that JSON cannot carry (managedFields that are not JSON) never
		// arrives.
		body, err := json.Marshal(req)
		if err != nil {
			return
		}
		req = decodeRequest(t, body)
		resp, err := Sync(req, testEnv())
		if err != nil {
			t.Fatalf("Sync: %v", err)
		}
		b, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		assertInMonocle(t, req, decodeAnswer(t, b))
	})
}

// held is a child as lastAppliedChild answers it: a JSON map.
func held(t *testing.T, s string) wire.Child {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
