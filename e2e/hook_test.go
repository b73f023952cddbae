package e2e

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook"
)

func restrictedNamespace(t testing.TB) string {
	return createNamespace(t, map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	})
}

func (d *driver) get(key, name string) *unstructured.Unstructured {
	d.t.Helper()
	ct := childTypeOf(strings.SplitN(key, ".", 2)[0])
	o, err := d.dyn.Resource(ct.gvr).Namespace(d.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		d.t.Fatalf("getting %s %s: %v", key, name, err)
	}
	return o
}

// markReady writes a workload's status as its controller would once every
// replica is ready: there is no kubelet here.
func (d *driver) markReady(key, name string) {
	d.t.Helper()
	o := d.get(key, name)
	status := map[string]any{
		"observedGeneration": o.GetGeneration(), "replicas": int64(1), "readyReplicas": int64(1),
		"updatedReplicas": int64(1), "availableReplicas": int64(1),
	}
	if key == "StatefulSet.apps/v1" {
		status["currentReplicas"] = int64(1)
	}
	if replicas, ok, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); ok {
		for _, f := range []string{"replicas", "readyReplicas", "updatedReplicas", "availableReplicas"} {
			status[f] = replicas
		}
	}
	o.Object["status"] = status
	ct := childTypeOf(strings.SplitN(key, ".", 2)[0])
	if _, err := d.dyn.Resource(ct.gvr).Namespace(d.ns).UpdateStatus(context.Background(), o, metav1.UpdateOptions{}); err != nil {
		d.t.Fatalf("writing %s %s status: %v", key, name, err)
	}
}

func conditionOf(m *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(m.Object, "status", "conditions")
	for _, c := range conds {
		if c := c.(map[string]any); c["type"] == typ {
			return c
		}
	}
	return nil
}

func podAnnotation(o *unstructured.Unstructured, key string) string {
	v, _, _ := unstructured.NestedString(o.Object, "spec", "template", "metadata", "annotations", key)
	return v
}

func jobs(d *driver, name string) []string {
	var out []string
	for n := range d.children(d.monocle(name).GetUID())["Job.batch/v1"] {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// The hook is a fixed point under both of Metacontroller's apply
// strategies, and both hook versions' keys: it converges within 3 syncs,
// then 5 more change nothing on the server.
func TestConvergesAndStaysStill(t *testing.T) {
	for name, mode := range map[string]struct{ ssa, v2 bool }{
		"three-way merge, v1 keys":   {false, false},
		"three-way merge, v2 keys":   {false, true},
		"server-side apply, v1 keys": {true, false},
	} {
		t.Run(name, func(t *testing.T) {
			d := newDriver(t, restrictedNamespace(t))
			d.ssa, d.v2 = mode.ssa, mode.v2
			d.createMonocle("m", map[string]any{"publicURL": "http://localhost:8090"})
			d.converge("m")
			// Everything ready, the Job run: still a fixed point.
			d.markReady("StatefulSet.apps/v1", "m-elastic")
			d.markReady("Deployment.apps/v1", "m-api")
			d.markReady("Deployment.apps/v1", "m-crawler")
			d.converge("m")
			if got := jobs(d, "m"); len(got) != 1 {
				t.Fatalf("jobs %v", got)
			}
			m := d.monocle("m")
			if c := conditionOf(m, "Ready"); c["status"] != "True" {
				t.Errorf("Ready = %v", c)
			}
			d.steady("m")
		})
	}
}

func TestSecretEditRollsThePods(t *testing.T) {
	d := newDriver(t, restrictedNamespace(t))
	d.createMonocle("m", map[string]any{})
	d.converge("m")
	api, crawler := d.get("Deployment.apps/v1", "m-api"), d.get("Deployment.apps/v1", "m-crawler")
	secret := d.get("Secret.v1", "m-api")
	key, _, _ := unstructured.NestedString(secret.Object, "data", "CRAWLERS_API_KEY")

	// An admin adds a provider token by hand.
	unstructured.SetNestedField(secret.Object, base64.StdEncoding.EncodeToString([]byte("ghp_admin")), "data", "GITHUB_TOKEN")
	if _, err := d.dyn.Resource(childTypeOf("Secret").gvr).Namespace(d.ns).Update(context.Background(), secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := d.sync("m")
	if want := []string{"Deployment.apps/v1/m-api", "Deployment.apps/v1/m-crawler", "Secret.v1/m-api"}; !slices.Equal(r.updated, want) || len(r.created)+len(r.deleted) > 0 {
		t.Fatalf("updated %v created %v deleted %v, want updated %v", r.updated, r.created, r.deleted, want)
	}
	api2, crawler2 := d.get("Deployment.apps/v1", "m-api"), d.get("Deployment.apps/v1", "m-crawler")
	const h = hook.Group + "/secret-hash"
	if podAnnotation(api, h) == podAnnotation(api2, h) || podAnnotation(crawler, h) == podAnnotation(crawler2, h) {
		t.Error("the pod templates' secret hash did not change")
	}
	secret = d.get("Secret.v1", "m-api")
	token, _, _ := unstructured.NestedString(secret.Object, "data", "GITHUB_TOKEN")
	key2, _, _ := unstructured.NestedString(secret.Object, "data", "CRAWLERS_API_KEY")
	if token != base64.StdEncoding.EncodeToString([]byte("ghp_admin")) || key2 != key {
		t.Errorf("the Secret lost the admin's token or changed its key")
	}
	d.steady("m")
}

// A config edit gives exactly one new update-idents Job once the API runs
// it and is ready, and no other on later syncs.
func TestConfigEditRunsUpdateIdentsOnce(t *testing.T) {
	d := newDriver(t, restrictedNamespace(t))
	d.createMonocle("m", map[string]any{})
	d.converge("m")
	d.markReady("StatefulSet.apps/v1", "m-elastic")
	d.converge("m")
	if got := jobs(d, "m"); len(got) != 0 {
		t.Fatalf("a Job before the API is ready: %v", got)
	}
	d.markReady("Deployment.apps/v1", "m-api")
	d.converge("m")
	first := jobs(d, "m")
	if len(first) != 1 {
		t.Fatalf("jobs after the API is ready: %v", first)
	}

	cm := d.get("ConfigMap.v1", "m-api")
	unstructured.SetNestedField(cm.Object, "workspaces:\n  - name: demo\n    crawlers: []\n    idents:\n      - ident: Jane\n        aliases: [github.com/jane]\n", "data", "config.yaml")
	if _, err := d.dyn.Resource(childTypeOf("ConfigMap").gvr).Namespace(d.ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d.converge("m")
	if got := jobs(d, "m"); len(got) != 0 {
		t.Fatalf("jobs while the API rolls out the new config: %v (before %v)", got, first)
	}
	d.markReady("Deployment.apps/v1", "m-api")
	d.converge("m")
	second := jobs(d, "m")
	if len(second) != 1 || second[0] == first[0] {
		t.Fatalf("jobs after the idents edit: %v (before %v)", second, first)
	}
	got, _, _ := unstructured.NestedString(d.get("ConfigMap.v1", "m-api").Object, "data", "config.yaml")
	if !strings.Contains(got, "Jane") {
		t.Fatal("the admin's config edit was reverted")
	}
}

// mountedConfig is the ConfigMap a workload mounts as its config.
func mountedConfig(o *unstructured.Unstructured) string {
	vols, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
	for _, v := range vols {
		if name, _, _ := unstructured.NestedString(v.(map[string]any), "configMap", "name"); name != "" {
			return name
		}
	}
	return ""
}

func TestTwoMonoclesStayApart(t *testing.T) {
	d := newDriver(t, restrictedNamespace(t))
	d.createMonocle("a", map[string]any{})
	d.createMonocle("a-api", map[string]any{}) // its children's names start with the other's
	d.converge("a")
	d.converge("a-api")
	a, b := d.children(d.monocle("a").GetUID()), d.children(d.monocle("a-api").GetUID())
	for key, objs := range a {
		for n := range objs {
			if b[key][n] != nil {
				t.Errorf("both own %s %s", key, n)
			}
		}
	}
	for _, dep := range []string{"a-api", "a-api-api"} {
		sel, _, _ := unstructured.NestedStringMap(d.get("Deployment.apps/v1", dep).Object, "spec", "selector", "matchLabels")
		other := "a-api-api"
		if dep == "a-api-api" {
			other = "a-api"
		}
		labels, _, _ := unstructured.NestedStringMap(d.get("Deployment.apps/v1", other).Object, "spec", "template", "metadata", "labels")
		match := true
		for k, v := range sel {
			match = match && labels[k] == v
		}
		if match {
			t.Errorf("%s selects %s's pods", dep, other)
		}
	}
	d.steady("a")
	d.steady("a-api")
}

// A spec the schema accepts but the hook cannot honour (a heap larger than
// the memory) leaves every child as it was, and says so.
func TestInvalidSpecTouchesNothing(t *testing.T) {
	for name, ssa := range map[string]bool{"three-way merge": false, "server-side apply": true} {
		t.Run(name, func(t *testing.T) {
			d := newDriver(t, restrictedNamespace(t))
			d.ssa = ssa
			d.createMonocle("m", map[string]any{})
			d.converge("m")
			d.markReady("StatefulSet.apps/v1", "m-elastic")
			d.converge("m")
			before := d.resourceVersions("m")
			d.setSpec("m", map[string]any{"elasticsearch": map[string]any{"heap": "4g", "resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}}}})
			for range 3 {
				if r := d.sync("m"); r.changed() {
					t.Fatalf("a bad spec created %v, updated %v, deleted %v", r.created, r.updated, r.deleted)
				}
			}
			if after := d.resourceVersions("m"); !slicesEqualMaps(before, after) {
				t.Fatalf("resourceVersions moved:\nbefore %v\nafter  %v", before, after)
			}
			c := conditionOf(d.monocle("m"), "SpecApplied")
			if c["status"] != "False" || c["reason"] != "InvalidSpec" || !strings.Contains(c["message"].(string), "spec.elasticsearch.heap") {
				t.Errorf("SpecApplied = %v", c)
			}
		})
	}
}

func slicesEqualMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// createExample creates, as a user would, the Monocle of an example file,
// the ConfigMaps in it (as kubectl apply -f would) and the Secrets it names
// (as its comments ask you to create them: without them, no API nor crawler
// is made), and returns the Monocle's name.
func (d *driver) createExample(path string) string {
	t := d.t
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var spec map[string]any
	for _, doc := range strings.Split(string(b), "\n---") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		switch m["kind"] {
		case hook.Kind:
			name = m["metadata"].(map[string]any)["name"].(string)
			spec, _ = m["spec"].(map[string]any)
		case "ConfigMap":
			cm := &unstructured.Unstructured{Object: m}
			if _, err := d.dyn.Resource(childTypeOf("ConfigMap").gvr).Namespace(d.ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	createReferenced(t, d.ns, spec)
	d.createMonocle(name, spec)
	return name
}

// Every child the hook answers for each example is accepted in a namespace
// that enforces the restricted Pod Security level, with no warning.
func TestExamplesChildrenAreRestricted(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			ns := restrictedNamespace(t)
			d, warnings := newWarningDriver(t, ns)
			name := d.createExample(f)
			d.converge(name)
			if len(warnings.messages) > 0 {
				t.Errorf("warnings: %v", warnings.messages)
			}
			// Every example runs Monocle: its config passes the check.
			if n := len(d.children(d.monocle(name).GetUID())["Deployment.apps/v1"]); n < 1 {
				t.Errorf("no Deployment: SpecApplied %v", conditionOf(d.monocle(name), "SpecApplied"))
			}
		})
	}
}

// The schema rejects what it can, with a message naming the field.
func TestSchemaRejectsBadMonocles(t *testing.T) {
	ns := createNamespace(t, nil)
	d := newDriver(t, ns)
	tests := map[string]struct {
		name   string
		spec   map[string]any
		strict bool
		want   string
	}{
		"bad URL":                {"m", map[string]any{"publicURL": "localhost:8090"}, false, "spec.publicURL"},
		"URL with a path":        {"m", map[string]any{"publicURL": "https://example.com/monocle"}, false, "spec.publicURL"},
		"URL with a query":       {"m", map[string]any{"monoclePublicURL": "https://m.example.com/?a=1"}, false, "spec.monoclePublicURL"},
		"negative size":          {"m", map[string]any{"storageSize": "-1Gi"}, false, "storageSize must be a positive quantity"},
		"size not a quantity":    {"m", map[string]any{"elasticsearch": map[string]any{"storageSize": "lots"}}, false, "storageSize must be a positive quantity"},
		"unknown field":          {"m", map[string]any{"replicas": 3}, true, `unknown field "spec.replicas"`},
		"name too long":          {strings.Repeat("a", hook.MaxNameLength+1), map[string]any{}, false, "at most 38 characters"},
		"name not DNS-1035":      {"1abc", map[string]any{}, false, "DNS-1035"},
		"Elasticsearch, a space": {"m", map[string]any{"elasticsearch": map[string]any{"url": "http://es :9200"}}, false, "spec.elasticsearch.url: Invalid value: \"http://es :9200\": spec.elasticsearch.url in body should match"},
		"https Elasticsearch":    {"m", map[string]any{"elasticsearch": map[string]any{"url": "HTTPS://es:9200"}}, false, "spec.elasticsearch.url: Invalid value: \"HTTPS://es:9200\": must not be https://"},
		"url and secret":         {"m", map[string]any{"elasticsearch": map[string]any{"url": "http://es:9200", "urlSecretRef": map[string]any{"name": "s", "key": "k"}}}, false, "not both"},
		"snapshots keep 0":       {"m", map[string]any{"elasticsearch": map[string]any{"snapshots": map[string]any{"schedule": "@daily", "keep": 0}}}, false, "spec.elasticsearch.snapshots.keep"},
		"snapshots, no schedule": {"m", map[string]any{"elasticsearch": map[string]any{"snapshots": map[string]any{"keep": 3}}}, false, "spec.elasticsearch.snapshots.schedule: Required"},
		// As the API server checks a NetworkPolicy's peers.
		"peer of two kinds": {"m", peers(map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8"}, "podSelector": map[string]any{}}), false, "one kind of peer"},
		"peer of no kind":   {"m", peers(map[string]any{}), false, "one kind of peer"},
		"peer not a CIDR":   {"m", peers(map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0"}}), false, "must be a CIDR"},
		"except outside":    {"m", peers(map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8", "except": []any{"192.168.0.0/16"}}}), false, "strictly within cidr"},
		"except the whole":  {"m", peers(map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8", "except": []any{"10.0.0.0/8"}}}), false, "strictly within cidr"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": hook.Group + "/" + hook.Version, "kind": hook.Kind,
				"metadata": map[string]any{"name": tc.name}, "spec": tc.spec,
			}}
			opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
			if tc.strict {
				opts.FieldValidation = "Strict"
			}
			_, err := d.dyn.Resource(monocleGVR).Namespace(ns).Create(context.Background(), m, opts)
			if err == nil || !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an invalid error containing %q", err, tc.want)
			}
			t.Log(err)
		})
	}
}

// peers is a spec with one Elasticsearch peer.
func peers(peer map[string]any) map[string]any {
	return map[string]any{"networkPolicy": map[string]any{"elasticsearchPeers": []any{peer}}}
}
