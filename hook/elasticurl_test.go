package hook

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// elasticURLValues are the values of MONOCLE_ELASTIC_URL written in an
// answer, in every child that sets one.
var elasticURLValue = regexp.MustCompile(`"name":"MONOCLE_ELASTIC_URL","value":"([^"]*)"`)

// spec.elasticsearch.url is written as Monocle 1.11.2 reads it, in every
// place a client gets it (the API's environment and the update-idents
// Job's): getURL prepends http:// to a value that starts with neither
// http:// nor https:// (src/CLI.hs:128-132), and Monocle joins its paths
// to it with "/" (src/Database/Bloodhound/Raw.hs:74,84; bloodhound
// 0.19.1.0, pinned by nix/default.nix:26-29, joinPath' in
// src/Database/Bloodhound/Client.hs:241-247), so a trailing slash would
// make every path start with "//".
func TestElasticsearchURLAsMonocleReadsIt(t *testing.T) {
	for value, want := range map[string]string{
		"http://es:9200":                  "http://es:9200",
		"http://es:9200/":                 "http://es:9200",
		"http://proxy.example.com/es//":   "http://proxy.example.com/es",
		"http://u:p@es.example.com:9200/": "http://u:p@es.example.com:9200",
		// net/url reads "es:9200" as the scheme "es": Monocle reads a host.
		"es:9200":          "http://es:9200",
		"es.example.com/":  "http://es.example.com",
		"10.0.0.7:9200":    "http://10.0.0.7:9200",
		"[fd00::7]:9200":   "http://[fd00::7]:9200",
		"HTTP://es:9200":   "http://es:9200",
		"Http://es:9200//": "http://es:9200",
	} {
		t.Run(value, func(t *testing.T) {
			spec, _ := json.Marshal(map[string]any{"elasticsearch": map[string]any{"url": value}})
			req := steady(t, withSpec(t, string(spec)))
			req.Children.Jobs = nil // a new update-idents Job is answered
			body := syncJSON(t, req)
			a := decodeAnswer(t, body)
			if c := a.Status.Condition(condition.ConditionSpecApplied); c.Status != metav1.ConditionTrue {
				t.Fatalf("SpecApplied %+v", c)
			}
			got := elasticURLValue.FindAllStringSubmatch(string(body), -1)
			if len(got) != 2 { // the API and the update-idents Job
				t.Fatalf("MONOCLE_ELASTIC_URL written %d times, want 2: %q", len(got), got)
			}
			for _, g := range got {
				if g[1] != want {
					t.Errorf("MONOCLE_ELASTIC_URL %q, want %q", g[1], want)
				}
			}
		})
	}
}

// A URL Monocle would not reach Elasticsearch at is InvalidSpec, naming
// the field and the fix, never the value (it may hold credentials), and
// nothing running moves.
func TestElasticsearchURLRefused(t *testing.T) {
	for value, says := range map[string]string{
		// Monocle's client is made with http-client's default manager
		// (src/Monocle/Env.hs:39-42): no TLS.
		"https://u:secret@es:9200": "is https://: Monocle 1.11 speaks plain HTTP",
		"HTTPS://u:secret@es:9200": "is https://",
		// getURL reads "ftp://es" as http://ftp://es: the host "ftp", an
		// empty port.
		"ftp://u:secret@es":            "has a port that is not a number",
		"http://u:secret@es:99999":     "has a port that is not a number",
		"http://u:secret@es:9200/?x=1": "has a query or a fragment",
		"http://u:secret@es:9200#x":    "has a query or a fragment",
		"http://:9200/secret":          "is not a URL of a host",
		"http://u:secret@es :9200":     "has a space or a control character",
		"http://u:secret@es:9200\n":    "has a space or a control character (a final newline, from a file?)",
	} {
		t.Run(value, func(t *testing.T) {
			c := converged(t)
			spec, _ := json.Marshal(map[string]any{"elasticsearch": map[string]any{"url": value}})
			c.parent = setSpec(t, c.parent, withSpec(t, string(spec)))
			body := syncJSON(t, c.request(t))
			cond := decodeAnswer(t, body).Status.Condition(condition.ConditionSpecApplied)
			if cond.Reason != condition.ReasonInvalidSpec || !strings.HasPrefix(cond.Message, "spec.elasticsearch.url "+says) {
				t.Errorf("SpecApplied %+v, want InvalidSpec saying %q", cond, says)
			}
			if strings.Contains(cond.Message, "secret") {
				t.Errorf("the value is quoted: %s", cond.Message)
			}
			if created, updated, deleted := c.apply(t, body); len(created)+len(updated)+len(deleted) > 0 {
				t.Errorf("created %v, updated %v, deleted %v", created, updated, deleted)
			}
		})
	}
}

// A URL in urlSecretRef's Secret reaches the pods as it is (secretKeyRef):
// one Monocle reads right applies, a scheme-less one too (getURL,
// src/CLI.hs:128-132); one the hook cannot write away (a trailing slash,
// an upper-case scheme) or https holds the pods as they run, naming the
// key, the Secret and the fix, never the value.
func TestElasticsearchURLFromSecret(t *testing.T) {
	for value, says := range map[string]string{
		"http://u:secret@es:9200":   "",
		"u:secret@es:9200":          "",
		"es.example.com":            "",
		"http://u:secret@es:9200/":  `key "url" of Secret "es" ends in /, and Monocle joins its paths to it with / (its requests would start with //): drop the trailing /`,
		"u:secret@es:9200/":         "ends in /",
		"HTTP://u:secret@es:9200":   `key "url" of Secret "es" has its scheme in upper case, which Monocle reads as a host: write http:// in lower case`,
		"https://u:secret@es:9200":  `key "url" of Secret "es" is https://: Monocle 1.11 speaks plain HTTP to Elasticsearch`,
		"ftp://u:secret@es":         "has a port that is not a number",
		"http://u:secret@es:9200\n": `key "url" of Secret "es" has a space or a control character (a final newline, from a file?)`,
	} {
		t.Run(value, func(t *testing.T) {
			c := converged(t)
			c.parent = setSpec(t, c.parent, withSpec(t, `{"elasticsearch":{"urlSecretRef":{"name":"es","key":"url"}}}`))
			req := c.request(t)
			req.Related = wire.Related{Secrets: map[string]*corev1.Secret{"es": {ObjectMeta: metav1.ObjectMeta{Name: "es"}, Data: map[string][]byte{"url": []byte(value)}}}}
			body := syncJSON(t, req)
			if strings.Contains(string(body), "secret@") {
				t.Fatal("the URL is in the answer")
			}
			cond := decodeAnswer(t, body).Status.Condition(condition.ConditionSpecApplied)
			if says == "" {
				if cond.Status != metav1.ConditionTrue {
					t.Errorf("SpecApplied %+v", cond)
				}
				return
			}
			if cond.Reason != condition.ReasonInvalidElasticsearchURL || !strings.Contains(cond.Message, "spec.elasticsearch.urlSecretRef") || !strings.Contains(cond.Message, says) {
				t.Errorf("SpecApplied %+v, want InvalidElasticsearchURL saying %q", cond, says)
			}
			_, updated, deleted := c.apply(t, body)
			for _, u := range append(updated, deleted...) {
				if strings.HasPrefix(u, "Deployment") || strings.HasPrefix(u, "Job") {
					t.Errorf("the pods moved: %s", u)
				}
			}
		})
	}
}

// The URLs of the Elasticsearch the hook runs, in the Secret N-elastic,
// which every client of it reads (the API, the Jobs), end in no "/".
func TestManagedElasticsearchURLs(t *testing.T) {
	n := instance.For("monocle-sample")
	sec := decodeAnswer(t, syncJSON(t, steady(t, baseSpec))).child("Secret", n.Elastic)
	data, _ := sec["data"].(map[string]any)
	urls := 0
	for _, u := range elasticusers.All {
		raw, ok := data[elasticusers.URLKey(u)].(string)
		if !ok {
			continue // the probe's curl reads a netrc
		}
		urls++
		url, err := base64.StdEncoding.DecodeString(raw)
		if err != nil || !strings.HasPrefix(string(url), "http://"+u.Name+":") || !strings.HasSuffix(string(url), "@"+n.Elastic+":9200") {
			t.Errorf("%s: %v", elasticusers.URLKey(u), err) // never the password
		}
	}
	if urls != 2 {
		t.Errorf("%d URLs in Secret %s, want the API's and the snapshots'", urls, n.Elastic)
	}
}
