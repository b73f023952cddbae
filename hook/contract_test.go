package hook

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// What Monocle itself needs (its 1.11.2 source): a config it accepts, one
// login key, one crawler at a time, plain-HTTP Elasticsearch.

// An existing Monocle whose config turns into one Monocle refuses keeps
// every child exactly as it is, whichever source the config comes from;
// fixing the config applies it.
func TestRefusedConfigHoldsThePods(t *testing.T) {
	const invalid = "workspaces:\n  - name: Demo\n"
	const fixed = "workspaces:\n  - name: demo\n    crawlers: []\n# fixed\n"
	userConfig := func(config string) wire.Related {
		return wire.Related{ConfigMaps: map[string]*corev1.ConfigMap{"team-config": {
			ObjectMeta: metav1.ObjectMeta{Name: "team-config"}, Data: map[string]string{configFile: config}}}}
	}
	tests := map[string]struct {
		spec        string
		related     func(config string) wire.Related
		edit        func(c *cluster, config string) // writes config at its source
		field       string
		fixedWrites []string
	}{
		"inline spec.config": {
			spec: baseSpec,
			edit: func(c *cluster, config string) {
				c.parent = setSpec(t, c.parent, withSpec(t, `{"config":`+jsonString(config)+`}`))
			},
			field: "spec.config",
		},
		"the user's ConfigMap": {
			spec:    withSpec(t, `{"configMapRef":{"name":"team-config"}}`),
			related: userConfig,
			field:   "spec.configMapRef.name",
		},
		"an admin's edit of the generated ConfigMap": {
			spec: baseSpec,
			edit: func(c *cluster, config string) {
				c.children["ConfigMap.v1"]["monocle-sample-api"]["data"].(map[string]any)[configFile] = config
			},
			field: "ConfigMap \"monocle-sample-api\" (generated, edited by hand)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := converged(t)
			c.parent = setSpec(t, c.parent, tc.spec)
			related := wire.Related{}
			if tc.related != nil {
				related = tc.related(defaultConfig)
			}
			sync := func() []byte {
				req := c.request(t)
				req.Related = related
				return syncJSON(t, req)
			}
			for range 3 {
				c.apply(t, sync())
				c.markReady()
			}
			if created, updated, deleted := c.apply(t, sync()); len(created)+len(updated)+len(deleted) > 0 {
				t.Fatalf("not converged: created %v, updated %v, deleted %v", created, updated, deleted)
			}

			set := func(config string) {
				if tc.related != nil {
					related = tc.related(config)
				} else {
					tc.edit(c, config)
				}
			}
			set(invalid)
			answer := sync()
			a := decodeAnswer(t, answer)
			cond := a.Status.Condition(condition.ConditionSpecApplied)
			if cond.Reason != condition.ReasonConfigInvalid || !strings.HasPrefix(cond.Message, tc.field) ||
				!strings.Contains(cond.Message, `workspaces[0].name`) {
				t.Errorf("SpecApplied %+v, want ConfigInvalid naming %s and the path", cond, tc.field)
			}
			if a.Status.Refused() == nil {
				t.Error("render and the invalid_spec metric would not count it")
			}
			// An admin's edit is adopted as it is (data unchanged, the
			// last-applied annotation recording it); nothing else moves.
			created, updated, deleted := c.apply(t, answer)
			if tc.edit != nil && len(updated) == 1 && updated[0] == "ConfigMap.v1/monocle-sample-api" && name == "an admin's edit of the generated ConfigMap" {
				updated = nil
			}
			if len(created)+len(updated)+len(deleted) > 0 {
				t.Errorf("a refused config created %v, updated %v, deleted %v", created, updated, deleted)
			}
			if got := c.children["ConfigMap.v1"]["monocle-sample-api"]["data"].(map[string]any)[configFile]; tc.related == nil && tc.edit != nil && name != "inline spec.config" && got != invalid {
				t.Errorf("the admin's edit became %q", got)
			}

			set(fixed)
			_, updated, _ = c.apply(t, sync())
			if !containsAll(updated, "Deployment.apps/v1/monocle-sample-api", "Deployment.apps/v1/monocle-sample-crawler") {
				t.Errorf("the fixed config updated %v, want the API and the crawler", updated)
			}
			if got := decodeAnswer(t, sync()).Status.Condition(condition.ConditionSpecApplied); got.Status != metav1.ConditionTrue {
				t.Errorf("fixed: SpecApplied %+v", got)
			}
		})
	}
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, l := range list {
			found = found || l == w
		}
		if !found {
			return false
		}
	}
	return true
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A new Monocle with a config Monocle refuses gets everything but the
// pods that would crash-loop on it: no API, no crawler, no Job.
func TestNewMonocleWithRefusedConfig(t *testing.T) {
	req := fixture(t, "sync-v1-new-parent")
	req.Parent.Spec = json.RawMessage(`{"config":"workspaces:\n  - name: my team\n"}`)
	a := decodeAnswer(t, syncJSON(t, req)) // its golden file: TestReadySaysWhy
	want := []string{"ConfigMap/monocle-sample-api", "NetworkPolicy/monocle-sample-elastic", "Secret/monocle-sample-api", "Secret/monocle-sample-elastic", "Service/monocle-sample-api",
		"Service/monocle-sample-elastic", "StatefulSet/monocle-sample-elastic"}
	if got := a.names(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("children %v, want %v", got, want)
	}
	if c := a.Status.Condition(condition.ConditionSpecApplied); c.Reason != condition.ReasonConfigInvalid || !strings.Contains(c.Message, "workspaces[0].name") {
		t.Errorf("SpecApplied %+v", c)
	}
}

// Every API replica signs logins with one key: generated once, kept (an
// admin's own too), in the API's environment.
func TestLoginKey(t *testing.T) {
	req := fixture(t, "sync-v1-new-parent")
	a := decodeAnswer(t, syncJSON(t, req))
	secret := a.child("Secret", "monocle-sample-api")
	var key []byte
	if err := json.Unmarshal([]byte(`"`+nestedString(secret, "data", jwkKeyName)+`"`), &key); err != nil || len(key) < 64 {
		t.Fatalf("%s = %q (%v), want 64 characters or more", jwkKeyName, key, err)
	}
	api, _ := json.Marshal(a.child("Deployment", "monocle-sample-api"))
	if !strings.Contains(string(api), `"envFrom":[{"secretRef":{"name":"monocle-sample-api"}}]`) {
		t.Errorf("the API does not read Secret monocle-sample-api: %s", api)
	}

	// Kept: an observed key, generated or an admin's, is answered as it is.
	for _, observed := range [][]byte{key, []byte("an-admin-key-" + strings.Repeat("x", 60))} {
		req := steady(t, baseSpec)
		req.Children.Secrets["monocle-sample-api"].Data[jwkKeyName] = observed
		got := decodeAnswer(t, syncJSON(t, req)).child("Secret", "monocle-sample-api")
		var kept []byte
		json.Unmarshal([]byte(`"`+nestedString(got, "data", jwkKeyName)+`"`), &kept)
		if string(kept) != string(observed) {
			t.Errorf("key %q replaced by %q", observed, kept)
		}
	}
}

// A crawler an earlier hook made RollingUpdate moves to Recreate in two
// syncs under Metacontroller's three-way merge, then stays there.
func TestCrawlerMovesToRecreate(t *testing.T) {
	c := newCluster(t, readFixture(t, "sync-v1-all-ready-job-complete"))
	strategy := func() string {
		b, _ := json.Marshal(c.children["Deployment.apps/v1"]["monocle-sample-crawler"]["spec"].(map[string]any)["strategy"])
		return string(b)
	}
	if got := strategy(); !strings.Contains(got, `"rollingUpdate"`) {
		t.Fatalf("recorded crawler strategy %s", got)
	}
	c.apply(t, syncJSON(t, c.request(t)))
	c.apply(t, syncJSON(t, c.request(t)))
	if got := strategy(); got != `{"type":"Recreate"}` {
		t.Fatalf("after two syncs: %s", got)
	}
	if _, updated, _ := c.apply(t, syncJSON(t, c.request(t))); len(updated) > 0 {
		t.Errorf("then updated %v", updated)
	}
	// A new crawler is Recreate at once.
	a := decodeAnswer(t, syncJSON(t, fixture(t, "sync-v1-new-parent")))
	if got := nestedString(a.child("Deployment", "monocle-sample-crawler"), "spec", "strategy", "type"); got != "Recreate" {
		t.Errorf("new crawler strategy %q", got)
	}
}

// Monocle 1.11 speaks plain HTTP to Elasticsearch.
func TestElasticsearchOverHTTPSRefused(t *testing.T) {
	if _, err := resolveSpec(json.RawMessage(`{"elasticsearch":{"url":"https://es:9200"}}`)); err == nil || err.Reason != condition.ReasonInvalidSpec || !strings.HasPrefix(err.Error(), "spec.elasticsearch.url is https://: Monocle 1.11 speaks plain HTTP") {
		t.Errorf("https url: %v", err)
	}
	// From a Secret: the pods are held, and the value never quoted.
	c := converged(t)
	c.parent = setSpec(t, c.parent, withSpec(t, `{"elasticsearch":{"urlSecretRef":{"name":"es","key":"url"}}}`))
	req := c.request(t)
	req.Related = wire.Related{Secrets: map[string]*corev1.Secret{"es": {ObjectMeta: metav1.ObjectMeta{Name: "es"}, Data: map[string][]byte{"url": []byte("https://u:secret@es:9200")}}}}
	body := syncJSON(t, req)
	if strings.Contains(string(body), "secret@") {
		t.Fatal("the URL is in the answer")
	}
	a := decodeAnswer(t, body)
	if cond := a.Status.Condition(condition.ConditionSpecApplied); cond.Reason != condition.ReasonInvalidElasticsearchURL {
		t.Errorf("SpecApplied %+v", cond)
	}
	_, updated, deleted := c.apply(t, body)
	for _, u := range append(updated, deleted...) {
		if strings.HasPrefix(u, "Deployment") || strings.HasPrefix(u, "Job") {
			t.Errorf("the pods moved: %s", u)
		}
	}
}

// A config Metacontroller could not store in a last-applied annotation is
// refused before it is parsed (pods.TestConfigFits holds the bound itself).
func TestConfigSizeBound(t *testing.T) {
	tests := map[string]struct {
		config string
		ok     bool
	}{
		"at the bound":                 {padConfig(MaxConfigJSON, "x"), true},
		"a byte over":                  {padConfig(MaxConfigJSON+1, "x"), false},
		"under the bound, not escaped": {padConfig(MaxConfigJSON-1000, "<"), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := fixture(t, "sync-v1-new-parent")
			req.Parent.Spec = json.RawMessage(`{"config":` + jsonString(tc.config) + `}`)
			c := decodeAnswer(t, syncJSON(t, req)).Status.Condition(condition.ConditionSpecApplied)
			if tc.ok != (c.Reason != condition.ReasonConfigInvalid) {
				t.Errorf("SpecApplied %s %.120s", c.Reason, c.Message)
			}
		})
	}
}

// padConfig makes a config of n bytes once JSON-escaped (each newline is
// two).
func padConfig(n int, c string) string {
	base := "workspaces:\n  - name: demo\n    crawlers: []\n"
	newlines := strings.Count(base, "\n") + 1
	return base + "#" + strings.Repeat(c, n-len(base)-2-newlines) + "\n"
}

// An earlier mounted config stays while pods may mount it: the Deployments
// rolling out, or an update-idents Job still running; then it goes.
func TestEarlierMountedConfigStaysWhilePodsNeedIt(t *testing.T) {
	n := instance.For("monocle-sample")
	earlier := n.MountedConfig(mustValidConfig(t, defaultConfig).hash)
	const edited = "workspaces:\n  - name: demo\n    crawlers: []\n# edited\n"
	c := converged(t)
	c.children["ConfigMap.v1"]["monocle-sample-api"]["data"].(map[string]any)[configFile] = edited
	c.apply(t, syncJSON(t, c.request(t)))
	if c.children["ConfigMap.v1"][earlier] == nil {
		t.Fatal("the earlier config went with the Deployments still mounting it")
	}
	c.apply(t, syncJSON(t, c.request(t))) // rolling out: not ready
	if c.children["ConfigMap.v1"][earlier] == nil {
		t.Fatal("the earlier config went while the Deployments roll out")
	}
	// A running Job still mounts it.
	for _, job := range c.children["Job.batch/v1"] {
		job["status"] = map[string]any{"active": 1}
	}
	c.markReady()
	for _, job := range c.children["Job.batch/v1"] {
		job["status"] = map[string]any{"active": 1}
	}
	c.apply(t, syncJSON(t, c.request(t)))
	if c.children["ConfigMap.v1"][earlier] == nil {
		t.Fatal("the earlier config went under a running Job")
	}
	c.markReady() // the Job completes
	_, _, deleted := c.apply(t, syncJSON(t, c.request(t)))
	if c.children["ConfigMap.v1"][earlier] != nil || !slices.Contains(deleted, "ConfigMap.v1/"+earlier) {
		t.Errorf("the earlier config stays once nothing mounts it (deleted %v)", deleted)
	}
}

// A refused config is the reason SpecApplied gives, whatever else is
// wrong, and the status says what the held pods run.
func TestRefusedConfigIsTheReason(t *testing.T) {
	req := steady(t, withSpec(t, `{"publicURL":"http://new.example.com","secretRef":{"name":"missing"},"config":"workspaces:\n  - name: my team\n    crawlers: []\n"}`))
	a := decodeAnswer(t, syncJSON(t, req))
	c := a.Status.Condition(condition.ConditionSpecApplied)
	if c.Reason != condition.ReasonConfigInvalid || !strings.Contains(c.Message, "spec.secretRef.name") {
		t.Errorf("SpecApplied %s: %s", c.Reason, c.Message)
	}
	if a.Status.Refused() == nil {
		t.Error("not counted as refused")
	}
	if a.Status.URL != "http://localhost:8090" {
		t.Errorf("status.url %q, want the URL the held API runs with", a.Status.URL)
	}
}
