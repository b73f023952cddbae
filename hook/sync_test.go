package hook

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
)

// Every recorded request decodes, syncs, answers a full valid set of
// children and matches its golden answer.
func TestFixturesSync(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			req := fixture(t, name)
			got := syncJSON(t, req)
			if again := syncJSON(t, fixture(t, name)); string(again) != string(got) {
				t.Fatal("the same request gave two different answers")
			}
			a := decodeAnswer(t, got)
			checkAnswer(t, req.Parent.Metadata.Name, a)
			golden(t, name, got)
		})
	}
}

// checkAnswer: every child is named after its instance, with a valid name
// and labels, answered once; the children always made are there, and those
// of each component as the status says: Elasticsearch's unless it is
// External, the API's and the crawler's Deployments unless Ready calls
// them "not made" (and then they are absent).
func checkAnswer(t *testing.T, instance string, a answer) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range a.Children {
		kind, name := c["kind"].(string), nestedString(c, "metadata", "name")
		if c["apiVersion"] == nil || kind == "" {
			t.Errorf("child %s has no apiVersion or kind", name)
		}
		if seen[kind+"/"+name] {
			t.Errorf("%s/%s answered twice", kind, name)
		}
		seen[kind+"/"+name] = true
		if !strings.HasPrefix(name, instance+"-") {
			t.Errorf("%s/%s is not named after %s", kind, name, instance)
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Errorf("%s/%s: %v", kind, name, errs)
		}
		labels, _ := c["metadata"].(map[string]any)["labels"].(map[string]any)
		if labels["app.kubernetes.io/instance"] != instance || labels["app.kubernetes.io/name"] != "monocle" || labels["app.kubernetes.io/component"] == nil {
			t.Errorf("%s/%s labels: %v", kind, name, labels)
		}
	}
	want := []string{"Secret/-api", "ConfigMap/-api", "Service/-api"}
	if a.Status.Elastic != "External" {
		want = append(want, "Service/-elastic", "StatefulSet/-elastic")
	}
	ready := a.Status.Condition(condition.ConditionReady).Message
	for _, component := range []string{"api", "crawler"} {
		deployment := "Deployment/" + instance + "-" + component
		if strings.Contains(ready, component+" not made") {
			if seen[deployment] {
				t.Errorf("Ready says %s not made, and the answer has %s", component, deployment)
			}
			continue
		}
		want = append(want, "Deployment/-"+component)
	}
	for _, w := range want {
		kind, suffix, _ := strings.Cut(w, "/")
		if !seen[kind+"/"+instance+suffix] {
			t.Errorf("no %s %s%s in the answer", kind, instance, suffix)
		}
	}
}

// Fed back as Metacontroller stores it, the answer converges within three
// syncs, and then the next five change nothing at all.
func TestFixedPoint(t *testing.T) {
	for _, name := range fixtureNames(t) {
		if name == "finalize-v1" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, readFixture(t, name))
			var last []byte
			for i := 1; i <= 3; i++ {
				last = syncJSON(t, c.request(t))
				c.apply(t, last)
			}
			for i := 1; i <= 5; i++ {
				got := syncJSON(t, c.request(t))
				created, updated, deleted := c.apply(t, got)
				if len(created)+len(updated)+len(deleted) > 0 {
					t.Fatalf("steady sync %d: created %v, updated %v, deleted %v", i, created, updated, deleted)
				}
				if string(got) != string(last) {
					t.Fatalf("steady sync %d answered differently:\n%s", i, firstDiff(string(last), string(got)))
				}
			}
		})
	}
}

// The recorded children of the throwaway hook are taken over in one sync:
// the Secret's stringData becomes data, the admin's GITHUB_TOKEN and the
// observed CRAWLERS_API_KEY are kept, and nothing is deleted.
func TestTakeOverRecordedChildren(t *testing.T) {
	c := newCluster(t, readFixture(t, "sync-v1-observed-children"))
	a := syncJSON(t, c.request(t))
	_, _, deleted := c.apply(t, a)
	if len(deleted) > 0 {
		t.Fatalf("deleted %v", deleted)
	}
	secret := decodeAnswer(t, a).child("Secret", "monocle-sample-api")
	data := secret["data"].(map[string]any)
	for key, want := range map[string]string{"CRAWLERS_API_KEY": "captured-fixture-key-000000", "GITHUB_TOKEN": "ghp_example_admin_token"} {
		got, _ := base64.StdEncoding.DecodeString(data[key].(string))
		if string(got) != want {
			t.Errorf("%s = %q, want %q as observed", key, got, want)
		}
	}
	if secret["stringData"] != nil {
		t.Error("the Secret is written through stringData")
	}
}

func TestNewParentGeneratesKeyOnce(t *testing.T) {
	c := newCluster(t, readFixture(t, "sync-v1-new-parent"))
	first := decodeAnswer(t, syncJSON(t, c.request(t)))
	key := first.child("Secret", "monocle-sample-api")["data"].(map[string]any)[apiKeyName].(string)
	raw, _ := base64.StdEncoding.DecodeString(key)
	if !regexp.MustCompile(`^[a-zA-Z0-9]{32}$`).Match(raw) {
		t.Fatalf("generated key %q", raw)
	}
	c.apply(t, syncJSON(t, c.request(t)))
	// A different random source now: the observed key must win.
	req := c.request(t)
	resp, err := Sync(req, Env{Now: testEnv().Now, Rand: strings.NewReader(strings.Repeat("z", 1000))})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(resp)
	again := decodeAnswer(t, b).child("Secret", "monocle-sample-api")["data"].(map[string]any)[apiKeyName]
	if again != key {
		t.Fatalf("key changed from %s to %s", key, again)
	}
}

func TestRandomFailureIsAnError(t *testing.T) {
	_, err := Sync(fixture(t, "sync-v1-new-parent"), Env{Now: testEnv().Now, Rand: strings.NewReader("")})
	if err == nil {
		t.Fatal("no error from an exhausted random source")
	}
}

// Two Monocles in one namespace share no child name, and no selector of one
// matches a pod template of the other.
func TestTwoInstancesStayApart(t *testing.T) {
	answers := map[string]answer{}
	for _, name := range []string{"team-a", "team-a-api"} { // a name that prefixes the other's children
		req := fixture(t, "sync-v1-all-ready-job-complete")
		req.Parent.Metadata.Name = name
		req.Children = wire.Children{}
		answers[name] = decodeAnswer(t, syncJSON(t, req))
	}
	a, b := answers["team-a"], answers["team-a-api"]
	for _, n := range a.names() {
		if slices.Contains(b.names(), n) {
			t.Errorf("both answer %s", n)
		}
	}
	for _, x := range []answer{a, b} {
		other := b
		if x.names()[0] == b.names()[0] {
			other = a
		}
		for _, sel := range selectors(x) {
			for _, pod := range podLabels(other) {
				if matches(sel, pod) {
					t.Errorf("selector %v matches the other instance's pods %v", sel, pod)
				}
			}
		}
	}
}

func selectors(a answer) []map[string]any {
	var out []map[string]any
	for _, c := range a.Children {
		spec, _ := c["spec"].(map[string]any)
		if s, ok := spec["selector"].(map[string]any); ok {
			if ml, ok := s["matchLabels"].(map[string]any); ok {
				out = append(out, ml)
			} else {
				out = append(out, s) // a Service's selector
			}
		}
	}
	return out
}

func podLabels(a answer) []map[string]any {
	var out []map[string]any
	for _, c := range a.Children {
		spec, _ := c["spec"].(map[string]any)
		if tmpl, ok := spec["template"].(map[string]any); ok {
			out = append(out, tmpl["metadata"].(map[string]any)["labels"].(map[string]any))
		}
	}
	return out
}

func matches(selector, labels map[string]any) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// An edit by an admin changes exactly what it must between two answers.
func TestEditsChangeOnlyWhatTheyMust(t *testing.T) {
	n := instance.For("monocle-sample")
	podHash := []string{
		"Deployment/monocle-sample-api spec.template.metadata.annotations." + annotationSecretHash,
		"Deployment/monocle-sample-crawler spec.template.metadata.annotations." + annotationSecretHash,
	}
	newMount := func(config string) []string {
		return []string{
			"ConfigMap/monocle-sample-api data.config.yaml",
			// The earlier mount stays while the pods roll (answered as
			// last applied, which holds what Metacontroller added).
			"ConfigMap/" + n.MountedConfig(mustValidConfig(t, defaultConfig).hash) + " metadata.labels.controller-uid",
			"ConfigMap/" + n.MountedConfig(mustValidConfig(t, defaultConfig).hash) + " metadata.namespace",
			"ConfigMap/" + n.MountedConfig(mustValidConfig(t, config).hash) + " (added)",
			"Deployment/monocle-sample-api spec.template.spec.volumes",
			"Deployment/monocle-sample-crawler spec.template.spec.volumes",
		}
	}
	const (
		commented    = "workspaces:\n  - name: demo\n    crawlers: []\n# a comment\n"
		identsConfig = "workspaces:\n  - name: demo\n    crawlers: []\n    idents:\n      - ident: Jane\n        aliases: [\"github.com/jane\"]\n"
	)
	tests := map[string]struct {
		edit func(req *wire.SyncRequest)
		want []string
	}{
		"secret token rotated": {
			edit: func(req *wire.SyncRequest) {
				req.Children.Secrets["monocle-sample-api"].Data["GITHUB_TOKEN"] = []byte("ghp_new")
			},
			want: append([]string{"Secret/monocle-sample-api data.GITHUB_TOKEN"}, podHash...),
		},
		"config comment added, idents unchanged": {
			edit: func(req *wire.SyncRequest) {
				req.Children.ConfigMaps["monocle-sample-api"].Data[configFile] = commented
			},
			want: newMount(commented),
		},
		// The new Job waits for the API to run the new config.
		"idents edited": {
			edit: func(req *wire.SyncRequest) {
				req.Children.ConfigMaps["monocle-sample-api"].Data[configFile] = identsConfig
			},
			want: append(newMount(identsConfig),
				"Job/"+n.UpdateIdentsJob(mustIdentsHash(t, defaultConfig))+" (removed)",
				"status IdentsUpdated"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := steady(t, baseSpec)
			if got := req.Children.ConfigMaps["monocle-sample-api"].Data[configFile]; got != defaultConfig {
				t.Fatalf("steady config %q", got)
			}
			before := decodeAnswer(t, syncJSON(t, req))
			tc.edit(req)
			after := decodeAnswer(t, syncJSON(t, req))
			got := diffAnswers(before, after)
			slices.Sort(got)
			slices.Sort(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Errorf("changed:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func mustIdentsHash(t *testing.T, config string) string {
	return mustValidConfig(t, config).idents
}

// mountedConfig is what names a config's children: the hash of its text,
// which names the mounted ConfigMap, and the hash of its idents, which names
// the update-idents Job, computed here as hook/pods documents them.
type mountedConfig struct{ hash, idents string }

func mustValidConfig(t *testing.T, config string) mountedConfig {
	t.Helper()
	cfg, err := monocleconfig.Parse([]byte(config), func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	type workspaceIdents struct {
		Name   string `json:"name"`
		Idents any    `json:"idents"`
	}
	idents := make([]workspaceIdents, len(cfg.Workspaces))
	for i, w := range cfg.Workspaces {
		idents[i] = workspaceIdents{w.Name, w.Idents}
	}
	canonical, err := json.Marshal(idents)
	if err != nil {
		t.Fatal(err)
	}
	hash := func(b []byte) string { sum := sha256.Sum256(b); return hex.EncodeToString(sum[:]) }
	return mountedConfig{hash([]byte(config))[:instance.ConfigHashLength], hash(canonical)[:instance.IdentsHashLength]}
}

// What the hook writes, as its tests expect it (hook/pods writes them).
const (
	configFile           = instance.ConfigFile
	defaultConfig        = "workspaces:\n  - name: demo\n    crawlers: []\n"
	apiKeyName           = "CRAWLERS_API_KEY"
	jwkKeyName           = "MONOCLE_JWK_GEN_KEY"
	annotationSecretHash = Group + "/secret-hash"
)

// diffAnswers lists the leaf paths that differ between two answers, by
// child, plus the types of the conditions whose status changed.
func diffAnswers(a, b answer) []string {
	var out []string
	index := func(x answer) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, c := range x.Children {
			m[c["kind"].(string)+"/"+nestedString(c, "metadata", "name")] = c
		}
		return m
	}
	ia, ib := index(a), index(b)
	for k, ca := range ia {
		cb, ok := ib[k]
		if !ok {
			out = append(out, k+" (removed)")
			continue
		}
		for _, p := range diffPaths("", ca, cb) {
			out = append(out, k+" "+p)
		}
	}
	for k := range ib {
		if ia[k] == nil {
			out = append(out, k+" (added)")
		}
	}
	for _, ca := range a.Status.Conditions {
		if cb := b.Status.Condition(ca.Type); cb.Status != ca.Status || cb.Reason != ca.Reason {
			out = append(out, "status "+ca.Type)
		}
	}
	return out
}

func diffPaths(prefix string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			return []string{prefix}
		}
		return nil
	}
	var out []string
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	for k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out = append(out, diffPaths(p, am[k], bm[k])...)
	}
	return out
}

// The update-idents Job waits for Elasticsearch, then stays for as long as
// the idents do, whatever Elasticsearch does; a failed Job is reported and
// left alone.
func TestUpdateIdentsJob(t *testing.T) {
	n := instance.For("monocle-sample")
	cfg := mustValidConfig(t, defaultConfig)
	jobName := n.UpdateIdentsJob(cfg.idents)
	recorded := *steady(t, baseSpec).Children.Jobs[jobName]

	tests := map[string]struct {
		api        func(d *appsv1.Deployment)
		job        func() *batchJob
		wantJob    bool
		wantReason string
	}{
		"api runs this config, no job yet": {wantJob: true, wantReason: "WaitingForAPI"},
		"api not available, no job": {wantReason: "WaitingForAPI",
			api: func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 0 }},
		"api rolling out, no job": {wantReason: "WaitingForAPI",
			api: func(d *appsv1.Deployment) { d.Generation++ }},
		"api scaled to zero, no job": {wantReason: "WaitingForAPI", api: func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptr.To(int32(0))
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation}
		}},
		"api runs another config, no job": {wantReason: "WaitingForAPI",
			api: func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Volumes[0].ConfigMap.Name = n.MountedConfig("0123456789")
			}},
		"job complete": {wantJob: true, wantReason: "JobComplete", job: func() *batchJob { return recorded.DeepCopy() }},
		"job complete, api down": {wantJob: true, wantReason: "JobComplete", job: func() *batchJob { return recorded.DeepCopy() },
			api: func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 0 }},
		"job running": {wantJob: true, wantReason: "JobRunning", job: func() *batchJob {
			j := recorded.DeepCopy()
			j.Status = batchJobStatus{Active: 1}
			return j
		}},
		"job failed": {wantJob: true, wantReason: "JobFailed", job: func() *batchJob {
			j := recorded.DeepCopy()
			j.Status = batchJobStatus{Failed: 4, Conditions: []batchJobCondition{{Type: "Failed", Status: "True"}}}
			return j
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := steady(t, baseSpec)
			req.Children.Jobs = map[string]*batchJob{}
			if tc.job != nil {
				req.Children.Jobs[jobName] = tc.job()
			}
			if tc.api != nil {
				tc.api(req.Children.Deployments["monocle-sample-api"])
			}
			a := decodeAnswer(t, syncJSON(t, req))
			job := a.child("Job", jobName)
			if (job != nil) != tc.wantJob {
				t.Fatalf("job answered: %v, want %v", job != nil, tc.wantJob)
			}
			if tc.job == nil {
				// Only an observed Job is judged; a new one waits a sync.
				tc.wantReason = "WaitingForAPI"
			}
			if c := a.Status.Condition(condition.ConditionIdentsUpdated); c.Reason != tc.wantReason {
				t.Errorf("IdentsUpdated reason %q, want %q", c.Reason, tc.wantReason)
			}
			if tc.job != nil {
				// An existing Job's template is immutable: answered as it is.
				want, _ := json.Marshal(req.Children.Jobs[jobName].Spec.Template)
				got, _ := json.Marshal(job["spec"].(map[string]any)["template"])
				if !jsonEqual(t, want, got) {
					t.Errorf("job template changed:\n%s\n%s", want, got)
				}
			}
			if job != nil && tc.job == nil {
				checkRestricted(t, job["spec"].(map[string]any)["template"].(map[string]any))
				if vol := nestedString(job["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["volumes"].([]any)[0].(map[string]any), "configMap", "name"); vol != n.MountedConfig(cfg.hash) {
					t.Errorf("the Job mounts %q", vol)
				}
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatal("not JSON")
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// checkRestricted: the pod template meets the restricted Pod Security
// Standard and requests resources.
func checkRestricted(t *testing.T, template map[string]any) {
	t.Helper()
	spec := template["spec"].(map[string]any)
	psc, _ := spec["securityContext"].(map[string]any)
	if psc["runAsNonRoot"] != true || nestedString(psc, "seccompProfile", "type") != "RuntimeDefault" {
		t.Errorf("pod securityContext %v", psc)
	}
	for _, c := range spec["containers"].([]any) {
		c := c.(map[string]any)
		sc, _ := c["securityContext"].(map[string]any)
		drop, _ := json.Marshal(sc["capabilities"])
		if sc["allowPrivilegeEscalation"] != false || string(drop) != `{"drop":["ALL"]}` {
			t.Errorf("container %s securityContext %v", c["name"], sc)
		}
		req, _ := c["resources"].(map[string]any)["requests"].(map[string]any)
		if req["cpu"] == nil || req["memory"] == nil {
			t.Errorf("container %s requests %v", c["name"], req)
		}
	}
}

func TestEveryPodTemplateIsRestricted(t *testing.T) {
	a := decodeAnswer(t, syncJSON(t, steady(t, baseSpec)))
	n := 0
	for _, c := range a.Children {
		spec, _ := c["spec"].(map[string]any)
		if tmpl, ok := spec["template"].(map[string]any); ok {
			checkRestricted(t, tmpl)
			n++
		}
	}
	if n != 4 {
		t.Fatalf("%d pod templates, want 4 (elastic, api, crawler, update-idents)", n)
	}
}

// A storage change after creation keeps the immutable templates and says so.
func TestStorageChangeKeepsVolumeClaimTemplates(t *testing.T) {
	req := fixture(t, "sync-v2-observed-children") // spec asks 5Gi, the volume holds 1Gi
	a := decodeAnswer(t, syncJSON(t, req))
	sts := a.child("StatefulSet", "team-b-elastic")
	got, _ := json.Marshal(sts["spec"].(map[string]any)["volumeClaimTemplates"])
	want, _ := json.Marshal(req.Children.StatefulSets["default/team-b-elastic"].Spec.VolumeClaimTemplates)
	if !jsonEqual(t, want, got) {
		t.Errorf("volumeClaimTemplates changed:\n%s\n%s", want, got)
	}
	c := a.Status.Condition(condition.ConditionSpecApplied)
	if c.Status != metav1.ConditionFalse || c.Reason != "VolumeExpansionRequired" || !strings.HasPrefix(c.Message, "spec.storageSize is 5Gi") ||
		!strings.Contains(c.Message, `kubectl -n default patch pvc data-team-b-elastic-0 --type merge -p '{"spec":{"resources":{"requests":{"storage":"5Gi"}}}}'`) {
		t.Errorf("SpecApplied = %+v", c)
	}
}

// A spec the hook cannot honour: a condition names the field, and every
// observed child is answered as last applied; nothing deleted or rolled.
func TestInvalidSpecKeepsEveryChild(t *testing.T) {
	tests := map[string]struct {
		spec  string
		field string
	}{
		"publicURL not a URL":       {`{"publicURL": "not a url"}`, "spec.publicURL"},
		"monoclePublicURL ftp":      {`{"monoclePublicURL": "ftp://x"}`, "spec.monoclePublicURL"},
		"storageSize not quantity":  {`{"storageSize": "lots"}`, "spec.storageSize"},
		"storageSize negative":      {`{"storageSize": "-1Gi"}`, "spec.storageSize"},
		"storageSize of wrong type": {`{"storageSize": 5}`, "spec.storageSize"},
		"spec not an object":        {`"nope"`, "spec"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// Converge first, then break the spec.
			c := newCluster(t, readFixture(t, "sync-v1-all-ready-job-complete"))
			for range 2 {
				c.apply(t, syncJSON(t, c.request(t)))
			}
			req := c.request(t)
			req.Parent.Spec = json.RawMessage(tc.spec)
			got := syncJSON(t, req)
			a := decodeAnswer(t, got)
			cond := a.Status.Condition(condition.ConditionSpecApplied)
			if cond.Status != metav1.ConditionFalse || cond.Reason != "InvalidSpec" || !strings.HasPrefix(cond.Message, tc.field) {
				t.Errorf("SpecApplied = %+v, want InvalidSpec naming %s", cond, tc.field)
			}
			if a.Status.URL != "http://localhost:8090" {
				t.Errorf("status.url = %q, want the URL in effect", a.Status.URL)
			}
			created, updated, deleted := c.apply(t, got)
			if len(created)+len(updated)+len(deleted) > 0 {
				t.Errorf("a bad spec created %v, updated %v, deleted %v", created, updated, deleted)
			}
		})
	}
}

// An admin's config edit survives a bad spec: the ConfigMap is answered
// with the observed data, not the last-applied one.
func TestInvalidSpecKeepsAdminEdits(t *testing.T) {
	c := newCluster(t, readFixture(t, "sync-v1-observed-children"))
	c.apply(t, syncJSON(t, c.request(t)))
	c.children["ConfigMap.v1"]["monocle-sample-api"]["data"].(map[string]any)[configFile] = "workspaces: []\n"
	req := c.request(t)
	req.Parent.Spec = json.RawMessage(`{"publicURL": "nope"}`)
	c.apply(t, syncJSON(t, req))
	if got := c.children["ConfigMap.v1"]["monocle-sample-api"]["data"].(map[string]any)[configFile]; got != "workspaces: []\n" {
		t.Fatalf("admin's config reverted to %q", got)
	}
}

func TestConfigInvalidKeepsJob(t *testing.T) {
	req := fixture(t, "sync-v1-all-ready-job-complete")
	req.Children.ConfigMaps["monocle-sample-api"].Data[configFile] = "workspaces: [unclosed"
	a := decodeAnswer(t, syncJSON(t, req))
	if a.child("Job", "monocle-sample-update-idents-0123456789") == nil {
		t.Error("the existing Job was left out (deleted)")
	}
	if c := a.Status.Condition(condition.ConditionIdentsUpdated); c.Reason != "ConfigInvalid" {
		t.Errorf("IdentsUpdated = %+v", c)
	}
}

// lastTransitionTime moves only when a condition's status does.
func TestConditionTransitionTimes(t *testing.T) {
	earlier := metav1.NewTime(testNow.Add(-time.Hour))
	req := fixture(t, "sync-v1-observed-children")
	req.Parent.Status.Conditions = []metav1.Condition{
		{Type: condition.ConditionReady, Status: metav1.ConditionFalse, LastTransitionTime: earlier},
		{Type: condition.ConditionProgressing, Status: metav1.ConditionFalse, LastTransitionTime: earlier},
	}
	a := decodeAnswer(t, syncJSON(t, req))
	if got := a.Status.Condition(condition.ConditionReady).LastTransitionTime; !got.Equal(&earlier) {
		t.Errorf("Ready unchanged but its time moved to %v", got)
	}
	if got := a.Status.Condition(condition.ConditionProgressing).LastTransitionTime; !got.Time.Equal(testNow) {
		t.Errorf("Progressing turned True at %v, want now", got)
	}
}

func TestStatusReadyWhenEverythingIs(t *testing.T) {
	a := decodeAnswer(t, syncJSON(t, fixture(t, "sync-v1-all-ready-job-complete")))
	if a.Status.Elastic != "Ready" || a.Status.API != "Ready" || a.Status.Crawler != "Ready" {
		t.Errorf("status %+v", a.Status)
	}
	if c := a.Status.Condition(condition.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", c)
	}
	b := decodeAnswer(t, syncJSON(t, fixture(t, "sync-v1-observed-children")))
	if c := b.Status.Condition(condition.ConditionReady); c.Status != metav1.ConditionFalse || b.Status.API != "In Progress" {
		t.Errorf("not ready children gave %+v", b.Status)
	}
}

func TestFinalizeReleasesTheParent(t *testing.T) {
	resp, err := Sync(fixture(t, "finalize-v1"), testEnv())
	if err != nil || !resp.Finalized {
		t.Fatalf("finalized %v, err %v", resp != nil && resp.Finalized, err)
	}
	resp, _ = Sync(fixture(t, "sync-v1-observed-children"), testEnv())
	if resp.Finalized {
		t.Fatal("a sync answered finalized")
	}
}

func TestBadRequests(t *testing.T) {
	tests := map[string]*wire.SyncRequest{
		"no parent":  {},
		"no name":    {Parent: &wire.Parent{Kind: Kind}},
		"wrong kind": {Parent: &wire.Parent{Kind: "Pod", Metadata: metav1.ObjectMeta{Name: "x"}}},
	}
	for name, req := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Sync(req, testEnv()); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// A sync whose client has gone stops at its next step: no work is done
// for an answer no one reads.
func TestSyncStopsWhenItsClientHasGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env := testEnv()
	env.Context = ctx
	for _, name := range []string{"sync-v1-observed-children", "sync-v1-new-parent"} {
		if _, err := Sync(fixture(t, name), env); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", name, err)
		}
	}
	req := fixture(t, "sync-v1-observed-children")
	req.Parent.Spec = json.RawMessage(`{"tolerations":[{"operator":"Equal"}]}`) // InvalidSpec: every child held
	if _, err := Sync(req, env); !errors.Is(err, context.Canceled) {
		t.Errorf("invalid spec: %v, want context.Canceled", err)
	}
	if _, err := Sync(fixture(t, "sync-v1-observed-children"), testEnv()); err != nil {
		t.Errorf("no context: %v", err)
	}
}

// Every child answered is of a kind in ChildKinds (Metacontroller refuses
// others), in the golden answers.
func TestAnswersHoldChildKinds(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden answers: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var answer struct{ Children []metav1.TypeMeta }
		if err := json.Unmarshal(b, &answer); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range answer.Children {
			if !slices.ContainsFunc(wire.ChildKinds, func(k wire.ChildKind) bool { return k.TypeMeta == c }) {
				t.Errorf("%s answers a %s %s, not in wire.ChildKinds", f, c.APIVersion, c.Kind)
			}
		}
	}
}
