package hook

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/crd"
	"github.com/change-metrics/monocle-hook/hook/condition"
)

// What reaches Monocle's web UI is what Monocle 1.11.2 can serve: the public
// URL as its UI appends "/api/2/..." to it and its getURL reads it (issue 35,
// item 1).
func TestPublicURLAsMonocleServesIt(t *testing.T) {
	for name, tc := range publicURLCases {
		t.Run(name, func(t *testing.T) {
			s, err := resolveSpec(json.RawMessage(tc.spec))
			if tc.wantURL == "" {
				if err == nil {
					t.Fatalf("applied with public URL %q, want InvalidSpec naming spec.%s", s.access.PublicURL, tc.field)
				}
				if err.Reason != condition.ReasonInvalidSpec || !strings.HasPrefix(err.Error(), "spec."+tc.field+" ") {
					t.Fatalf("%s: %v, want InvalidSpec naming spec.%s", err.Reason, err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if s.access.PublicURL != tc.wantURL {
				t.Errorf("public URL %q, want %q", s.access.PublicURL, tc.wantURL)
			}
		})
	}
}

// The CRD's patterns say the same of a public URL, at the API server: what
// the hook refuses, they refuse, and what they admit, the hook applies. (An
// upper-case scheme, which the hook writes lowercase for a Monocle stored
// before the pattern, the pattern refuses.)
func TestCRDPatternsAgreeOnPublicURL(t *testing.T) {
	var doc struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]struct {
							Properties map[string]struct{ Pattern string }
						}
					} `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(crd.YAML, &doc); err != nil {
		t.Fatal(err)
	}
	fields := doc.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties
	for name, tc := range publicURLCases {
		var spec map[string]string
		if err := json.Unmarshal([]byte(tc.spec), &spec); err != nil {
			continue // an Ingress: no string field
		}
		for field, value := range spec {
			pattern := regexp.MustCompile(fields[field].Pattern)
			if fields[field].Pattern == "" {
				t.Fatalf("the CRD has no pattern on spec.%s", field)
			}
			_, refused := resolveSpec(json.RawMessage(tc.spec))
			if admits := pattern.MatchString(value); admits == (refused != nil) && !strings.HasPrefix(value, "HTTPS") {
				t.Errorf("%s: the CRD's pattern admits %q: %v; the hook refuses it: %v", name, value, admits, refused)
			}
		}
	}
}

// Each case cites the line of Monocle 1.11.2 it follows.
var publicURLCases = map[string]struct {
	spec    string
	wantURL string // "": refused, naming field
	field   string
}{
	// WebApi.res:20 appends "/api/2/..." as it is: a trailing slash
	// would make "//api/2/...", which no route matches.
	"a trailing slash is dropped":   {`{"publicURL":"https://monocle.example.com/"}`, "https://monocle.example.com", ""},
	"two trailing slashes too":      {`{"publicURL":"https://monocle.example.com//"}`, "https://monocle.example.com", ""},
	"the seed's field the same way": {`{"monoclePublicURL":"http://metrics.example.com:8080/"}`, "http://metrics.example.com:8080", ""},
	// CLI.hs:128-132 takes only a lowercase scheme, else prepends http://.
	"an upper-case scheme is written lowercase": {`{"publicURL":"HTTPS://monocle.example.com"}`, "https://monocle.example.com", ""},
	"the default stays":                         {`{}`, DefaultPublicURL, ""},
	"an Ingress's URL stays":                    {`{"ingress":{"host":"m.example.com","tlsSecretName":"tls"}}`, "https://m.example.com", ""},
	// App.res:338 reads the first path segment as the workspace, and
	// index.html loads the bundle from /dist: no path prefix.
	"a path":           {`{"publicURL":"https://example.com/monocle"}`, "", "publicURL"},
	"a path and slash": {`{"publicURL":"https://example.com/monocle/"}`, "", "publicURL"},
	// The UI appends to the string as written (WebApi.res:20).
	"a query":          {`{"publicURL":"https://monocle.example.com?x=1"}`, "", "publicURL"},
	"an empty query":   {`{"publicURL":"https://monocle.example.com/?"}`, "", "publicURL"},
	"a fragment":       {`{"publicURL":"https://monocle.example.com#top"}`, "", "publicURL"},
	"credentials":      {`{"publicURL":"https://user:pass@monocle.example.com"}`, "", "publicURL"},
	"not http":         {`{"publicURL":"ftp://monocle.example.com"}`, "", "publicURL"},
	"no scheme":        {`{"publicURL":"monocle.example.com"}`, "", "publicURL"},
	"a non-ASCII host": {`{"publicURL":"https://métriques.example.com"}`, "", "publicURL"},
	// Main.hs:57 puts the URL verbatim into a JavaScript string of
	// index.html:11's inline script.
	"a quote in the seed's public URL": {`{"monoclePublicURL":"https://m\"x.example.com"}`, "", "monoclePublicURL"},
}

// The API's MONOCLE_PUBLIC_URL and the status's URL have no trailing slash
// when the spec's has one.
func TestTrailingSlashReachesNoChild(t *testing.T) {
	req := fixture(t, "sync-v1-new-parent")
	req.Parent.Spec = json.RawMessage(`{"publicURL":"https://monocle.example.com/"}`)
	a := decodeAnswer(t, syncJSON(t, req))
	if a.Status.URL != "https://monocle.example.com" {
		t.Errorf("status.url %q", a.Status.URL)
	}
	body, _ := json.Marshal(a.child("Deployment", "monocle-sample-api"))
	if !strings.Contains(string(body), `{"name":"MONOCLE_PUBLIC_URL","value":"https://monocle.example.com"}`) {
		t.Errorf("the API's environment: %s", body)
	}
}
