package hook

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// steady is a Monocle with baseSpec as this hook leaves it (converged,
// every component ready, its update-idents Job done), whose spec now reads
// spec.
func steady(t *testing.T, spec string) *wire.SyncRequest {
	t.Helper()
	req := converged(t).request(t)
	req.Parent.Spec = json.RawMessage(spec)
	return req
}

// converged is a cluster holding a Monocle with baseSpec as this hook
// leaves it: every component ready, its update-idents Job done.
func converged(t testing.TB) *cluster {
	t.Helper()
	c := newCluster(t, readFixture(t, "sync-v1-all-ready-job-complete"))
	c.parent = setSpec(t, c.parent, baseSpec)
	c.children["Job.batch/v1"] = nil // recorded from the seed's naming
	for range 3 {
		c.apply(t, syncJSON(t, c.request(t)))
		c.markReady()
	}
	return c
}

const baseSpec = `{"image":"quay.io/change-metrics/monocle:1.11.2","publicURL":"http://localhost:8090"}`

// withSpec merges fields into baseSpec.
func withSpec(t *testing.T, fields string) string {
	var base, extra map[string]any
	if err := json.Unmarshal([]byte(baseSpec), &base); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(fields), &extra); err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		base[k] = v
	}
	b, _ := json.Marshal(base)
	return string(b)
}

// Each spec change, as a diff between two answers: only the intended
// children and fields change.
func TestSpecChangesAsDiffs(t *testing.T) {
	const (
		api      = "Deployment/monocle-sample-api spec.template.spec.containers"
		crawler  = "Deployment/monocle-sample-crawler spec.template.spec.containers"
		elastic  = "StatefulSet/monocle-sample-elastic spec.template.spec.containers"
		apiHash  = "Deployment/monocle-sample-api spec.template.metadata.annotations." + annotationSecretHash
		crawHash = "Deployment/monocle-sample-crawler spec.template.metadata.annotations." + annotationSecretHash
	)
	userSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens"}, Data: map[string][]byte{"GITHUB_TOKEN": []byte("ghp_user")}}
	tests := map[string]struct {
		spec    string
		related wire.Related
		want    []string
	}{
		"monocle image: API and crawler roll, nothing else": {
			spec: withSpec(t, `{"image":"quay.io/change-metrics/monocle:1.12.0"}`),
			want: []string{api, crawler},
		},
		// Its init container, which links its users into its config, is
		// of its image.
		"elasticsearch image: only Elasticsearch rolls": {
			spec: withSpec(t, `{"elasticsearch":{"image":"docker.elastic.co/elasticsearch/elasticsearch:7.17.27"}}`),
			want: []string{elastic, "StatefulSet/monocle-sample-elastic spec.template.spec.initContainers"},
		},
		"elasticsearch heap: its memory follows": {
			spec: withSpec(t, `{"elasticsearch":{"heap":"1g"}}`),
			want: []string{elastic},
		},
		"deleteDataOnDelete": {
			spec: withSpec(t, `{"elasticsearch":{"deleteDataOnDelete":true}}`),
			want: []string{"StatefulSet/monocle-sample-elastic spec.persistentVolumeClaimRetentionPolicy.whenDeleted"},
		},
		// The pods spread whatever the replicas: scaling rolls nothing;
		// several get a disruption budget.
		"api replicas": {
			spec: withSpec(t, `{"api":{"replicas":3}}`),
			want: []string{"Deployment/monocle-sample-api spec.replicas", "PodDisruptionBudget/monocle-sample-api (added)"},
		},
		"networkPolicy off: Elasticsearch's goes, nothing else changes": {
			spec: withSpec(t, `{"networkPolicy":{"enabled":false}}`),
			want: []string{"NetworkPolicy/monocle-sample-elastic (removed)"},
		},
		"networkPolicy peers: only the NetworkPolicy changes": {
			spec: withSpec(t, `{"networkPolicy":{"elasticsearchPeers":[{"namespaceSelector":{"matchLabels":{"team":"kibana"}}}]}}`),
			want: []string{"NetworkPolicy/monocle-sample-elastic spec.ingress"},
		},
		"api resources": {
			spec: withSpec(t, `{"api":{"resources":{"requests":{"cpu":"1","memory":"1Gi"}}}}`),
			want: []string{api},
		},
		"crawler disabled": {
			spec: withSpec(t, `{"crawler":{"enabled":false}}`),
			want: []string{"Deployment/monocle-sample-crawler (removed)"},
		},
		"webapp title": {
			spec: withSpec(t, `{"webappTitle":"Team metrics"}`),
			want: []string{api},
		},
		"node selector: every pod template but the finished Job's": {
			spec: withSpec(t, `{"nodeSelector":{"disk":"ssd"}}`),
			want: []string{
				"Deployment/monocle-sample-api spec.template.spec.nodeSelector",
				"Deployment/monocle-sample-crawler spec.template.spec.nodeSelector",
				"StatefulSet/monocle-sample-elastic spec.template.spec.nodeSelector",
			},
		},
		"ingress": {
			spec: withSpec(t, `{"ingress":{"host":"monocle.example.com","tlsSecretName":"tls"}}`),
			want: []string{"Ingress/monocle-sample-api (added)"},
		},
		"external elasticsearch: no StatefulSet nor Service, the API points there": {
			spec: withSpec(t, `{"elasticsearch":{"url":"http://es.example.com:9200"}}`),
			// The API no longer reads its user's URL from N-elastic (which
			// goes once the StatefulSet has), nor runs the proxy that did;
			// the crawler never did. The NetworkPolicy stays while the
			// StatefulSet is observed (its pods run).
			want: []string{"StatefulSet/monocle-sample-elastic (removed)", "Service/monocle-sample-elastic (removed)", api, apiHash,
				"Deployment/monocle-sample-api spec.template.spec.initContainers"},
		},
		"user secret: added to the environment, pods roll": {
			spec:    withSpec(t, `{"secretRef":{"name":"tokens"}}`),
			related: wire.Related{Secrets: map[string]*corev1.Secret{"tokens": userSecret}},
			want:    []string{api, crawler, apiHash, crawHash},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := decodeAnswer(t, syncJSON(t, steady(t, baseSpec)))
			req := steady(t, tc.spec)
			req.Related = tc.related
			after := decodeAnswer(t, syncJSON(t, req))
			if c := after.Status.Condition(condition.ConditionSpecApplied); c.Status != metav1.ConditionTrue {
				t.Fatalf("SpecApplied %+v", c)
			}
			got := diffAnswers(before, after)
			slices.Sort(got)
			slices.Sort(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Errorf("changed:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// A related ConfigMap edit, once validated, reaches the pods as a new
// mounted ConfigMap, and for idents a new Job once the API runs it.
func TestConfigMapRef(t *testing.T) {
	spec := withSpec(t, `{"configMapRef":{"name":"team-config"}}`)
	cm := func(config string) wire.Related {
		return wire.Related{ConfigMaps: map[string]*corev1.ConfigMap{"default/team-config": {
			ObjectMeta: metav1.ObjectMeta{Name: "team-config"}, Data: map[string]string{configFile: config}}}}
	}
	const team, teamIdents = "workspaces:\n  - name: team\n    crawlers: []\n", "workspaces:\n  - name: team\n    crawlers: []\n    idents: [{ident: Jane, aliases: [github.com/jane]}]\n"
	n := instance.For("monocle-sample")
	req := steady(t, spec)
	req.Related = cm(team)
	a := decodeAnswer(t, syncJSON(t, req))
	mounted := n.MountedConfig(mustValidConfig(t, team).hash)
	if got := a.child("ConfigMap", mounted); got == nil || nestedString(got, "data", configFile) != team {
		t.Fatalf("mounted ConfigMap %s: %v", mounted, got)
	}
	api := a.child("Deployment", "monocle-sample-api")
	vol, _ := json.Marshal(api["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["volumes"])
	if !strings.Contains(string(vol), `"name":"`+mounted+`"`) {
		t.Fatalf("volumes %s", vol)
	}

	req = steady(t, spec)
	req.Related = cm(teamIdents)
	b := decodeAnswer(t, syncJSON(t, req))
	got := diffAnswers(a, b)
	slices.Sort(got)
	want := []string{
		"ConfigMap/" + mounted + " (removed)",
		"ConfigMap/" + n.MountedConfig(mustValidConfig(t, teamIdents).hash) + " (added)",
		"Deployment/monocle-sample-api spec.template.spec.volumes",
		"Deployment/monocle-sample-crawler spec.template.spec.volumes",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("changed:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// Not there (yet): reported; the pods and the Jobs stay as they are.
	req = steady(t, spec)
	c := decodeAnswer(t, syncJSON(t, req))
	if cond := c.Status.Condition(condition.ConditionSpecApplied); cond.Reason != condition.ReasonReferenceNotFound || !strings.Contains(cond.Message, "spec.configMapRef.name") {
		t.Errorf("SpecApplied %+v", cond)
	}
	cl := converged(t)
	cl.parent = setSpec(t, cl.parent, spec)
	if created, updated, deleted := cl.apply(t, syncJSON(t, cl.request(t))); len(created)+len(updated)+len(deleted) > 0 {
		t.Errorf("a missing ConfigMap created %v, updated %v, deleted %v", created, updated, deleted)
	}
}

func TestExternalElasticsearchFromSecret(t *testing.T) {
	spec := withSpec(t, `{"elasticsearch":{"urlSecretRef":{"name":"es","key":"url"}}}`)
	req := steady(t, spec)
	req.Related = wire.Related{Secrets: map[string]*corev1.Secret{"es": {ObjectMeta: metav1.ObjectMeta{Name: "es"}, Data: map[string][]byte{"url": []byte("http://u:p@es:9200")}}}}
	body := syncJSON(t, req)
	if strings.Contains(string(body), "u:p@") {
		t.Fatal("the URL's credentials are in the answer")
	}
	a := decodeAnswer(t, body)
	const fromSecret = `{"name":"MONOCLE_ELASTIC_URL","valueFrom":{"secretKeyRef":{"key":"url","name":"es"}}}`
	// The API reaches it through its proxy, which alone mounts the key.
	c, _ := json.Marshal(a.child("Deployment", "monocle-sample-api"))
	for _, want := range []string{`{"name":"MONOCLE_ELASTIC_URL","value":"http://127.0.0.1:9200"}`, `"initContainers":[{"command":["/monocle-hook","elastic-proxy"],"env":[` + fromSecret + `]`} {
		if !strings.Contains(string(c), want) {
			t.Errorf("API: %s\nlacks %s", c, want)
		}
	}
	// A new update-idents Job reads the URL from the Secret too, through
	// the environment, and starts at once: there is no Elasticsearch to
	// wait for.
	noJob := steady(t, spec)
	noJob.Related = req.Related
	noJob.Children.Jobs = nil
	jobs := 0
	for _, c := range decodeAnswer(t, syncJSON(t, noJob)).Children {
		if c["kind"] == "Job" {
			jobs++
			j, _ := json.Marshal(c)
			if !strings.Contains(string(j), fromSecret) || !strings.Contains(string(j), `"--elastic","$(MONOCLE_ELASTIC_URL)"`) {
				t.Errorf("Job: %s", j)
			}
		}
	}
	if jobs != 1 {
		t.Errorf("%d Jobs, want 1", jobs)
	}
	if a.Status.Elastic != "External" || a.Status.Condition(condition.ConditionReady).Status != metav1.ConditionTrue {
		t.Errorf("status %+v", a.Status)
	}
	// The Secret's URL changes: the pods roll (they read it at start).
	req.Related.Secrets["es"].Data["url"] = []byte("http://u:q@es:9200")
	b := decodeAnswer(t, syncJSON(t, req))
	if d := diffAnswers(a, b); len(d) != 2 {
		t.Errorf("changed %v, want both secret hashes", d)
	}
	// Missing: reported.
	req.Related = wire.Related{}
	if c := decodeAnswer(t, syncJSON(t, req)).Status.Condition(condition.ConditionSpecApplied); c.Reason != "ReferenceNotFound" {
		t.Errorf("SpecApplied %+v", c)
	}
}

// Leaving managed Elasticsearch never deletes its volume: a StatefulSet set
// to delete it is answered once more with Retain, and only then left out.
func TestSwitchToExternalRetainsTheVolume(t *testing.T) {
	req := steady(t, withSpec(t, `{"elasticsearch":{"url":"http://es:9200","deleteDataOnDelete":true}}`))
	sts := req.Children.StatefulSets["monocle-sample-elastic"]
	sts.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
	a := decodeAnswer(t, syncJSON(t, req))
	got := a.child("StatefulSet", "monocle-sample-elastic")
	if got == nil || nestedString(got, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted") != "Retain" {
		t.Fatalf("StatefulSet answered %v", got != nil)
	}
	// Its pods still run: their NetworkPolicy stays while it is observed.
	if a.child("NetworkPolicy", "monocle-sample-elastic") == nil {
		t.Error("the NetworkPolicy dropped while the StatefulSet runs")
	}
	if c := a.Status.Condition(condition.ConditionProgressing); c.Reason != "RetainingVolume" {
		t.Errorf("Progressing %+v", c)
	}
	sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if decodeAnswer(t, syncJSON(t, req)).child("StatefulSet", "monocle-sample-elastic") != nil {
		t.Fatal("StatefulSet still answered once its volume is retained")
	}
	if decodeAnswer(t, syncJSON(t, req)).child("NetworkPolicy", "monocle-sample-elastic") == nil {
		t.Error("the NetworkPolicy dropped while the StatefulSet is still observed")
	}
	delete(req.Children.StatefulSets, "monocle-sample-elastic")
	if decodeAnswer(t, syncJSON(t, req)).child("NetworkPolicy", "monocle-sample-elastic") != nil {
		t.Error("the NetworkPolicy kept once the StatefulSet is gone")
	}
}

func TestStorageGrowth(t *testing.T) {
	claim := func(request, capacity string) wire.Related {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-monocle-sample-elastic-0"}}
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
		// Keyed namespace/name, as hook version v2 keys them.
		return wire.Related{Claims: map[string]*corev1.PersistentVolumeClaim{"default/" + c.Name: c}}
	}
	// The recorded volume template holds 1Gi.
	tests := map[string]struct {
		spec       string
		related    wire.Related
		wantReason string
		wantInMsg  string
		capacity   string
	}{
		"same size":          {`{"storageSize":"1Gi"}`, claim("1Gi", "1Gi"), "Applied", "", "1Gi"},
		"grow: the command":  {`{"elasticsearch":{"storageSize":"20Gi"}}`, claim("1Gi", "1Gi"), "VolumeExpansionRequired", `kubectl -n default patch pvc data-monocle-sample-elastic-0 --type merge -p '{"spec":{"resources":{"requests":{"storage":"20Gi"}}}}'`, "1Gi"},
		"grown by the admin": {`{"elasticsearch":{"storageSize":"20Gi"}}`, claim("20Gi", "20Gi"), "Applied", "", "20Gi"},
		"no claim observed":  {`{"storageSize":"20Gi"}`, wire.Related{}, "VolumeExpansionRequired", "spec.storageSize is 20Gi", ""},
		"shrink refused":     {`{"storageSize":"500Mi"}`, claim("1Gi", "1Gi"), "StorageShrinkRefused", "cannot shrink", "1Gi"},
		"class change":       {`{"storageClassName":"fast"}`, claim("1Gi", "1Gi"), "ImmutableField", "spec.storageClassName", "1Gi"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := decodeAnswer(t, syncJSON(t, steady(t, baseSpec)))
			req := steady(t, withSpec(t, tc.spec))
			req.Related = tc.related
			after := decodeAnswer(t, syncJSON(t, req))
			c := after.Status.Condition(condition.ConditionSpecApplied)
			if c.Reason != tc.wantReason || !strings.Contains(c.Message, tc.wantInMsg) {
				t.Errorf("SpecApplied %s: %s", c.Reason, c.Message)
			}
			if got := after.Status.Storage; got == nil || got.Capacity != tc.capacity || got.Claim != "data-monocle-sample-elastic-0" {
				t.Errorf("status.storage %+v", got)
			}
			// Whatever the size asked, the StatefulSet is not touched.
			if d := diffAnswers(before, after); slices.ContainsFunc(d, func(s string) bool { return strings.HasPrefix(s, "StatefulSet") }) {
				t.Errorf("StatefulSet changed: %v", d)
			}
		})
	}
}

func TestPublicURL(t *testing.T) {
	tests := map[string]struct{ spec, want string }{
		"default: the port-forward address":              {`{}`, DefaultPublicURL},
		"seed field":                                     {`{"monoclePublicURL":"http://m:1"}`, "http://m:1"},
		"publicURL wins over the seed field":             {`{"monoclePublicURL":"http://m:1","publicURL":"https://p"}`, "https://p"},
		"ingress with TLS":                               {`{"ingress":{"host":"m.example.com","tlsSecretName":"t"}}`, "https://m.example.com"},
		"ingress without TLS":                            {`{"ingress":{"host":"m.example.com"}}`, "http://m.example.com"},
		"seed route host: edge TLS, as the seed's Route": {`{"route":{"host":"r.example.com"}}`, "https://r.example.com"},
		"given URL wins over the ingress":                {`{"publicURL":"https://p","ingress":{"host":"m"}}`, "https://p"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := resolveSpec(json.RawMessage(tc.spec))
			if err != nil || s.access.PublicURL != tc.want {
				t.Errorf("publicURL %q (%v), want %q", s.access.PublicURL, err, tc.want)
			}
		})
	}
}

func TestElasticsearchMemory(t *testing.T) {
	tests := map[string]struct {
		spec, heap, memory, err string
	}{
		"default":             {`{}`, "512m", "1Gi", ""},
		"heap sets memory":    {`{"elasticsearch":{"heap":"2g"}}`, "2g", "4Gi", ""},
		"memory sets heap":    {`{"elasticsearch":{"resources":{"limits":{"memory":"4Gi"}}}}`, "2048m", "4Gi", ""},
		"heap over memory":    {`{"elasticsearch":{"heap":"4g","resources":{"limits":{"memory":"4Gi"}}}}`, "", "", "spec.elasticsearch.heap"},
		"heap not a JVM size": {`{"elasticsearch":{"heap":"2Gi"}}`, "", "", "spec.elasticsearch.heap"},
		"heap upper case":     {`{"elasticsearch":{"heap":"1G"}}`, "1G", "2Gi", ""},
		"heap over half the memory: applied, noted": {`{"elasticsearch":{"heap":"3g","resources":{"limits":{"memory":"4Gi"}}}}`, "3g", "4Gi", ""},
		"memory from requests":                      {`{"elasticsearch":{"resources":{"requests":{"memory":"2Gi"}}}}`, "1024m", "", ""},
		"large memory: heap 31g":                    {`{"elasticsearch":{"resources":{"limits":{"memory":"128Gi"}}}}`, "31744m", "128Gi", ""},
		"heap overflows":                            {`{"elasticsearch":{"heap":"999999999999999g"}}`, "", "", "spec.elasticsearch.heap 999999999999999g is over 31g"},
		"heap over 31g":                             {`{"elasticsearch":{"heap":"32g"}}`, "", "", "spec.elasticsearch.heap 32g is over 31g"},
		"heap zero":                                 {`{"elasticsearch":{"heap":"0m"}}`, "", "", "spec.elasticsearch.heap 0m is under 256m"},
		"heap negative":                             {`{"elasticsearch":{"heap":"-1g"}}`, "", "", "spec.elasticsearch.heap"},
		"memory too small":                          {`{"elasticsearch":{"resources":{"limits":{"memory":"1Mi"}}}}`, "", "", "spec.elasticsearch.resources.limits.memory 1Mi is too small"},
		"memory negative":                           {`{"elasticsearch":{"resources":{"limits":{"memory":"-1Gi"}}}}`, "", "", "spec.elasticsearch.resources.limits.memory -1Gi is not a memory size Elasticsearch can run in"},
		"memory zero, heap given":                   {`{"elasticsearch":{"heap":"512m","resources":{"limits":{"memory":"0"}}}}`, "", "", "spec.elasticsearch.resources.limits.memory"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := resolveSpec(json.RawMessage(tc.spec))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err %v, want %s", err, tc.err)
				}
				return
			}
			mem := s.elastic.Resources.Limits[corev1.ResourceMemory]
			if tc.memory == "" {
				mem = resource.Quantity{}
			}
			if err != nil || s.elastic.Heap != tc.heap || (tc.memory != "" && mem.String() != tc.memory) {
				t.Errorf("heap %s memory %s (%v), want %s %s", s.elastic.Heap, mem.String(), err, tc.heap, tc.memory)
			}
		})
	}
}

func TestVersionsObservedRunning(t *testing.T) {
	a := decodeAnswer(t, syncJSON(t, steady(t, baseSpec)))
	if v := a.Status.Versions; v == nil || v.Monocle != "quay.io/change-metrics/monocle:1.11.2" || v.Elasticsearch != DefaultElasticImage {
		t.Errorf("versions %+v", v)
	}
	// Mid-rollout, no version is claimed for the API.
	req := steady(t, baseSpec)
	req.Children.Deployments["monocle-sample-api"].Generation++
	if v := decodeAnswer(t, syncJSON(t, req)).Status.Versions; v == nil || v.Monocle != "" {
		t.Errorf("versions %+v", v)
	}
}

// The customize answer names its objects in the parent's namespace, every
// rule of it: no label selector (Metacontroller builds one per parent at
// every related event) and no rule without a namespace (Metacontroller then
// lists the whole cluster's objects of its kind at each sync).
func TestCustomize(t *testing.T) {
	tests := map[string]struct {
		spec string
		want string
	}{
		"volumes only": {`{}`, `[{"apiVersion":"v1","resource":"persistentvolumeclaims","namespace":"ns","names":["data-m-elastic-0","snapshots-m-elastic-0"]}]`},
		"every reference": {`{"configMapRef":{"name":"c"},"secretRef":{"name":"s"},"elasticsearch":{"urlSecretRef":{"name":"es","key":"url"}}}`,
			`[{"apiVersion":"v1","resource":"persistentvolumeclaims","namespace":"ns","names":["data-m-elastic-0","snapshots-m-elastic-0"]},{"apiVersion":"v1","resource":"configmaps","namespace":"ns","names":["c"]},{"apiVersion":"v1","resource":"secrets","namespace":"ns","names":["s","es"]}]`},
		"one Secret named twice": {`{"secretRef":{"name":"s"},"elasticsearch":{"urlSecretRef":{"name":"s","key":"url"}}}`,
			`[{"apiVersion":"v1","resource":"persistentvolumeclaims","namespace":"ns","names":["data-m-elastic-0","snapshots-m-elastic-0"]},{"apiVersion":"v1","resource":"secrets","namespace":"ns","names":["s"]}]`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := Customize(&wire.CustomizeRequest{Parent: &wire.Parent{Metadata: metav1.ObjectMeta{Name: "m", Namespace: "ns"}, Spec: json.RawMessage(tc.spec)}})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(resp.RelatedResources)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	// The recorded customize request decodes and is answered.
	var req wire.CustomizeRequest
	if err := json.Unmarshal(readFixture(t, "customize-v1"), &req); err != nil {
		t.Fatal(err)
	}
	resp, err := Customize(&req)
	if err != nil || len(resp.RelatedResources) == 0 {
		t.Fatalf("%v %v", resp, err)
	}
	for _, rule := range resp.RelatedResources {
		if rule.Namespace != req.Parent.Metadata.Namespace || rule.Namespace == "" || len(rule.Names) == 0 {
			t.Errorf("recorded parent in %q: rule %+v", req.Parent.Metadata.Namespace, rule)
		}
	}
}
