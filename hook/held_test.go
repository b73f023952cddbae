package hook

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
)

// One rule, both ways, over every refusal that holds something, from a
// running Monocle (ready, and rolling out) and from a new one (before and
// after its first answer is applied): a component the status calls held
// ("api held") is answered exactly as it runs (applying the answer changes
// nothing of its workload: its template, the annotations that roll its
// pods), one it calls not made is not made; and a workload the answer
// creates or changes is never called either.
func TestHeldIsAsObserved(t *testing.T) {
	secret := func(name string, data map[string]string) wire.Related {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return wire.Related{Secrets: map[string]*corev1.Secret{name: s}}
	}
	oidc := func(enforce bool) string {
		return fmt.Sprintf("auth:\n  enforce_auth: %v\n  auth_provider:\n    oidc_provider_name: sso\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces: []\n", enforce)
	}
	const withUser = `{"secretRef":{"name":"tokens"}}`
	cases := map[string]struct {
		spec      string
		related   wire.Related
		generated map[string]string // keys set in the observed generated Secret
		reason    string            // SpecApplied's
		running   bool              // a refusal of a running Monocle only
	}{
		"invalid spec":          {spec: `{"image":"quay.io/x:1\f"}`, reason: condition.ReasonInvalidSpec},
		"config refused":        {spec: withSpec(t, `{"config":"workspaces:\n  - name: my team\n"}`), reason: condition.ReasonConfigInvalid},
		"configMapRef missing":  {spec: withSpec(t, `{"configMapRef":{"name":"team-config"}}`), reason: condition.ReasonReferenceNotFound},
		"secretRef missing":     {spec: withSpec(t, withUser), reason: condition.ReasonReferenceNotFound},
		"urlSecretRef missing":  {spec: withSpec(t, `{"elasticsearch":{"urlSecretRef":{"name":"es","key":"url"}}}`), reason: condition.ReasonReferenceNotFound},
		"https Elasticsearch":   {spec: withSpec(t, `{"elasticsearch":{"urlSecretRef":{"name":"es","key":"url"}}}`), related: secret("es", map[string]string{"url": "https://es:9200"}), reason: condition.ReasonInvalidElasticsearchURL},
		"crawler token missing": {spec: configSpec(t, githubConfig, ""), reason: condition.ReasonCrawlerTokenMissing},
		"login key too short":   {spec: configSpec(t, oidc(false), ""), generated: map[string]string{jwkKeyName: "k3y-v4lue"}, reason: condition.ReasonLoginKeyTooShort},
		"login secret missing":  {spec: configSpec(t, oidc(true), ""), reason: condition.ReasonLoginSecretMissing},
		"admin token empty":     {spec: configSpec(t, oidc(true), withUser), related: secret("tokens", map[string]string{"MONOCLE_OIDC_SSO_CLIENT_SECRET": "s", "MONOCLE_ADMIN_TOKEN": ""}), reason: condition.ReasonAdminTokenEmpty},
		"variable refused":      {spec: configSpec(t, githubConfig, withUser), related: secret("tokens", map[string]string{"GITHUB_TOKEN": "t", "GHCRTS": "-M16m"}), reason: condition.ReasonVariableRefused},
		"volume to grow":        {spec: withSpec(t, `{"elasticsearch":{"storageSize":"20Gi"}}`), reason: condition.ReasonVolumeExpansionRequired, running: true},
		"snapshots of external": {spec: withSpec(t, `{"elasticsearch":{"url":"http://es:9200","snapshots":{"schedule":"@daily","keep":7}}}`), reason: condition.ReasonSnapshotsNeedManagedElasticsearch},
	}
	starts := map[string]func(t *testing.T, spec string) *cluster{
		"running, ready": func(t *testing.T, spec string) *cluster {
			c := converged(t)
			c.parent = setSpec(t, c.parent, spec)
			return c
		},
		"running, rolling out": func(t *testing.T, spec string) *cluster {
			c := converged(t)
			c.parent = setSpec(t, c.parent, spec)
			c.markNotReady()
			return c
		},
		"new": func(t *testing.T, spec string) *cluster {
			c := newCluster(t, readFixture(t, "sync-v1-new-parent"))
			c.parent = setSpec(t, c.parent, spec)
			return c
		},
	}
	workloads := map[string]string{
		"elastic": "StatefulSet.apps/v1/monocle-sample-elastic",
		"api":     "Deployment.apps/v1/monocle-sample-api",
		"crawler": "Deployment.apps/v1/monocle-sample-crawler",
	}
	for name, tc := range cases {
		for startName, start := range starts {
			if tc.running && startName == "new" {
				continue
			}
			t.Run(name+"/"+startName, func(t *testing.T) {
				c := start(t, tc.spec)
				for step := range 2 {
					secret := c.children["Secret.v1"]["monocle-sample-api"]
					if len(tc.generated) > 0 && secret == nil {
						break // a new Monocle: its keys are the hook's own
					}
					for k, v := range tc.generated {
						secret["data"].(map[string]any)[k] = base64.StdEncoding.EncodeToString([]byte(v))
					}
					req := c.request(t)
					req.Related = tc.related
					body := syncJSON(t, req)
					a := decodeAnswer(t, body)
					if r := a.Status.Condition(condition.ConditionSpecApplied).Reason; r != tc.reason {
						t.Fatalf("step %d: SpecApplied %s, want %s", step, r, tc.reason)
					}
					claims := heldClaims(t, a.Status)
					before := map[string][]byte{}
					for _, key := range workloads {
						typ, n, _ := strings.Cut(key, "/monocle")
						if o := c.children[typ]["monocle"+n]; o != nil {
							before[key] = mustMarshal(t, o["spec"])
						}
					}
					created, updated, deleted := c.apply(t, body)
					changed := slices.Concat(created, updated, deleted)
					for comp, key := range workloads {
						typ, n, _ := strings.Cut(key, "/monocle")
						after := c.children[typ]["monocle"+n]
						switch claims[comp] {
						case "held":
							if before[key] == nil || after == nil || string(mustMarshal(t, after["spec"])) != string(before[key]) || slices.Contains(changed, key) {
								t.Errorf("step %d: the status says %s held, but the answer changes %s (created, updated, deleted: %v)", step, comp, key, changed)
							}
						case "not made":
							if before[key] != nil || after != nil {
								t.Errorf("step %d: the status says %s not made, but %s is there (before: %v)", step, comp, key, before[key] != nil)
							}
						default:
							continue
						}
					}
					for _, key := range changed {
						for comp, w := range workloads {
							if key == w && claims[comp] != "" {
								t.Errorf("step %d: %s is created, updated or deleted, and the status calls %s %s", step, key, comp, claims[comp])
							}
						}
					}
					c.markReady()
				}
			})
		}
	}
}

// heldClaims are what the status says of each component it holds: "held"
// (as it runs) or "not made", from Progressing's message, which names
// every one, and Ready's, which names those not ready, the same.
func heldClaims(t *testing.T, st answerStatus) map[string]string {
	t.Helper()
	claims := map[string]string{}
	parse := func(list string) map[string]string {
		out := map[string]string{}
		for _, item := range strings.Split(list, ", ") {
			comp, what, ok := strings.Cut(item, " ")
			if !ok || (what != "held" && what != "not made") {
				t.Fatalf("%q in %q: not a component held or not made", item, list)
			}
			out[comp] = what
		}
		return out
	}
	const until = " until the spec is applied (SpecApplied)"
	for _, part := range strings.Split(st.Condition(condition.ConditionProgressing).Message, "; ") {
		if list, ok := strings.CutSuffix(part, until); ok {
			claims = parse(list)
		}
	}
	ready := st.Condition(condition.ConditionReady)
	if ready.Status == metav1.ConditionFalse && ready.Reason != condition.ReasonComponentsNotReady && ready.Reason != condition.ReasonRestoring {
		list, _, _ := strings.Cut(ready.Message, ": ")
		for comp, what := range parse(list) {
			if claims[comp] != what {
				t.Errorf("Ready says %s %s, Progressing %q", comp, what, claims[comp])
			}
		}
	}
	return claims
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The incident: the Secret of a running Monocle is deleted, then
// made again as it was. The pods never roll (a Recreate crawler would be
// killed into a pod that cannot start), and the status says they are held.
func TestMissingSecretHoldsRunningPods(t *testing.T) {
	tokens := wire.Related{Secrets: map[string]*corev1.Secret{"tokens": {ObjectMeta: metav1.ObjectMeta{Name: "tokens"}, Data: map[string][]byte{"GITHUB_TOKEN": []byte("t")}}}}
	c := converged(t)
	c.parent = setSpec(t, c.parent, configSpec(t, githubConfig, `{"secretRef":{"name":"tokens"}}`))
	sync := func(related wire.Related) (answer, []string) {
		req := c.request(t)
		req.Related = related
		body := syncJSON(t, req)
		created, updated, deleted := c.apply(t, body)
		c.markReady()
		return decodeAnswer(t, body), slices.Concat(created, updated, deleted)
	}
	sync(tokens)
	sync(tokens)
	a, changed := sync(wire.Related{})
	for _, key := range changed {
		if strings.HasPrefix(key, "Deployment.") {
			t.Errorf("the Secret deleted: %s changes", key)
		}
	}
	if got := a.Status.Condition(condition.ConditionProgressing).Message; got != "api held, crawler held until the spec is applied (SpecApplied)" {
		t.Errorf("Progressing %q", got)
	}
	if a.Status.Condition(condition.ConditionReady).Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v: the pods run", a.Status.Condition(condition.ConditionReady))
	}
	if _, changed = sync(tokens); len(changed) > 0 {
		t.Errorf("the same Secret made again: %v change", changed)
	}
}
