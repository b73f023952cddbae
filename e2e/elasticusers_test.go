package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// On the real API server, in a restricted namespace: Elasticsearch's users
// Secret, its StatefulSet with security on and the init container that
// links the file realm, the API reading its user's URL from the Secret;
// then docs/security.md's command that changes a password, run as printed: a
// new password, the API rolls once, Elasticsearch does not (its file realm
// reloads the file).
func TestElasticUsersOnTheServer(t *testing.T) {
	ctx := context.Background()
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	d.createMonocle("u", map[string]any{"crawler": map[string]any{"enabled": false}})
	d.converge("u")
	d.markReady("StatefulSet.apps/v1", "u-elastic")
	d.markReady("Deployment.apps/v1", "u-api")
	d.converge("u")

	var users corev1.Secret
	if err := k8sClient.Get(ctx, clientKey(ns, "u-elastic"), &users); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"users", "users_roles", "roles.yml", "probe.netrc", "monocle.url", "monocle-snapshots.url", "monocle.password"} {
		if len(users.Data[key]) == 0 {
			t.Errorf("the Secret u-elastic has no %s", key)
		}
	}
	sts := d.get("StatefulSet.apps/v1", "u-elastic")
	inits, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "initContainers")
	containers, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers")
	if len(inits) != 1 || !strings.Contains(jsonOf(t, containers), `"name":"xpack.security.enabled","value":"true"`) {
		t.Errorf("Elasticsearch: init containers %d, containers %s", len(inits), jsonOf(t, containers))
	}
	api := d.get("Deployment.apps/v1", "u-api")
	// The API goes through its proxy, the only container that reads its
	// user's URL: a native sidecar the API server keeps as such.
	apiPod, _, _ := unstructured.NestedMap(api.Object, "spec", "template", "spec")
	for _, want := range []string{`{"name":"MONOCLE_ELASTIC_URL","value":"http://127.0.0.1:9200"}`,
		`{"name":"MONOCLE_ELASTIC_URL","valueFrom":{"secretKeyRef":{"key":"monocle.url","name":"u-elastic"}}}`, `"name":"elastic-proxy"`, `"restartPolicy":"Always"`} {
		if !strings.Contains(jsonOf(t, apiPod), want) {
			t.Errorf("the API's pod %s\nlacks %s", jsonOf(t, apiPod), want)
		}
	}

	readme, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	const start = "kubectl -n NS patch secret N-elastic --type=json -p\n'[{"
	i := strings.Index(string(readme), start)
	if i < 0 {
		t.Fatal("docs/security.md prints no command that changes a password")
	}
	command, _, _ := strings.Cut(string(readme)[i:], "`")
	command = strings.NewReplacer("\n", " ", "-n NS", "-n "+ns, "N-elastic", "u-elastic").Replace(command)
	t.Logf("running: %s", command)
	shell(t, adminKubeconfig(t, "e2e-elastic-users-admin"), command)
	d.converge("u")

	var after corev1.Secret
	if err := k8sClient.Get(ctx, clientKey(ns, "u-elastic"), &after); err != nil {
		t.Fatal(err)
	}
	if string(after.Data["monocle.password"]) == string(users.Data["monocle.password"]) || len(after.Data["monocle.password"]) != 24 ||
		string(after.Data["users"]) == string(users.Data["users"]) {
		t.Error("the command made no new password, or its hash")
	}
	if got := d.get("Deployment.apps/v1", "u-api"); got.GetGeneration() != api.GetGeneration()+1 {
		t.Errorf("the API's generation went from %d to %d: want one roll", api.GetGeneration(), got.GetGeneration())
	}
	if got := d.get("StatefulSet.apps/v1", "u-elastic"); got.GetGeneration() != sts.GetGeneration() {
		t.Errorf("Elasticsearch's generation went from %d to %d: want none", sts.GetGeneration(), got.GetGeneration())
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
