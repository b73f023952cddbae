package hook

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Each value is one the API server refuses in a child (e2e's
// TestSpecValuesTheAPIServerRefuses proves it on a real one): the hook
// refuses the spec, naming the field.
func TestChildValuesRefused(t *testing.T) {
	tests := map[string]struct{ spec, field string }{
		"requests above limits":              {`{"api":{"resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}}`, "spec.api.resources.requests[cpu]"},
		"negative limit":                     {`{"crawler":{"resources":{"limits":{"memory":"-1Gi"}}}}`, "spec.crawler.resources.limits[memory]"},
		"unknown resource name":              {`{"api":{"resources":{"limits":{"gpu":"1"}}}}`, "spec.api.resources.limits[gpu]"},
		"requests. prefix":                   {`{"api":{"resources":{"limits":{"requests.cpu":"1"}}}}`, "spec.api.resources.limits[requests.cpu]"},
		"extended resource overcommitted":    {`{"api":{"resources":{"requests":{"example.com/foo":"1"},"limits":{"example.com/foo":"2"}}}}`, "spec.api.resources.requests[example.com/foo]"},
		"extended resource without limit":    {`{"api":{"resources":{"requests":{"example.com/foo":"1"}}}}`, "spec.api.resources.limits[example.com/foo]"},
		"extended resource not an integer":   {`{"api":{"resources":{"requests":{"example.com/foo":"500m"},"limits":{"example.com/foo":"500m"}}}}`, "spec.api.resources.limits[example.com/foo]"},
		"huge pages alone":                   {`{"api":{"resources":{"requests":{"hugepages-2Mi":"4Mi"},"limits":{"hugepages-2Mi":"4Mi"}}}}`, "spec.api.resources"},
		"huge pages not whole pages":         {`{"api":{"resources":{"requests":{"hugepages-2Mi":"3Mi","memory":"1Gi"},"limits":{"hugepages-2Mi":"3Mi","memory":"1Gi"}}}}`, "spec.api.resources.limits[hugepages-2Mi]"},
		"elasticsearch requests above":       {`{"elasticsearch":{"resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1","memory":"2Gi"}}}}`, "spec.elasticsearch.resources.requests[cpu]"},
		"nodeSelector key with a space":      {`{"nodeSelector":{"bad key":"x"}}`, "spec.nodeSelector"},
		"nodeSelector value with a space":    {`{"nodeSelector":{"disk":"fast ssd"}}`, "spec.nodeSelector[disk]"},
		"toleration Equal, empty key":        {`{"tolerations":[{"operator":"Equal","value":"x"}]}`, "spec.tolerations[0].operator"},
		"toleration Exists with a value":     {`{"tolerations":[{"key":"k","operator":"Exists","value":"x"}]}`, "spec.tolerations[0].value"},
		"tolerationSeconds, not NoExecute":   {`{"tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule","tolerationSeconds":5}]}`, "spec.tolerations[0].effect"},
		"toleration unknown operator":        {`{"tolerations":[{"key":"k","operator":"Gt","value":"1"}]}`, "spec.tolerations[0].operator"},
		"no node selector terms":             {`{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}}}}`, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"},
		"node requirement In, no values":     {`{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"In"}]}]}}}}`, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values"},
		"node field not metadata.name":       {`{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"spec.x","operator":"In","values":["a"]}]}]}}}}`, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key"},
		"preferred weight 0":                 {`{"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":0,"preference":{}}]}}}`, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"},
		"pod term without topologyKey":       {`{"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"a":"b"}}}]}}}`, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"},
		"matchLabelKeys without selector":    {`{"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"zone","matchLabelKeys":["app"]}]}}}`, "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys"},
		"matchLabelKeys key in the selector": {`{"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"zone","labelSelector":{"matchLabels":{"app":"x"}},"matchLabelKeys":["app"]}]}}}`, "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys[0]"},
		"image with a trailing form feed":    {`{"image":"quay.io/x:1\f"}`, "spec.image"},
		"selector value with a space":        {`{"affinity":{"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"podAffinityTerm":{"topologyKey":"zone","labelSelector":{"matchLabels":{"a":"b c"}}}}]}}}`, "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchLabels"},
		"storageClassName with _":            {`{"storageClassName":"fast_ssd"}`, "spec.storageClassName"},
		"elasticsearch storageClassName":     {`{"elasticsearch":{"storageClassName":"fast_ssd"}}`, "spec.elasticsearch.storageClassName"},
		"snapshots storageClassName":         {`{"elasticsearch":{"snapshots":{"schedule":"@daily","keep":3,"storageClassName":"fast_ssd"}}}`, "spec.elasticsearch.snapshots.storageClassName"},
		"ingress className":                  {`{"ingress":{"host":"a.example.com","className":"Bad_Class"}}`, "spec.ingress.className"},
		"ingress tlsSecretName":              {`{"ingress":{"host":"a.example.com","tlsSecretName":"Bad_Name"}}`, "spec.ingress.tlsSecretName"},
		"ingress annotation key":             {`{"ingress":{"host":"a.example.com","annotations":{"bad key":"x"}}}`, "spec.ingress.annotations"},
		"ingress class twice, differing":     {`{"ingress":{"host":"a.example.com","className":"nginx","annotations":{"kubernetes.io/ingress.class":"traefik"}}}`, "spec.ingress.annotations[kubernetes.io/ingress.class]"},
		"ingress annotations over 16 KiB":    {`{"ingress":{"host":"a.example.com","annotations":{"a":"` + strings.Repeat("x", 4096) + `","b":"` + strings.Repeat("x", 4096) + `","c":"` + strings.Repeat("x", 4096) + `","d":"` + strings.Repeat("x", 4096) + `"}}}`, "spec.ingress.annotations"},
		"ingress host an IP address":         {`{"ingress":{"host":"10.0.0.1"}}`, "spec.ingress.host"},
		"route.host in upper case":           {`{"route":{"host":"Monocle.Example.com"}}`, "spec.route.host"},
		"route.host with a port":             {`{"route":{"host":"monocle.example.com:8080"}}`, "spec.route.host"},
		"secretRef name":                     {`{"secretRef":{"name":"Bad_Name"}}`, "spec.secretRef.name"},
		"configMapRef name":                  {`{"configMapRef":{"name":"Bad_Name"}}`, "spec.configMapRef.name"},
		"urlSecretRef name":                  {`{"elasticsearch":{"urlSecretRef":{"name":"Bad_Name","key":"url"}}}`, "spec.elasticsearch.urlSecretRef.name"},
		"urlSecretRef key":                   {`{"elasticsearch":{"urlSecretRef":{"name":"es","key":"bad key"}}}`, "spec.elasticsearch.urlSecretRef.key"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := resolveSpec(json.RawMessage(tc.spec))
			if err == nil {
				t.Fatal("applied, want refused")
			}
			if err.Reason != condition.ReasonInvalidSpec || !strings.HasPrefix(err.Error(), tc.field+" ") {
				t.Errorf("%s: %v, want InvalidSpec naming %s", err.Reason, err, tc.field)
			}
		})
	}
}

// The same fields with values the API server takes are applied.
func TestChildValuesAccepted(t *testing.T) {
	tests := map[string]string{
		"resources":               `{"api":{"resources":{"requests":{"cpu":"500m","memory":"1Gi","ephemeral-storage":"1Gi","example.com/foo":"2"},"limits":{"memory":"1Gi","example.com/foo":"2"}}}}`,
		"huge pages":              `{"crawler":{"resources":{"requests":{"hugepages-2Mi":"4Mi","memory":"1Gi"},"limits":{"hugepages-2Mi":"4Mi","memory":"1Gi"}}}}`,
		"kubernetes.io domain":    `{"api":{"resources":{"requests":{"kubernetes.io/foo":"1"}}}}`,
		"nodeSelector":            `{"nodeSelector":{"kubernetes.io/os":"linux","disk":""}}`,
		"tolerations":             `{"tolerations":[{"operator":"Exists"},{"key":"k","value":"v","effect":"NoSchedule"},{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}]}`,
		"node affinity":           `{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"cpus","operator":"Gt","values":["4"]}],"matchFields":[{"key":"metadata.name","operator":"In","values":["node-1"]}]}]},"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"preference":{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}}]}}}`,
		"pod anti-affinity":       `{"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},"namespaces":["monocle"],"matchLabelKeys":["pod-template-hash"]}]}}}`,
		"names":                   `{"storageClassName":"fast-ssd","secretRef":{"name":"tokens"},"configMapRef":{"name":"config.v2"},"ingress":{"host":"*.example.com","className":"nginx","tlsSecretName":"tls","annotations":{"cert-manager.io/cluster-issuer":"letsencrypt","Example.com/Upper":"x","kubernetes.io/ingress.class":"nginx"}}}`,
		"route.host":              `{"route":{"host":"monocle.apps.example.com"}}`,
		"urlSecretRef":            `{"elasticsearch":{"urlSecretRef":{"name":"es","key":"es.url_1"}}}`,
		"imagePullSecrets as k8s": `{"imagePullSecrets":[{"name":"Not_A_DNS_Name"}]}`,
	}
	for name, spec := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := resolveSpec(json.RawMessage(spec)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The CRD's bounds, read from the CRD itself, hold for a spec stored
// before them: over any, the spec is refused before it is decoded.
func TestBoundsFromTheCRD(t *testing.T) {
	long := strings.Repeat("a", 40000)
	items := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	tests := map[string]struct{ spec, want string }{
		"a name of 40,000 characters":  {`{"secretRef":{"name":"` + long + `"}}`, "spec.secretRef.name is 40000 characters long, over the CRD's 253"},
		"characters, not bytes":        {`{"webappTitle":"` + strings.Repeat("é", 257) + `"}`, "spec.webappTitle is 257 characters long, over the CRD's 256"},
		"tolerations":                  {`{"tolerations":` + items(17, `{}`) + `}`, "spec.tolerations has more than the CRD's 16 items"},
		"300,000 empty affinity terms": {`{"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":` + items(300000, `{}`) + `}}}`, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution has more than the CRD's 2 items"},
		"a map's entries":              {`{"nodeSelector":{` + strings.TrimSuffix(strings.Repeat(`"k":"v",`, 17), ",") + `}}`, "spec.nodeSelector has more than the CRD's 16 entries"},
		"a map value":                  {`{"nodeSelector":{"k":"` + strings.Repeat("v", 64) + `"}}`, `spec.nodeSelector["k"] is 64 characters long, over the CRD's 63`},
		"a long key is cut":            {`{"nodeSelector":{"` + long + `":"` + strings.Repeat("v", 64) + `"}}`, `spec.nodeSelector["aaaa`},
		"deep in a list":               {`{"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"` + long + `"}]}}}`, "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey is 40000 characters long, over the CRD's 317"},
		"unknown fields walked freely": {`{"unknown":` + items(1000, `"`+long[:300]+`"`) + `,"image":"` + long[:513] + `"}`, "spec.image is 513 characters long, over the CRD's 512"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := resolveSpec(json.RawMessage(tc.spec))
			if err == nil || err.Reason != condition.ReasonInvalidSpec || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("%v, want InvalidSpec %s", err, tc.want)
			}
			if n := utf8.RuneCountInString(err.Error()); n > condition.MaxMessage+1 {
				t.Errorf("message of %d characters", n)
			}
		})
	}
}

// A user's value in a message is cut, so that a condition stays writable
// whatever the spec holds (its schema's maxLength is 32,768).
func TestMessagesStayWritable(t *testing.T) {
	long := strings.Repeat("x", 40000)
	if q := condition.Quote(long); utf8.RuneCountInString(q) != condition.MaxQuoted+3 || !strings.HasSuffix(q, `…"`) {
		t.Errorf("quote kept %d characters: %.40s...", utf8.RuneCountInString(q), q)
	}
	if q := condition.Quote("short"); q != `"short"` {
		t.Errorf("quote(short) = %s", q)
	}
	if c := condition.Cut(strings.Repeat("é", 10), 4); c != "éééé…" {
		t.Errorf("cut by characters: %s", c)
	}
	// A spec stored before the bounds, naming a Secret of 40,000
	// characters that does not exist: the message quotes it cut.
	in := statusFacts{errors: []*condition.FieldError{{Reason: condition.ReasonReferenceNotFound, Field: "secretRef.name", Message: "names Secret " + condition.Quote(long) + ", which does not exist"}}}
	st := makeStatus(&wire.Parent{}, instance.For("m"), wire.Children{}, testEnv().Now, in)
	for _, c := range st.Conditions {
		if n := utf8.RuneCountInString(c.Message); n > 2*condition.MaxQuoted {
			t.Errorf("%s: message of %d characters", c.Type, n)
		}
	}
}

// Four bad matchLabels values (a map): the same message every time, as
// ValidateLabelSelector's errors, found by ranging over the map, are
// sorted before the first is named (#48: 4 different answers in 50).
func TestSelectorMessagesAreStable(t *testing.T) {
	spec := json.RawMessage(`{"affinity":{"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"podAffinityTerm":{"topologyKey":"zone","labelSelector":{"matchLabels":{"a":"b c","d":"e f","g":"h i","j":"k l"}}}}]}}}`)
	_, first := resolveSpec(spec)
	if first == nil {
		t.Fatal("bad matchLabels values accepted")
	}
	for range 50 {
		if _, err := resolveSpec(spec); err == nil || err.Error() != first.Error() {
			t.Fatalf("%v, then %v", first, err)
		}
	}
}
