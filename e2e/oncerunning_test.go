package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/change-metrics/monocle-hook/hook"
)

// A config naming GITHUB_TOKEN before the Secret has it: the Monocle gets
// its API and no crawler (Monocle's crawler process would exit); once the
// admin runs the command the condition prints, the crawler is made and the
// API rolls once, and nothing else changes.
func TestCrawlerWaitsForItsToken(t *testing.T) {
	ctx := context.Background()
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	config := "workspaces:\n  - name: demo\n    crawlers:\n      - name: gh\n        update_since: '2024-01-01'\n        provider: {github_organization: change-metrics}\n"
	d.createMonocle("m", map[string]any{"config": config})
	d.converge("m")
	d.markReady("StatefulSet.apps/v1", "m-elastic")
	d.markReady("Deployment.apps/v1", "m-api")
	d.converge("m")
	if _, ok := d.children(d.monocle("m").GetUID())["Deployment.apps/v1"]["m-crawler"]; ok {
		t.Fatal("a crawler was made without its token")
	}
	c := conditionOf(d.monocle("m"), "SpecApplied")
	msg, _ := c["message"].(string)
	_, command, found := strings.Cut(msg, "./token-1) and run ")
	if c["reason"] != "CrawlerTokenMissing" || !found || !strings.Contains(msg, "GITHUB_TOKEN") {
		t.Fatalf("SpecApplied = %v", c)
	}
	apiGeneration := d.get("Deployment.apps/v1", "m-api").GetGeneration()
	before := d.resourceVersions("m")

	// The admin runs it as printed, the token in the file it reads.
	if !strings.Contains(msg, `to its file ("GITHUB_TOKEN" to ./token-1)`) {
		t.Fatalf("SpecApplied does not say what to put in ./token-1: %s", msg)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token-1"), []byte("ghp_e2e"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("running: %s", command)
	shell(t, adminKubeconfig(t, "e2e-token-admin"), "cd "+dir+" && "+command)
	secret := &corev1.Secret{}
	if err := k8sClient.Get(ctx, clientKey(ns, "m-api"), secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["GITHUB_TOKEN"]) != "ghp_e2e" || len(secret.Data["CRAWLERS_API_KEY"]) == 0 || len(secret.Data["MONOCLE_JWK_GEN_KEY"]) < 64 {
		t.Fatalf("the Secret's keys after the command: %v", slices.Sorted(maps.Keys(secret.Data)))
	}

	r := d.sync("m")
	if want := []string{"Deployment.apps/v1/m-crawler"}; !slices.Equal(r.created, want) {
		t.Errorf("created %v, want %v", r.created, want)
	}
	// The Secret only takes the key into Metacontroller's last-applied copy.
	if want := []string{"Deployment.apps/v1/m-api", "Secret.v1/m-api"}; !slices.Equal(r.updated, want) || len(r.deleted) > 0 {
		t.Errorf("updated %v, want %v; deleted %v", r.updated, want, r.deleted)
	}
	d.markReady("Deployment.apps/v1", "m-api")
	d.markReady("Deployment.apps/v1", "m-crawler")
	d.converge("m")
	after := d.resourceVersions("m")
	for key, rv := range before {
		if after[key] != rv && key != "Deployment.apps/v1/m-api" && key != "Secret.v1/m-api" {
			t.Errorf("%s changed", key)
		}
	}
	if got := d.get("Deployment.apps/v1", "m-api").GetGeneration(); got != apiGeneration+1 {
		t.Errorf("the API's generation went from %d to %d: want one roll", apiGeneration, got)
	}
	if c := conditionOf(d.monocle("m"), "SpecApplied"); c["status"] != "True" {
		t.Errorf("SpecApplied = %v", c)
	}
}

// A login key that the API signs admin tokens with, set short in the
// user's Secret, holds the API and the crawler as they run; the command the
// condition prints removes it, and the API rolls once, onto the generated
// key.
func TestShortLoginKeyHoldsTheAPI(t *testing.T) {
	ctx := context.Background()
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	tokens := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens", Namespace: ns}, Data: map[string][]byte{
		"MONOCLE_ADMIN_TOKEN": []byte("admin"), "MONOCLE_JWK_GEN_KEY": bytes.Repeat([]byte("k"), 64)}}
	if err := k8sClient.Create(ctx, tokens); err != nil {
		t.Fatal(err)
	}
	d.createMonocle("k", map[string]any{"secretRef": map[string]any{"name": "tokens"}})
	d.converge("k")
	d.markReady("Deployment.apps/v1", "k-api")
	d.converge("k")

	tokens.Data["MONOCLE_JWK_GEN_KEY"] = []byte("too-short")
	if err := k8sClient.Update(ctx, tokens); err != nil {
		t.Fatal(err)
	}
	api, crawler := d.get("Deployment.apps/v1", "k-api"), d.get("Deployment.apps/v1", "k-crawler")
	d.converge("k")
	for _, w := range []*unstructured.Unstructured{api, crawler} {
		if got := d.get("Deployment.apps/v1", w.GetName()); got.GetResourceVersion() != w.GetResourceVersion() {
			t.Fatalf("%s was rolled onto a short key", w.GetName())
		}
	}
	c := conditionOf(d.monocle("k"), "SpecApplied")
	msg, _ := c["message"].(string)
	_, command, found := strings.Cut(msg, "the hook generates: ")
	if c["reason"] != "LoginKeyTooShort" || !found || strings.Contains(msg, "too-short") || !strings.Contains(msg, `Secret "tokens"`) {
		t.Fatalf("SpecApplied = %v", c)
	}
	t.Logf("running: %s", command)
	shell(t, adminKubeconfig(t, "e2e-key-admin"), command)
	d.converge("k")
	if err := k8sClient.Get(ctx, clientKey(ns, "tokens"), tokens); err != nil {
		t.Fatal(err)
	}
	if _, ok := tokens.Data["MONOCLE_JWK_GEN_KEY"]; ok || len(tokens.Data["MONOCLE_ADMIN_TOKEN"]) == 0 {
		t.Errorf("the user's Secret after the command: %v", slices.Sorted(maps.Keys(tokens.Data)))
	}
	const hash = hook.Group + "/secret-hash"
	if got := d.get("Deployment.apps/v1", "k-api"); got.GetGeneration() != api.GetGeneration()+1 || podAnnotation(got, hash) == podAnnotation(api, hash) {
		t.Errorf("the API's generation went from %d to %d: want one roll, onto the generated key", api.GetGeneration(), got.GetGeneration())
	}
	if c := conditionOf(d.monocle("k"), "SpecApplied"); c["status"] != "True" {
		t.Errorf("SpecApplied = %v", c)
	}
}

// OIDC with two API replicas: the API server takes the Service's ClientIP
// affinity, and going back to one replica removes it (a sessionAffinityConfig
// left with None would be refused).
func TestOIDCAffinityOnTheServer(t *testing.T) {
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	config := "auth:\n  auth_provider:\n    oidc_provider_name: sso\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces: []\n"
	affinity := func() (string, bool) {
		svc := d.get("Service.v1", "o-api")
		v, _, _ := unstructured.NestedString(svc.Object, "spec", "sessionAffinity")
		_, cfg, _ := unstructured.NestedMap(svc.Object, "spec", "sessionAffinityConfig")
		return v, cfg
	}
	for i, step := range []struct {
		replicas int64
		want     string
		config   bool
	}{{2, "ClientIP", true}, {1, "None", false}, {2, "ClientIP", true}} {
		spec := map[string]any{"config": config, "api": map[string]any{"replicas": step.replicas}}
		if i == 0 {
			d.createMonocle("o", spec)
		} else {
			d.setSpec("o", spec)
		}
		d.converge("o")
		if got, cfg := affinity(); got != step.want || cfg != step.config {
			t.Errorf("%d replicas: sessionAffinity %q, config %v", step.replicas, got, cfg)
		}
	}
}

// A config that enforces login before the Secret has its OIDC client secret:
// a new Monocle gets no API and no crawler (Monocle would serve every
// workspace to anyone); the command the condition prints adds it, and they
// are made. Running, the key removed holds the API as it runs; the command
// with a new secret rolls it once.
func TestLoginSecretHoldsTheAPI(t *testing.T) {
	ctx := context.Background()
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	config := "auth:\n  enforce_auth: true\n  auth_provider:\n    oidc_provider_name: sso\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces:\n  - name: demo\n    crawlers: []\n"
	d.createMonocle("o", map[string]any{"config": config})
	d.converge("o")
	d.markReady("StatefulSet.apps/v1", "o-elastic")
	d.converge("o")
	children := d.children(d.monocle("o").GetUID())["Deployment.apps/v1"]
	if _, ok := children["o-api"]; ok {
		t.Fatal("an API was made that would serve without login")
	}
	if _, ok := children["o-crawler"]; ok {
		t.Fatal("a crawler was made with no API")
	}
	addSecret := func(value string) {
		t.Helper()
		c := conditionOf(d.monocle("o"), "SpecApplied")
		msg, _ := c["message"].(string)
		_, command, found := strings.Cut(msg, "./token-1) and run ")
		if c["reason"] != "LoginSecretMissing" || !found || !strings.Contains(msg, `to its file ("MONOCLE_OIDC_SSO_CLIENT_SECRET" to ./token-1)`) {
			t.Fatalf("SpecApplied = %v", c)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "token-1"), []byte(value), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("running: %s", command)
		shell(t, adminKubeconfig(t, "e2e-oidc-admin"), "cd "+dir+" && "+command)
	}
	addSecret("oidc-e2e")
	r := d.sync("o")
	if want := []string{"Deployment.apps/v1/o-api", "Deployment.apps/v1/o-crawler"}; !slices.Equal(r.created, want) {
		t.Errorf("created %v, want %v", r.created, want)
	}
	d.markReady("Deployment.apps/v1", "o-api")
	d.markReady("Deployment.apps/v1", "o-crawler")
	d.converge("o")
	if c := conditionOf(d.monocle("o"), "SpecApplied"); c["status"] != "True" {
		t.Fatalf("SpecApplied = %v", c)
	}

	// Running: the key removed, the API and the crawler keep what they run.
	secret := &corev1.Secret{}
	if err := k8sClient.Get(ctx, clientKey(ns, "o-api"), secret); err != nil {
		t.Fatal(err)
	}
	delete(secret.Data, "MONOCLE_OIDC_SSO_CLIENT_SECRET")
	if err := k8sClient.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	api, crawler := d.get("Deployment.apps/v1", "o-api"), d.get("Deployment.apps/v1", "o-crawler")
	d.converge("o")
	for _, w := range []*unstructured.Unstructured{api, crawler} {
		if got := d.get("Deployment.apps/v1", w.GetName()); got.GetResourceVersion() != w.GetResourceVersion() {
			t.Fatalf("%s was rolled onto pods without the OIDC client secret", w.GetName())
		}
	}
	if c := conditionOf(d.monocle("o"), "SpecApplied"); !strings.Contains(c["message"].(string), "the API and the crawler keep their running templates") {
		t.Fatalf("SpecApplied = %v", c)
	}
	addSecret("oidc-e2e-rotated")
	d.converge("o")
	if got := d.get("Deployment.apps/v1", "o-api"); got.GetGeneration() != api.GetGeneration()+1 {
		t.Errorf("the API's generation went from %d to %d: want one roll, onto the new secret", api.GetGeneration(), got.GetGeneration())
	}
	if c := conditionOf(d.monocle("o"), "SpecApplied"); c["status"] != "True" {
		t.Errorf("SpecApplied = %v", c)
	}
}

// An admin token set empty, where the config enforces login, holds the API
// and the crawler as they run (anyone sending an empty token would get a
// login); the command the condition prints removes the key, and the API
// rolls once, with the admin token off.
func TestEmptyAdminTokenHoldsTheAPI(t *testing.T) {
	ctx := context.Background()
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	tokens := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens", Namespace: ns}, Data: map[string][]byte{
		"MONOCLE_OIDC_SSO_CLIENT_SECRET": []byte("oidc-e2e"), "MONOCLE_ADMIN_TOKEN": []byte("admin-e2e")}}
	if err := k8sClient.Create(ctx, tokens); err != nil {
		t.Fatal(err)
	}
	config := "auth:\n  enforce_auth: true\n  auth_provider:\n    oidc_provider_name: sso\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces: []\n"
	d.createMonocle("a", map[string]any{"config": config, "secretRef": map[string]any{"name": "tokens"}})
	d.converge("a")
	d.markReady("Deployment.apps/v1", "a-api")
	d.converge("a")

	tokens.Data["MONOCLE_ADMIN_TOKEN"] = nil
	if err := k8sClient.Update(ctx, tokens); err != nil {
		t.Fatal(err)
	}
	api, crawler := d.get("Deployment.apps/v1", "a-api"), d.get("Deployment.apps/v1", "a-crawler")
	d.converge("a")
	for _, w := range []*unstructured.Unstructured{api, crawler} {
		if got := d.get("Deployment.apps/v1", w.GetName()); got.GetResourceVersion() != w.GetResourceVersion() {
			t.Fatalf("%s was rolled onto an empty admin token", w.GetName())
		}
	}
	c := conditionOf(d.monocle("a"), "SpecApplied")
	msg, _ := c["message"].(string)
	_, command, found := strings.Cut(msg, "or set: ")
	if c["reason"] != "AdminTokenEmpty" || !found || !strings.Contains(msg, `Secret "tokens" is empty`) {
		t.Fatalf("SpecApplied = %v", c)
	}
	t.Logf("running: %s", command)
	shell(t, adminKubeconfig(t, "e2e-admin-token-admin"), command)
	d.converge("a")
	if err := k8sClient.Get(ctx, clientKey(ns, "tokens"), tokens); err != nil {
		t.Fatal(err)
	}
	if _, ok := tokens.Data["MONOCLE_ADMIN_TOKEN"]; ok || len(tokens.Data["MONOCLE_OIDC_SSO_CLIENT_SECRET"]) == 0 {
		t.Errorf("the user's Secret after the command: %v", slices.Sorted(maps.Keys(tokens.Data)))
	}
	if got := d.get("Deployment.apps/v1", "a-api"); got.GetGeneration() != api.GetGeneration()+1 {
		t.Errorf("the API's generation went from %d to %d: want one roll", api.GetGeneration(), got.GetGeneration())
	}
	if c := conditionOf(d.monocle("a"), "SpecApplied"); c["status"] != "True" {
		t.Errorf("SpecApplied = %v", c)
	}
}

// A Secret in the pods' environment cannot move what the children are
// built around: env (the hook's) wins over envFrom, so MONOCLE_API_PORT and
// MONOCLE_CRAWLER_MONITORING stay the probes' and the Services' ports, with
// a note. GHCRTS there holds the running API and crawler; the printed
// command, run as printed, removes it, and they never ran with it.
func TestSecretKeepsThePortsAndRefusesGHCRTS(t *testing.T) {
	ctx := context.Background()
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	tokens := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens", Namespace: ns}, Data: map[string][]byte{
		"GITHUB_TOKEN": []byte("ghp-e2e"), "MONOCLE_API_PORT": []byte("9898"), "MONOCLE_CRAWLER_MONITORING": []byte("9999")}}
	if err := k8sClient.Create(ctx, tokens); err != nil {
		t.Fatal(err)
	}
	config := "workspaces:\n  - name: demo\n    crawlers:\n      - name: gh\n        update_since: '2024-01-01'\n        provider: {github_organization: change-metrics}\n"
	d.createMonocle("p", map[string]any{"config": config, "secretRef": map[string]any{"name": "tokens"}})
	d.converge("p")
	d.markReady("Deployment.apps/v1", "p-api")
	d.converge("p")

	for _, tc := range []struct {
		deployment, variable string
		port                 int64
	}{{"p-api", "MONOCLE_API_PORT", 8080}, {"p-crawler", "MONOCLE_CRAWLER_MONITORING", 9001}} {
		w := d.get("Deployment.apps/v1", tc.deployment)
		containers, _, _ := unstructured.NestedSlice(w.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		env := map[string]any{}
		for _, e := range c["env"].([]any) {
			env[e.(map[string]any)["name"].(string)] = e.(map[string]any)["value"]
		}
		var port int64
		if ports, _, _ := unstructured.NestedSlice(c, "ports"); len(ports) == 1 {
			port, _, _ = unstructured.NestedInt64(ports[0].(map[string]any), "containerPort")
		}
		probe, _, _ := unstructured.NestedFieldNoCopy(c, "readinessProbe", "httpGet", "port")
		if env[tc.variable] != fmt.Sprint(tc.port) || port != tc.port || fmt.Sprint(probe) != "http" {
			t.Errorf("%s: %s=%v, container port %d, readiness probe's port %v", tc.deployment, tc.variable, env[tc.variable], port, probe)
		}
	}
	svc := d.get("Service.v1", "p-api")
	svcPorts, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(svcPorts) != 1 || fmt.Sprint(svcPorts[0].(map[string]any)["port"]) != "8080" {
		t.Errorf("the API Service's ports: %v", svcPorts)
	}
	c := conditionOf(d.monocle("p"), "SpecApplied")
	if msg, _ := c["message"].(string); c["status"] != "True" || !strings.Contains(msg, `key "MONOCLE_API_PORT" of Secret "tokens"`) {
		t.Errorf("SpecApplied = %v", c)
	}

	tokens.Data["GHCRTS"] = []byte("-M16m")
	if err := k8sClient.Update(ctx, tokens); err != nil {
		t.Fatal(err)
	}
	api, crawler := d.get("Deployment.apps/v1", "p-api"), d.get("Deployment.apps/v1", "p-crawler")
	d.converge("p")
	for _, w := range []*unstructured.Unstructured{api, crawler} {
		if got := d.get("Deployment.apps/v1", w.GetName()); got.GetResourceVersion() != w.GetResourceVersion() {
			t.Fatalf("%s was rolled onto GHCRTS", w.GetName())
		}
	}
	c = conditionOf(d.monocle("p"), "SpecApplied")
	msg, _ := c["message"].(string)
	_, command, found := strings.Cut(msg, "until the keys are removed: run ")
	if c["reason"] != "VariableRefused" || !found {
		t.Fatalf("SpecApplied = %v", c)
	}
	t.Logf("running: %s", command)
	shell(t, adminKubeconfig(t, "e2e-ghcrts-admin"), command)
	d.converge("p")
	if err := k8sClient.Get(ctx, clientKey(ns, "tokens"), tokens); err != nil {
		t.Fatal(err)
	}
	if _, ok := tokens.Data["GHCRTS"]; ok || len(tokens.Data["GITHUB_TOKEN"]) == 0 {
		t.Errorf("the user's Secret after the command: %v", slices.Sorted(maps.Keys(tokens.Data)))
	}
	// The Secret is as it was before GHCRTS: what the pods read is too,
	// so nothing rolls.
	for _, w := range []*unstructured.Unstructured{api, crawler} {
		if got := d.get("Deployment.apps/v1", w.GetName()); got.GetGeneration() != w.GetGeneration() {
			t.Errorf("%s's generation went from %d to %d: want none", w.GetName(), w.GetGeneration(), got.GetGeneration())
		}
	}
	if c := conditionOf(d.monocle("p"), "SpecApplied"); c["reason"] != "Applied" {
		t.Errorf("SpecApplied = %v", c)
	}
}
