package elastic

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/child"
)

// Resolve: where Elasticsearch is, its volume and its memory, with their
// defaults, or the refusal that names the field. Each row is a spec, as
// its JSON.
func TestResolve(t *testing.T) {
	tests := map[string]struct {
		spec     string
		external bool
		url      string
		size     string // the volume's size and the field it comes from
		field    string
		heap     string // the -Xms/-Xmx
		memory   string // the container's memory limit
		note     string // a word of the note, "" for none
		refused  string // the refused field, "" when it resolves
	}{
		"nothing: the defaults":             {spec: `{}`, size: "10Gi", field: "storageSize", heap: "512m", memory: "1Gi"},
		"the seed's spec-wide storageSize":  {spec: `{"storageSize":"5Gi"}`, size: "5Gi", field: "storageSize", heap: "512m", memory: "1Gi"},
		"elasticsearch.storageSize first":   {spec: `{"storageSize":"5Gi","elasticsearch":{"storageSize":"7Gi"}}`, size: "7Gi", field: "elasticsearch.storageSize", heap: "512m", memory: "1Gi"},
		"a heap: twice it in memory":        {spec: `{"elasticsearch":{"heap":"1g"}}`, size: "10Gi", field: "storageSize", heap: "1g", memory: "2Gi"},
		"a memory limit: half of it":        {spec: `{"elasticsearch":{"resources":{"limits":{"memory":"4Gi"}}}}`, size: "10Gi", field: "storageSize", heap: "2048m", memory: "4Gi"},
		"a heap over half the memory: note": {spec: `{"elasticsearch":{"heap":"3g","resources":{"limits":{"memory":"4Gi"}}}}`, size: "10Gi", field: "storageSize", heap: "3g", memory: "4Gi", note: "over half the memory"},
		"an external URL, as getURL reads":  {spec: `{"elasticsearch":{"url":"es:9200/"}}`, external: true, url: "http://es:9200", size: "10Gi", field: "storageSize", heap: "512m", memory: "1Gi"},
		"a URL from a Secret":               {spec: `{"elasticsearch":{"urlSecretRef":{"name":"es","key":"url"}}}`, external: true, size: "10Gi", field: "storageSize", heap: "512m", memory: "1Gi"},
		"https":                             {spec: `{"elasticsearch":{"url":"https://es:9200"}}`, refused: "elasticsearch.url"},
		"a Secret without a key":            {spec: `{"elasticsearch":{"urlSecretRef":{"name":"es"}}}`, refused: "elasticsearch.urlSecretRef"},
		"a size that is no quantity":        {spec: `{"storageSize":"lots"}`, refused: "storageSize"},
		"a size of zero":                    {spec: `{"elasticsearch":{"storageSize":"0"}}`, refused: "elasticsearch.storageSize"},
		"a heap that is no JVM size":        {spec: `{"elasticsearch":{"heap":"1GB"}}`, refused: "elasticsearch.heap"},
		"a heap under 256m":                 {spec: `{"elasticsearch":{"heap":"128m"}}`, refused: "elasticsearch.heap"},
		"a heap over 31g":                   {spec: `{"elasticsearch":{"heap":"32g"}}`, refused: "elasticsearch.heap"},
		"a heap the memory cannot hold":     {spec: `{"elasticsearch":{"heap":"2g","resources":{"limits":{"memory":"2Gi"}}}}`, refused: "elasticsearch.heap"},
		"memory too small for a heap":       {spec: `{"elasticsearch":{"resources":{"requests":{"memory":"256Mi"}}}}`, refused: "elasticsearch.resources.requests.memory"},
		"an image with a space":             {spec: `{"elasticsearch":{"image":"es :7"}}`, refused: "elasticsearch.image"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var spec v1alpha1.MonocleSpec
			if err := json.Unmarshal([]byte(tc.spec), &spec); err != nil {
				t.Fatal(err)
			}
			s, note, ferr := Resolve(&spec, child.Scheduling{})
			if tc.refused != "" {
				if ferr == nil || ferr.Field != tc.refused {
					t.Fatalf("Resolve: %v, want a refusal of %s", ferr, tc.refused)
				}
				return
			}
			if ferr != nil {
				t.Fatal(ferr)
			}
			mem := s.Resources.Limits[corev1.ResourceMemory]
			if s.External() != tc.external || s.URL != tc.url || s.size.String() != tc.size || s.sizeField != tc.field || s.Heap != tc.heap || mem.String() != tc.memory {
				t.Errorf("external %v, URL %q, size %s (%s), heap %s, memory %s; want %v, %q, %s (%s), %s, %s",
					s.External(), s.URL, s.size.String(), s.sizeField, s.Heap, mem.String(), tc.external, tc.url, tc.size, tc.field, tc.heap, tc.memory)
			}
			if (note == "") != (tc.note == "") || !strings.Contains(note, tc.note) {
				t.Errorf("note %q, want one saying %q", note, tc.note)
			}
			if !s.NetworkPolicy {
				t.Error("the NetworkPolicy is off by default")
			}
		})
	}
}
