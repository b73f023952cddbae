package e2e

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An Elasticsearch URL without a scheme and with a trailing slash is
// admitted by the schema, and the API gets it as Monocle reads it
// (getURL prepends http://: src/CLI.hs:128-132) without the slash, which
// would start every path Monocle joins to it with "//"
// (src/Database/Bloodhound/Raw.hs:74,84).
func TestElasticsearchURLOnTheServer(t *testing.T) {
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	d.createMonocle("e", map[string]any{"elasticsearch": map[string]any{"url": "es.example.com:9200/"}})
	d.converge("e")
	api := d.get("Deployment.apps/v1", "e-api")
	containers, _, _ := unstructured.NestedSlice(api.Object, "spec", "template", "spec", "containers")
	env := map[string]any{}
	for _, e := range containers[0].(map[string]any)["env"].([]any) {
		e := e.(map[string]any)
		env[e["name"].(string)] = e["value"]
	}
	if env["MONOCLE_ELASTIC_URL"] != "http://es.example.com:9200" {
		t.Errorf("MONOCLE_ELASTIC_URL %v", env["MONOCLE_ELASTIC_URL"])
	}
}
