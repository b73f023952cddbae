package e2e

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A public URL written with a trailing slash, as most people write one, is
// admitted, and the API gets it without: Monocle's web UI appends
// "/api/2/..." to it as it is (web/src/components/WebApi.res:20). A title
// reaches the page's script as JavaScript escapes where it would break it.
func TestPublicURLTrailingSlashOnTheServer(t *testing.T) {
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	d.createMonocle("u", map[string]any{"publicURL": "https://monocle.example.com/", "webappTitle": `Équipe "A" </script>`})
	d.converge("u")
	api := d.get("Deployment.apps/v1", "u-api")
	containers, _, _ := unstructured.NestedSlice(api.Object, "spec", "template", "spec", "containers")
	env := map[string]any{}
	for _, e := range containers[0].(map[string]any)["env"].([]any) {
		e := e.(map[string]any)
		env[e["name"].(string)] = e["value"]
	}
	if env["MONOCLE_PUBLIC_URL"] != "https://monocle.example.com" || env["MONOCLE_WEBAPP_TITLE"] != `\u00c9quipe \u0022A\u0022 \u003c/script>` {
		t.Errorf("the API's environment: %v", env)
	}
	if url, _, _ := unstructured.NestedString(d.monocle("u").Object, "status", "url"); url != "https://monocle.example.com" {
		t.Errorf("status.url %q", url)
	}
}
