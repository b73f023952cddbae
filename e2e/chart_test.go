package e2e

// Tests of the Helm chart (chart/) and of the plain manifests generated from
// it (metacontroller/*.yaml): helm lint, every value reaching the render,
// the values schema rejecting bad values, the checks of the cluster's APIs,
// and each render accepted by the real API server (server-side dry run,
// strict field validation, no warnings, the restricted Pod Security
// Standard).

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/change-metrics/monocle-hook/hook"
)

const (
	// Relative to e2e/, the test's working directory.
	chartDir = "../chart"
	// The release every render uses: the name the plain manifests have.
	chartRelease = "monocle-hook"
	// Where the hook's TLS Secret is mounted (chart/templates/_helpers.tpl).
	chartTLSDir = "/etc/monocle-hook/tls"
)

// The APIs the chart asks the cluster about (.Capabilities.APIVersions).
const (
	apiCompositeController = "metacontroller.k8s.io/v1alpha1/CompositeController"
	apiServiceMonitor      = "monitoring.coreos.com/v1/ServiceMonitor"
	apiPrometheusRule      = "monitoring.coreos.com/v1/PrometheusRule"
	apiPodMonitor          = "monitoring.coreos.com/v1/PodMonitor"
)

// A set of values to render the chart with: the chart's defaults, then
// each file, then overrides.
type chartValueSet struct {
	name      string
	files     []string       // -f, relative to e2e/
	overrides map[string]any // written to a values file, after files
	// Rendered only: its objects need a CRD the tests do not install.
	renderOnly bool
	// APIs the render is told the cluster serves, besides Metacontroller's
	// (which the test API server has).
	apiVersions []string
}

// chartValueSets: every chart/ci/*-values.yaml (the sets the chart's CI
// installs), plus cases no CI file can hold.
func chartValueSets(t *testing.T) []chartValueSet {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sets []chartValueSet
	for _, f := range files {
		sets = append(sets, chartValueSet{name: strings.TrimSuffix(filepath.Base(f), ".yaml"), files: []string{f}})
	}
	for _, want := range []string{"default-values", "tls-values", "full-values"} {
		if !slices.ContainsFunc(sets, func(s chartValueSet) bool { return s.name == want }) {
			t.Fatalf("chart/ci/%s.yaml is missing: the chart tests need it", want)
		}
	}
	full := filepath.Join(chartDir, "ci", "full-values.yaml")
	monitoring := map[string]any{"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true},
		"monoclePodMonitor": map[string]any{"enabled": true}, "metacontrollerServiceMonitor": map[string]any{"enabled": true}}
	return append(sets,
		// No PodDisruptionBudget: with one replica it would block drains.
		chartValueSet{name: "one-replica", overrides: map[string]any{"replicaCount": 1}},
		chartValueSet{name: "no-prestop", overrides: map[string]any{"preStopSleepSeconds": 0}},
		chartValueSet{name: "no-pdb", overrides: map[string]any{"podDisruptionBudget": map[string]any{"enabled": false}}},
		// A ServiceAccount of the admin's: none made, the pods run as it.
		chartValueSet{name: "external-serviceaccount",
			overrides: map[string]any{"serviceAccount": map[string]any{"create": false, "name": "monocle-hook-ci-sa"}}},
		// Asked for, but Prometheus Operator's API is not served: left out,
		// and the rest installs.
		chartValueSet{name: "monitoring-not-served", overrides: monitoring},
		// Prometheus Operator's CRDs are not installed: rendered only, for a
		// cluster said to serve them, or with the checks off.
		chartValueSet{name: "servicemonitor", renderOnly: true, overrides: monitoring,
			apiVersions: []string{apiServiceMonitor, apiPrometheusRule, apiPodMonitor}},
		chartValueSet{name: "servicemonitor-full", renderOnly: true, files: []string{full}, overrides: monitoring,
			apiVersions: []string{apiServiceMonitor, apiPrometheusRule, apiPodMonitor}},
		chartValueSet{name: "monitoring-unchecked", renderOnly: true,
			overrides: mergeChartValues(monitoring, map[string]any{"capabilityChecks": false})},
	)
}

// TestChartLint runs `helm lint --strict` with the defaults and with each
// CI values file.
func TestChartLint(t *testing.T) {
	for _, set := range chartValueSets(t) {
		t.Run(set.name, func(t *testing.T) {
			// As `make chart-lint`: no checks, so that everything enabled
			// is rendered and linted.
			args := append([]string{"lint", "--strict", chartDir, "--set", "capabilityChecks=false"}, set.helmArgs(t)...)
			out, err := runHelm(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "0 chart(s) failed") {
				t.Fatalf("helm lint:\n%s", out)
			}
		})
	}
}

// TestChartRender renders the chart with each value set, checks that every
// value reaches the objects and that the hook's invariants hold, then has
// the API server validate each object (dry run) in a namespace that enforces
// the restricted Pod Security Standard.
func TestChartRender(t *testing.T) {
	defaults := chartDefaults(t)
	for _, set := range chartValueSets(t) {
		t.Run(set.name, func(t *testing.T) {
			values := set.values(t, defaults)
			ns := "monocle-hook-render" // not created: render-only
			if !set.renderOnly {
				ns = createNamespace(t, map[string]string{
					"pod-security.kubernetes.io/enforce": "restricted",
					"pod-security.kubernetes.io/warn":    "restricted",
				})
			}
			objs := renderChart(t, ns, set.renderArgs(t)...)
			checkChartRender(t, objs, values, ns, set.apiVersions)
			checkChartExtras(t, objs, values)
			testPod := renderTestPod(t, ns, set.renderArgs(t)...)
			checkTestPod(t, testPod, objs, values)
			if set.renderOnly {
				return
			}
			dryRunChart(t, objs, values, ns, testPod)
		})
	}
}

// TestChartInstall installs the chart for real with helm (its NOTES say how
// to reach a first Monocle), upgrades it, and uninstalls it: the CRD and a
// Monocle stay, every object of the release goes.
func TestChartInstall(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	kubeconfigPath := adminKubeconfig(t, "helm")
	// A CompositeController name of its own: it is cluster-scoped.
	release := []string{chartRelease, chartDir, "--namespace", ns, "--kubeconfig", kubeconfigPath,
		"--set", "compositeController.name=" + ns}
	t.Cleanup(func() {
		_, _ = runHelm(t, "uninstall", chartRelease, "--namespace", ns, "--kubeconfig", kubeconfigPath)
	})

	start := time.Now()
	out, err := runHelm(t, append([]string{"install"}, release...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helm install: %s", time.Since(start).Round(time.Millisecond))
	for _, want := range []string{
		"kind: Monocle",
		"kubectl get monocle monocle-sample -w",
		"kubectl port-forward svc/monocle-sample-api 8090:8080",
		"open http://localhost:8090",
		"http://monocle-hook." + ns + ":80/sync",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("helm install's notes do not say %q:\n%s", want, out)
		}
	}
	installed := renderChart(t, ns, "--set", "compositeController.name="+ns)
	for _, o := range installed {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); err != nil {
			t.Errorf("after helm install, %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}

	// An upgrade changes the pod template (TLS) under the same selector.
	if _, err := runHelm(t, append([]string{"upgrade"}, append(release, "-f", filepath.Join(chartDir, "ci", "tls-values.yaml"))...)...); err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "monocle-hook"}, &dep); err != nil {
		t.Fatal(err)
	}
	if len(dep.Spec.Template.Spec.Volumes) != 1 {
		t.Errorf("after helm upgrade with TLS, the Deployment's volumes are %+v", dep.Spec.Template.Spec.Volumes)
	}

	monocle := &unstructured.Unstructured{}
	monocle.SetAPIVersion("monocle.monocle.change-metrics.io/v1alpha1")
	monocle.SetKind("Monocle")
	monocle.SetNamespace(ns)
	monocle.SetName("monocle-sample")
	if err := k8sClient.Create(ctx, monocle); err != nil {
		t.Fatal(err)
	}
	if _, err := runHelm(t, "uninstall", chartRelease, "--namespace", ns, "--kubeconfig", kubeconfigPath); err != nil {
		t.Fatal(err)
	}
	for _, o := range installed {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); !apierrors.IsNotFound(err) {
			t.Errorf("after helm uninstall, %s %s: %v, want NotFound", o.GetKind(), o.GetName(), err)
		}
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(monocle), monocle.DeepCopy()); err != nil {
		t.Errorf("after helm uninstall, the Monocle: %v", err)
	}
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: "monocles.monocle.monocle.change-metrics.io"}, crd); err != nil {
		t.Errorf("after helm uninstall, the Monocle CRD: %v", err)
	}
}

// TestChartRejectsBadValues: the schema and the templates' checks fail a
// render with a message that names the culprit, and helm lint --strict
// with the same values (whose own fail only logs: the chart's
// "monocle-hook.fail" makes it an error lint reports).
func TestChartRejectsBadValues(t *testing.T) {
	const schema = "values don't meet the specifications of the schema"
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown key", []string{"--set", "replicas=3"}, []string{schema, "replicas"}},
		{"unknown nested key", []string{"--set", "serviceMonitor.intervall=1m"}, []string{schema, "intervall"}},
		{"no replica", []string{"--set", "replicaCount=0"}, []string{schema, "replicaCount"}},
		{"replicas as a string", []string{"--set-string", "replicaCount=2"}, []string{schema, "replicaCount"}},
		{"digest without algorithm", []string{"--set", "image.digest=0123abc"}, []string{schema, "digest"}},
		{"bad pull policy", []string{"--set", "image.pullPolicy=Sometimes"}, []string{schema, "pullPolicy"}},
		{"timeout not a duration", []string{"--set", "compositeController.hookTimeout=ten"}, []string{schema, "hookTimeout"}},
		{"port out of range", []string{"--set", "service.port=70000"}, []string{schema, "port"}},
		{"CA bundle not PEM", []string{"--set", "tls.secretName=tls", "--set", "tls.caBundle=abc"}, []string{schema, "caBundle"}},
		{"bad minAvailable", []string{"--set", "podDisruptionBudget.minAvailable=half"}, []string{schema, "minAvailable"}},
		{"bad spread policy", []string{"--set", "topologySpreadConstraints[0].whenUnsatisfiable=Never"}, []string{schema, "whenUnsatisfiable"}},
		{"extraArgs not a list", []string{"--set", "extraArgs=--flag"}, []string{schema, "extraArgs"}},
		{"extraEnv without a name", []string{"--set", "extraEnv[0].value=x"}, []string{schema, "name"}},
		{"unknown serviceAccount key", []string{"--set", "serviceAccount.automount=true"}, []string{schema, "automount"}},
		{"bad serviceAccount name", []string{"--set", "serviceAccount.name=Not_A_Name"}, []string{schema, "name"}},
		{"unknown peer key", []string{"--set", "networkPolicy.metricsScraperPeers[0].namespace=monitoring"}, []string{schema, "namespace"}},
		{"relabelings not a list", []string{"--set", "serviceMonitor.relabelings.action=drop"}, []string{schema, "relabelings"}},
		{"capabilityChecks as a string", []string{"--set-string", "capabilityChecks=no"}, []string{schema, "capabilityChecks"}},
		{"CA bundle without a TLS Secret", []string{"--set", "tls.caBundle=-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----"},
			[]string{"tls.caBundle is set but tls.secretName is not"}},
		{"grace shorter than the drain", []string{"--set", "terminationGracePeriodSeconds=25"},
			[]string{"terminationGracePeriodSeconds (25) must be more than preStopSleepSeconds + shutdownTimeoutSeconds (25)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"template", chartRelease, chartDir, "--namespace", "ns", "--api-versions", apiCompositeController}, tc.args...)
			out, err := runHelm(t, args...)
			if err == nil {
				t.Fatalf("helm template %v succeeded; want an error. Rendered:\n%s", tc.args, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q:\n%v", want, err)
				}
			}
			out, err = runHelm(t, append([]string{"lint", "--strict", chartDir}, tc.args...)...)
			if err == nil {
				t.Fatalf("helm lint --strict %v passed; want it to fail:\n%s", tc.args, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("helm lint's error does not say %q:\n%v", want, err)
				}
			}
		})
	}
}

// TestChartLintAsUsersRunIt: `helm lint --strict chart`, with no value set
// and no cluster, renders every template and lints it (the Metacontroller
// check only logs under lint: it asks the cluster, which lint has not): it
// passes on the chart, and fails on a copy whose template renders bad YAML.
func TestChartLintAsUsersRunIt(t *testing.T) {
	if out, err := runHelm(t, "lint", "--strict", chartDir); err != nil || !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
		t.Fatalf("helm lint --strict chart: %v\n%s", err, out)
	}
	broken := filepath.Join(t.TempDir(), "monocle-hook")
	if out, err := exec.Command("cp", "-r", chartDir, broken).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	for _, template := range []string{"deployment.yaml", "compositecontroller.yaml", testPodTemplate[len("templates/"):]} {
		path := filepath.Join(broken, "templates", template)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, "\n  broken: : yaml\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := runHelm(t, "lint", "--strict", broken)
		if err == nil || !strings.Contains(out, "[ERROR] templates/"+template) {
			t.Errorf("helm lint --strict of a chart whose %s renders bad YAML: %v\n%s; want that template's error", template, err, out)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChartCapabilityChecks: without Metacontroller's API the chart stops
// with one line saying how to install it; capabilityChecks=false renders
// anyway (helm template pipelines).
func TestChartCapabilityChecks(t *testing.T) {
	base := []string{"template", chartRelease, chartDir, "--namespace", "ns"}
	_, err := runHelm(t, base...) // no cluster: no Metacontroller
	if err == nil {
		t.Fatal("helm template without Metacontroller's API succeeded; want the check to stop it")
	}
	// helm: "Error: execution error at (monocle-hook/templates/...): <message>"
	var message string
	for _, line := range strings.Split(err.Error(), "\n") {
		if _, m, ok := strings.Cut(line, "execution error at "); ok {
			_, message, _ = strings.Cut(m, "): ")
		}
	}
	for _, want := range []string{
		"Metacontroller's API (CompositeController, metacontroller.k8s.io/v1alpha1) is not served",
		// The chart's version has no "v" (Metacontroller's tag has one).
		"helm install metacontroller oci://ghcr.io/metacontroller/metacontroller-helm --version 4.17.2 -n metacontroller",
		"the Monocle CRD may already exist",
		"capabilityChecks=false",
	} {
		if !strings.Contains(message, want) {
			t.Errorf("the one-line message does not say %q:\n%s\n(helm said: %v)", want, message, err)
		}
	}
	out, err := runHelm(t, append(base, "--set", "capabilityChecks=false")...)
	if err != nil {
		t.Fatal(err)
	}
	if kinds := chartKinds(decodeYAMLObjects(t, []byte(out))); !slices.Contains(kinds, "CompositeController") {
		t.Errorf("with capabilityChecks=false, rendered %v; want the CompositeController", kinds)
	}
}

// TestChartMetadata: Chart.yaml's kubeVersion covers what the templates use,
// and its Artifact Hub annotations name the images that run.
func TestChartMetadata(t *testing.T) {
	meta := chartMetadata(t)
	// The oldest version tested (TestSupportPolicy), which has everything
	// the templates use (the preStop sleep action: on by default since 1.30).
	if got := valStr(meta, "kubeVersion"); got != ">=1.37.0-0" {
		t.Errorf("kubeVersion %q, want >=1.37.0-0", got)
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations["artifacthub.io/license"] != "Apache-2.0" {
		t.Errorf("artifacthub.io/license %v, want Apache-2.0", annotations["artifacthub.io/license"])
	}
	var images []struct{ Name, Image string }
	if err := yaml.Unmarshal([]byte(annotations["artifacthub.io/images"].(string)), &images); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"monocle-hook":  valStr(chartDefaults(t), "image.repository") + ":" + valStr(meta, "appVersion"),
		"monocle":       hook.DefaultImage,
		"elasticsearch": hook.DefaultElasticImage,
	}
	got := map[string]string{}
	for _, i := range images {
		got[i.Name] = i.Image
	}
	if !maps.Equal(got, want) {
		t.Errorf("artifacthub.io/images %v, want %v", got, want)
	}
	var crds []struct{ Kind, Version, Name string }
	if err := yaml.Unmarshal([]byte(annotations["artifacthub.io/crds"].(string)), &crds); err != nil {
		t.Fatal(err)
	}
	if len(crds) != 1 || crds[0].Name != "monocles.monocle.monocle.change-metrics.io" || crds[0].Version != "v1alpha1" {
		t.Errorf("artifacthub.io/crds %+v, want the Monocle CRD", crds)
	}
	// The example is a Monocle the API server accepts.
	var examples []map[string]any
	if err := yaml.Unmarshal([]byte(annotations["artifacthub.io/crdsExamples"].(string)), &examples); err != nil {
		t.Fatal(err)
	}
	for _, e := range examples {
		o := &unstructured.Unstructured{Object: e}
		o.SetNamespace("default")
		if err := k8sClient.Create(context.Background(), o, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
			t.Errorf("artifacthub.io/crdsExamples: %v", err)
		}
	}
}

// TestChartFullValues: ci/full-values.yaml sets every value of
// values.yaml away from its default, so that TestChartRender proves each one
// reaches the objects and the API server accepts it.
func TestChartFullValues(t *testing.T) {
	full := readValues(t, filepath.Join(chartDir, "ci", "full-values.yaml"))
	exempt := []string{
		// Need Prometheus Operator's CRDs: rendered only, by the
		// servicemonitor value sets.
		"serviceMonitor.enabled",
		"prometheusRule.enabled",
		"monoclePodMonitor.enabled",
		"metacontrollerServiceMonitor.enabled",
		// Left on so that minAvailable is checked; off is the no-pdb set.
		"podDisruptionBudget.enabled",
		// Left on so that the real installs are checked as a user's;
		// TestChartCapabilityChecks and monitoring-unchecked turn it off.
		"capabilityChecks",
		// Left on so that the annotations reach a ServiceAccount; off is
		// the external-serviceaccount set.
		"serviceAccount.create",
		// Left on so that the full CompositeController is rendered;
		// TestChartWithoutCompositeController turns it off.
		"compositeController.enabled",
		// Left on so that the full set's peers are rendered, and the
		// aggregated ClusterRoles with them; the tls set turns both off.
		"networkPolicy.enabled",
		"rbac.aggregateClusterRoles",
		// The restricted Pod Security Standard needs them as they are (the
		// full set adds keys to both securityContexts instead).
		"podSecurityContext.runAsNonRoot",
		"podSecurityContext.seccompProfile.type",
		"securityContext.allowPrivilegeEscalation",
		"securityContext.readOnlyRootFilesystem",
		"securityContext.capabilities.drop",
	}
	var walk func(prefix string, defaults map[string]any)
	walk = func(prefix string, defaults map[string]any) {
		for k, d := range defaults {
			path := prefix + k
			if m, ok := d.(map[string]any); ok && len(m) > 0 {
				walk(path+".", m)
				continue
			}
			if slices.Contains(exempt, path) {
				continue
			}
			if f := valGet(full, path); f == nil || reflect.DeepEqual(f, d) {
				t.Errorf("ci/full-values.yaml does not set %s away from its default %v", path, d)
			}
		}
	}
	walk("", chartDefaults(t))
}

// TestManifestsUpToDate: metacontroller/*.yaml are what `make manifests`
// writes from the current chart, and the chart's CRD is crd/monocle.yaml.
func TestManifestsUpToDate(t *testing.T) {
	crd, err := os.ReadFile("../crd/monocle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	chartCRD, err := os.ReadFile(filepath.Join(chartDir, "crds", "monocle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(crd, chartCRD) {
		t.Errorf("chart/crds/monocle.yaml differs from crd/monocle.yaml: run `make manifests`\n%s", firstLineDiff(crd, chartCRD))
	}
	for _, name := range []string{"rules.yaml", "dashboard.json"} {
		source, err := os.ReadFile(filepath.Join("../observability", name))
		if err != nil {
			t.Fatal(err)
		}
		copied, err := os.ReadFile(filepath.Join(chartDir, "files", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(source, copied) {
			t.Errorf("chart/files/%s differs from observability/%s: run `make manifests`\n%s", name, name, firstLineDiff(source, copied))
		}
	}

	dir := t.TempDir()
	cmd := exec.Command("bash", "../metacontroller/generate.sh", dir)
	cmd.Env = append(helmEnv(t), "HELM="+helmBin(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("metacontroller/generate.sh: %v\n%s", err, out)
	}
	generated := map[string][]*unstructured.Unstructured{}
	for _, name := range []string{"hook.yaml", "compositecontroller.yaml"} {
		fresh, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("../metacontroller", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("metacontroller/%s is stale: run `make manifests` (committed vs fresh render)\n%s", name, firstLineDiff(committed, fresh))
		}
		generated[name] = decodeYAMLObjects(t, fresh)
	}

	// What docs/install.md's steps rely on: the namespace monocle-hook,
	// restricted, holding the Service monocle-hook that the
	// CompositeController calls.
	hook, cc := generated["hook.yaml"], generated["compositecontroller.yaml"]
	if len(hook) == 0 || hook[0].GetKind() != "Namespace" || hook[0].GetName() != "monocle-hook" ||
		hook[0].GetLabels()["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("hook.yaml does not start with the Namespace monocle-hook enforcing restricted: %v", hook)
	}
	if kinds := chartKinds(cc); !slices.Equal(kinds, []string{"CompositeController"}) {
		t.Errorf("compositecontroller.yaml holds %v, want one CompositeController", kinds)
	}
	if kinds := chartKinds(hook); slices.Contains(kinds, "CompositeController") {
		t.Errorf("hook.yaml holds a CompositeController: %v", kinds)
	}
	svc := chartObject(hook, "Service")
	if svc == nil || svc.GetName() != "monocle-hook" || svc.GetNamespace() != "monocle-hook" {
		t.Fatalf("hook.yaml has no Service monocle-hook/monocle-hook: %v", svc)
	}
	for _, o := range hook[1:] {
		if o.GetKind() == "ClusterRole" { // the aggregated ones: cluster-scoped
			if o.GetNamespace() != "" {
				t.Errorf("ClusterRole %s is in namespace %q", o.GetName(), o.GetNamespace())
			}
			continue
		}
		if o.GetNamespace() != "monocle-hook" {
			t.Errorf("%s %s is in namespace %q, want monocle-hook", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	if len(cc) == 1 {
		webhook, _, _ := unstructured.NestedMap(cc[0].Object, "spec", "hooks", "sync", "webhook", "service")
		if webhook["name"] != "monocle-hook" || webhook["namespace"] != "monocle-hook" {
			t.Errorf("the CompositeController calls %v, want the Service monocle-hook/monocle-hook", webhook)
		}
	}
}

// checkChartRender checks a render against the values it was made with
// and the APIs the render was told the cluster serves (besides
// Metacontroller's).
func checkChartRender(t *testing.T, objs []*unstructured.Unstructured, v map[string]any, ns string, apiVersions []string) {
	t.Helper()
	tlsOn := valStr(v, "tls.secretName") != ""
	scheme := map[bool]string{false: "http", true: "https"}[tlsOn]
	served := func(api string) bool {
		return valGet(v, "capabilityChecks") == false || slices.Contains(apiVersions, api)
	}

	// Exactly the hook's objects: no RBAC for the hook (the aggregated
	// ClusterRoles are for people), no Secret, nothing else.
	wantKinds := []string{"CompositeController", "Deployment", "Service"}
	if valGet(v, "rbac.aggregateClusterRoles") == true {
		wantKinds = append(wantKinds, "ClusterRole", "ClusterRole")
	}
	if valGet(v, "serviceAccount.create") == true {
		wantKinds = append(wantKinds, "ServiceAccount")
	}
	wantPDB := valGet(v, "podDisruptionBudget.enabled") == true && valInt(v, "replicaCount") > 1
	if wantPDB {
		wantKinds = append(wantKinds, "PodDisruptionBudget")
	}
	if valGet(v, "serviceMonitor.enabled") == true && served(apiServiceMonitor) {
		wantKinds = append(wantKinds, "ServiceMonitor")
	}
	if valGet(v, "prometheusRule.enabled") == true && served(apiPrometheusRule) {
		wantKinds = append(wantKinds, "PrometheusRule")
	}
	if valGet(v, "monoclePodMonitor.enabled") == true && served(apiPodMonitor) {
		wantKinds = append(wantKinds, "PodMonitor")
	}
	if valGet(v, "metacontrollerServiceMonitor.enabled") == true && served(apiServiceMonitor) {
		wantKinds = append(wantKinds, "ServiceMonitor")
	}
	if valGet(v, "networkPolicy.enabled") == true {
		wantKinds = append(wantKinds, "NetworkPolicy")
	}
	if valGet(v, "grafanaDashboard.enabled") == true {
		wantKinds = append(wantKinds, "ConfigMap")
	}
	sort.Strings(wantKinds)
	if kinds := chartKinds(objs); !slices.Equal(kinds, wantKinds) {
		t.Fatalf("rendered kinds %v, want %v", kinds, wantKinds)
	}

	name := "monocle-hook" // the release name contains the chart's name
	if s := valStr(v, "fullnameOverride"); s != "" {
		name = s
	}
	saName := cmp.Or(valStr(v, "serviceAccount.name"), name)
	if valGet(v, "serviceAccount.create") == false {
		saName = cmp.Or(valStr(v, "serviceAccount.name"), "default")
	}
	appName := "monocle-hook"
	if s := valStr(v, "nameOverride"); s != "" {
		appName = s
	}
	selector := map[string]string{"app.kubernetes.io/name": appName, "app.kubernetes.io/instance": chartRelease}
	appVersion := valStr(chartMetadata(t), "appVersion")
	for _, o := range objs {
		labels := o.GetLabels()
		for k, want := range map[string]string{
			"app.kubernetes.io/name":       appName,
			"app.kubernetes.io/instance":   chartRelease,
			"app.kubernetes.io/version":    appVersion,
			"app.kubernetes.io/managed-by": "Helm",
			"helm.sh/chart":                "monocle-hook-" + valStr(chartMetadata(t), "version"),
		} {
			if labels[k] != want {
				t.Errorf("%s %s: label %s=%q, want %q", o.GetKind(), o.GetName(), k, labels[k], want)
			}
		}
		wantNS, wantName := ns, name
		switch o.GetKind() {
		case "CompositeController": // cluster-scoped
			wantNS, wantName = "", valStr(v, "compositeController.name")
		case "ClusterRole": // cluster-scoped, named after the CompositeController
			wantNS, wantName = "", o.GetName()
			if n := valStr(v, "compositeController.name"); o.GetName() != n+"-view" && o.GetName() != n+"-edit" {
				t.Errorf("ClusterRole %q, want %s-view or %s-edit", o.GetName(), n, n)
			}
		case "ServiceAccount":
			wantName = saName
		case "ConfigMap": // the dashboard, where Grafana's sidecar looks
			wantNS, wantName = cmp.Or(valStr(v, "grafanaDashboard.namespace"), ns), name+"-dashboard"
		case "ServiceMonitor":
			if strings.HasSuffix(o.GetName(), "-metacontroller") {
				wantName = name + "-metacontroller"
				checkMetacontrollerServiceMonitor(t, o, v)
			}
		}
		if o.GetName() != wantName {
			t.Errorf("%s is named %q, want %q", o.GetKind(), o.GetName(), wantName)
		}
		if o.GetNamespace() != wantNS {
			t.Errorf("%s %s: namespace %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), wantNS)
		}
	}

	var dep appsv1.Deployment
	var svc corev1.Service
	toTyped(t, chartObject(objs, "Deployment"), &dep)
	toTyped(t, chartObject(objs, "Service"), &svc)
	pod := dep.Spec.Template
	spec := pod.Spec

	// Selection: the Deployment, the Service, the PDB and the spread
	// constraints select this release's pods, by the immutable selector.
	if !apiequality.Semantic.DeepEqual(dep.Spec.Selector, &metav1.LabelSelector{MatchLabels: selector}) {
		t.Errorf("Deployment selector %v, want %v", dep.Spec.Selector, selector)
	}
	if !apiequality.Semantic.DeepEqual(svc.Spec.Selector, selector) {
		t.Errorf("Service selector %v, want %v", svc.Spec.Selector, selector)
	}
	for k, want := range selector {
		if pod.Labels[k] != want {
			t.Errorf("pod label %s=%q, want %q", k, pod.Labels[k], want)
		}
	}

	// Values.
	if want := valInt(v, "replicaCount"); dep.Spec.Replicas == nil || int64(*dep.Spec.Replicas) != want {
		t.Errorf("replicas %v, want %d", dep.Spec.Replicas, want)
	}
	image := valStr(v, "image.repository") + ":" + valStr(v, "image.tag")
	if valStr(v, "image.tag") == "" {
		image += appVersion
	}
	if d := valStr(v, "image.digest"); d != "" {
		image += "@" + d
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	if c.Image != image || string(c.ImagePullPolicy) != valStr(v, "image.pullPolicy") {
		t.Errorf("image %s (%s), want %s (%s)", c.Image, c.ImagePullPolicy, image, valStr(v, "image.pullPolicy"))
	}
	checkSame(t, "imagePullSecrets", valGet(v, "imagePullSecrets"), spec.ImagePullSecrets)
	if o := chartObject(objs, "ServiceAccount"); o != nil {
		var sa corev1.ServiceAccount
		toTyped(t, o, &sa)
		checkSame(t, "serviceAccount.annotations", valGet(v, "serviceAccount.annotations"), sa.Annotations)
		if !ptrFalse(sa.AutomountServiceAccountToken) {
			t.Errorf("ServiceAccount %s automount %v, want false", sa.Name, sa.AutomountServiceAccountToken)
		}
	}
	checkSame(t, "service.annotations", valGet(v, "service.annotations"), svc.Annotations)
	checkSame(t, "extraEnv", valGet(v, "extraEnv"), c.Env)
	checkSame(t, "podSecurityContext", valGet(v, "podSecurityContext"), spec.SecurityContext)
	checkSame(t, "securityContext", valGet(v, "securityContext"), c.SecurityContext)
	checkSame(t, "resources", valGet(v, "resources"), c.Resources)
	checkSame(t, "podAnnotations", valGet(v, "podAnnotations"), pod.Annotations)
	checkSame(t, "nodeSelector", valGet(v, "nodeSelector"), spec.NodeSelector)
	checkSame(t, "tolerations", valGet(v, "tolerations"), spec.Tolerations)
	checkSame(t, "affinity", valGet(v, "affinity"), spec.Affinity)
	if spec.PriorityClassName != valStr(v, "priorityClassName") {
		t.Errorf("priorityClassName %q, want %q", spec.PriorityClassName, valStr(v, "priorityClassName"))
	}
	for k, want := range valGet(v, "podLabels").(map[string]any) {
		if pod.Labels[k] != want {
			t.Errorf("pod label %s=%q, want %q", k, pod.Labels[k], want)
		}
	}
	// A constraint without a labelSelector gets the release's selector.
	var spread []corev1.TopologySpreadConstraint
	viaJSON(t, valGet(v, "topologySpreadConstraints"), &spread)
	for i := range spread {
		if spread[i].LabelSelector == nil {
			spread[i].LabelSelector = &metav1.LabelSelector{MatchLabels: selector}
		}
	}
	if !apiequality.Semantic.DeepEqual(spec.TopologySpreadConstraints, spread) {
		t.Errorf("topologySpreadConstraints %+v, want %+v", spec.TopologySpreadConstraints, spread)
	}

	// No API access: no token, and (above) no RBAC object.
	if spec.ServiceAccountName != saName || !ptrFalse(spec.AutomountServiceAccountToken) {
		t.Errorf("pod runs as %q (automount %v), want %q with no token", spec.ServiceAccountName, spec.AutomountServiceAccountToken, saName)
	}
	// Restricted, and a read-only root file system.
	psc, csc := spec.SecurityContext, c.SecurityContext
	if psc == nil || !ptrTrue(psc.RunAsNonRoot) || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v, want runAsNonRoot and seccomp RuntimeDefault", psc)
	}
	if csc == nil || !ptrFalse(csc.AllowPrivilegeEscalation) || !ptrTrue(csc.ReadOnlyRootFilesystem) ||
		csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container securityContext %+v, want no privilege escalation, read-only root, drop ALL", csc)
	}

	// Port 8080 named http, behind the Service's port, probed on it.
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("container ports %+v, want 8080 named http", c.Ports)
	}
	if len(svc.Spec.Ports) != 1 || int64(svc.Spec.Ports[0].Port) != valInt(v, "service.port") ||
		svc.Spec.Ports[0].TargetPort != intstr.FromString("http") {
		t.Errorf("Service ports %+v, want %d to http", svc.Spec.Ports, valInt(v, "service.port"))
	}
	for probe, path := range map[*corev1.Probe]string{c.ReadinessProbe: "/readyz", c.LivenessProbe: "/livez"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != path || probe.HTTPGet.Port != intstr.FromString("http") ||
			!strings.EqualFold(string(probe.HTTPGet.Scheme), scheme) {
			t.Errorf("probe %+v, want %s %s on port http", probe, scheme, path)
		}
	}

	// The drain fits in the grace period.
	// The snapshot CronJobs run the hook's own image.
	wantArgs := []string{"--listen=:8080", fmt.Sprintf("--shutdown-timeout=%ds", valInt(v, "shutdownTimeoutSeconds")), "--image=" + image}
	if tlsOn {
		wantArgs = append(wantArgs, "--tls-cert-file="+chartTLSDir+"/tls.crt", "--tls-key-file="+chartTLSDir+"/tls.key")
	}
	for _, a := range valGet(v, "extraArgs").([]any) {
		wantArgs = append(wantArgs, a.(string))
	}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args %q, want %q", c.Args, wantArgs)
	}
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds != valInt(v, "terminationGracePeriodSeconds") {
		t.Errorf("terminationGracePeriodSeconds %v, want %d", spec.TerminationGracePeriodSeconds, valInt(v, "terminationGracePeriodSeconds"))
	}
	var preStop int64
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		preStop = c.Lifecycle.PreStop.Sleep.Seconds
	}
	if preStop != valInt(v, "preStopSleepSeconds") {
		t.Errorf("preStop sleep %ds, want %d", preStop, valInt(v, "preStopSleepSeconds"))
	}

	// TLS: the Secret mounted read-only where the flags point.
	var wantVolumes []corev1.Volume
	var wantMounts []corev1.VolumeMount
	if tlsOn {
		wantVolumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: valStr(v, "tls.secretName")}}}}
		wantMounts = []corev1.VolumeMount{{Name: "tls", MountPath: chartTLSDir, ReadOnly: true}}
	}
	if !apiequality.Semantic.DeepEqual(spec.Volumes, wantVolumes) || !apiequality.Semantic.DeepEqual(c.VolumeMounts, wantMounts) {
		t.Errorf("volumes %+v mounted %+v, want %+v mounted %+v", spec.Volumes, c.VolumeMounts, wantVolumes, wantMounts)
	}

	// The CompositeController calls this Service.
	cc := chartObject(objs, "CompositeController")
	if cc.GetName() != valStr(v, "compositeController.name") {
		t.Errorf("CompositeController %q, want %q", cc.GetName(), valStr(v, "compositeController.name"))
	}
	// Sync and customize hooks: the same Service, scheme and CA.
	for _, hook := range []string{"sync", "customize"} {
		want := map[string]any{
			"service": map[string]any{"name": svc.Name, "namespace": ns, "port": valInt(v, "service.port"), "protocol": scheme},
			"path":    "/" + hook,
			"timeout": valStr(v, "compositeController.hookTimeout"),
		}
		if ca := valStr(v, "tls.caBundle"); ca != "" {
			want["caBundle"] = map[string]any{"inline": strings.TrimSpace(ca) + "\n"}
		}
		webhook, _, _ := unstructured.NestedMap(cc.Object, "spec", "hooks", hook, "webhook")
		checkSame(t, "CompositeController "+hook+" webhook", want, webhook)
	}
	if resync, _, _ := unstructured.NestedInt64(cc.Object, "spec", "resyncPeriodSeconds"); resync != valInt(v, "compositeController.resyncPeriodSeconds") {
		t.Errorf("resyncPeriodSeconds %d, want %d", resync, valInt(v, "compositeController.resyncPeriodSeconds"))
	}
	parent, _, _ := unstructured.NestedMap(cc.Object, "spec", "parentResource")
	checkSame(t, "parentResource", map[string]any{"apiVersion": "monocle.monocle.change-metrics.io/v1alpha1", "resource": "monocles"}, parent)

	if wantPDB {
		var pdb policyv1.PodDisruptionBudget
		toTyped(t, chartObject(objs, "PodDisruptionBudget"), &pdb)
		var minAvailable intstr.IntOrString
		viaJSON(t, valGet(v, "podDisruptionBudget.minAvailable"), &minAvailable)
		if pdb.Spec.MinAvailable == nil || *pdb.Spec.MinAvailable != minAvailable ||
			!apiequality.Semantic.DeepEqual(pdb.Spec.Selector, dep.Spec.Selector) {
			t.Errorf("PodDisruptionBudget minAvailable %v selector %v, want %v and the Deployment's", pdb.Spec.MinAvailable, pdb.Spec.Selector, minAvailable)
		}
	}

	if sm := chartObjectNamed(objs, "ServiceMonitor", name); sm != nil {
		if sm.GetAPIVersion() != "monitoring.coreos.com/v1" {
			t.Errorf("ServiceMonitor apiVersion %s", sm.GetAPIVersion())
		}
		for k, want := range valGet(v, "serviceMonitor.labels").(map[string]any) {
			if sm.GetLabels()[k] != want {
				t.Errorf("ServiceMonitor label %s=%q, want %q", k, sm.GetLabels()[k], want)
			}
		}
		endpoint := map[string]any{"port": svc.Spec.Ports[0].Name, "path": "/metrics", "scheme": scheme}
		for _, k := range []string{"interval", "scrapeTimeout"} {
			if s := valStr(v, "serviceMonitor."+k); s != "" {
				endpoint[k] = s
			}
		}
		if tlsConfig := valGet(v, "serviceMonitor.tlsConfig").(map[string]any); tlsOn && len(tlsConfig) > 0 {
			endpoint["tlsConfig"] = tlsConfig
		}
		for _, k := range []string{"relabelings", "metricRelabelings"} {
			if l := valGet(v, "serviceMonitor."+k).([]any); len(l) > 0 {
				endpoint[k] = l
			}
		}
		smSpec, _, _ := unstructured.NestedMap(sm.Object, "spec")
		checkSame(t, "ServiceMonitor spec", map[string]any{
			"selector":          map[string]any{"matchLabels": selector},
			"namespaceSelector": map[string]any{"matchNames": []string{ns}},
			"endpoints":         []any{endpoint},
		}, smSpec)
	}
}

// checkChartExtras checks the optional objects: the NetworkPolicy, the
// PrometheusRule and the dashboard's ConfigMap.
func checkChartExtras(t *testing.T, objs []*unstructured.Unstructured, v map[string]any) {
	t.Helper()
	if pm := chartObject(objs, "PodMonitor"); pm != nil {
		checkPodMonitor(t, pm, v)
	}
	selector := map[string]any{"matchLabels": map[string]any{
		"app.kubernetes.io/name":     cmp.Or(valStr(v, "nameOverride"), "monocle-hook"),
		"app.kubernetes.io/instance": chartRelease,
	}}
	if np := chartObject(objs, "NetworkPolicy"); np != nil {
		// Metacontroller, the scrapers and the release's helm test Pod
		// may connect to the hook's port; the hook may connect nowhere.
		peers := append(slices.Clone(valGet(v, "networkPolicy.metacontrollerPeers").([]any)), valGet(v, "networkPolicy.metricsScraperPeers").([]any)...)
		port := []any{map[string]any{"port": "http", "protocol": "TCP"}}
		testPod := map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{
			"app.kubernetes.io/name":     cmp.Or(valStr(v, "nameOverride"), "monocle-hook") + "-test",
			"app.kubernetes.io/instance": chartRelease,
		}}}
		want := map[string]any{
			"podSelector": selector,
			"policyTypes": []any{"Ingress", "Egress"},
			"ingress": []any{
				map[string]any{"from": peers, "ports": port},
				map[string]any{"from": []any{testPod}, "ports": port},
			},
		}
		var gotSpec, wantSpec networkingv1.NetworkPolicySpec
		viaJSON(t, want, &wantSpec)
		viaJSON(t, np.Object["spec"], &gotSpec)
		if !apiequality.Semantic.DeepEqual(gotSpec, wantSpec) || len(gotSpec.Egress) != 0 {
			t.Errorf("NetworkPolicy spec %+v, want %+v and no egress", gotSpec, wantSpec)
		}
	}
	// The aggregated roles: reading into view, edit and admin, writing
	// into edit and admin, and nothing writes status.
	const group = "monocle.monocle.change-metrics.io"
	for _, want := range []struct {
		suffix string
		into   []string
		rule   rbacv1.PolicyRule
	}{
		{"-view", []string{"view", "edit", "admin"}, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"monocles", "monocles/status"}, Verbs: []string{"get", "list", "watch"}}},
		{"-edit", []string{"edit", "admin"}, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"monocles"}, Verbs: []string{"create", "update", "patch", "delete", "deletecollection"}}},
	} {
		o := chartObjectNamed(objs, "ClusterRole", valStr(v, "compositeController.name")+want.suffix)
		if (o != nil) != (valGet(v, "rbac.aggregateClusterRoles") == true) {
			t.Errorf("ClusterRole %s: rendered %v with rbac.aggregateClusterRoles %v", want.suffix, o != nil, valGet(v, "rbac.aggregateClusterRoles"))
		}
		if o == nil {
			continue
		}
		var role rbacv1.ClusterRole
		toTyped(t, o, &role)
		for _, r := range []string{"view", "edit", "admin"} {
			if got, wantLabel := role.Labels["rbac.authorization.k8s.io/aggregate-to-"+r] == "true", slices.Contains(want.into, r); got != wantLabel {
				t.Errorf("ClusterRole %s: aggregated to %s %v, want %v", role.Name, r, got, wantLabel)
			}
		}
		if len(role.Rules) != 1 || !apiequality.Semantic.DeepEqual(role.Rules[0], want.rule) {
			t.Errorf("ClusterRole %s rules %+v, want [%+v]", role.Name, role.Rules, want.rule)
		}
	}
	if pr := chartObject(objs, "PrometheusRule"); pr != nil {
		if pr.GetAPIVersion() != "monitoring.coreos.com/v1" {
			t.Errorf("PrometheusRule apiVersion %s", pr.GetAPIVersion())
		}
		for k, want := range valGet(v, "prometheusRule.labels").(map[string]any) {
			if pr.GetLabels()[k] != want {
				t.Errorf("PrometheusRule label %s=%q, want %q", k, pr.GetLabels()[k], want)
			}
		}
		// The groups of observability/rules.yaml, the source, unchanged
		// but for the runbooks' URL.
		rules, err := os.ReadFile("../observability/rules.yaml")
		if err != nil {
			t.Fatal(err)
		}
		const sourceRunbooks = "https://github.com/change-metrics/monocle-hook/blob/main/observability/runbooks.md"
		var source map[string]any
		if err := yaml.Unmarshal([]byte(strings.ReplaceAll(string(rules), sourceRunbooks, valStr(v, "prometheusRule.runbookURL"))), &source); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(rules), sourceRunbooks+"#"); n < 17 {
			t.Errorf("rules.yaml names the runbooks %d times", n)
		}
		groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
		if !reflect.DeepEqual(jsonRoundTrip(t, groups), jsonRoundTrip(t, source["groups"])) {
			t.Errorf("PrometheusRule groups differ from observability/rules.yaml's:\n%v", groups)
		}
		if len(groups) == 0 {
			t.Error("PrometheusRule has no groups")
		}
	}
	if cm := chartObject(objs, "ConfigMap"); cm != nil {
		for k, want := range valGet(v, "grafanaDashboard.labels").(map[string]any) {
			if cm.GetLabels()[k] != want {
				t.Errorf("dashboard ConfigMap label %s=%q, want %q", k, cm.GetLabels()[k], want)
			}
		}
		checkSame(t, "grafanaDashboard.annotations", valGet(v, "grafanaDashboard.annotations"), cm.GetAnnotations())
		source, err := os.ReadFile("../observability/dashboard.json")
		if err != nil {
			t.Fatal(err)
		}
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		if len(data) != 1 || data["monocle-hook.json"] != string(source) {
			t.Errorf("dashboard ConfigMap data keys %v: monocle-hook.json differs from observability/dashboard.json", slices.Collect(maps.Keys(data)))
		}
		var dashboard struct {
			UID    string `json:"uid"`
			Panels []any  `json:"panels"`
		}
		if err := json.Unmarshal([]byte(data["monocle-hook.json"]), &dashboard); err != nil || dashboard.UID == "" || len(dashboard.Panels) == 0 {
			t.Errorf("the dashboard is not a Grafana dashboard (uid %q, %d panels): %v", dashboard.UID, len(dashboard.Panels), err)
		}
	}
}

// jsonRoundTrip: v as JSON decodes it, so YAML's ints and JSON's floats
// compare equal.
func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// dryRunChart has the API server validate every object (server-side dry
// run, strict field validation, any warning is a failure), then a Pod made
// from the Deployment's template and the helm test Pod, which the
// namespace's restricted Pod Security level admits or rejects.
func dryRunChart(t *testing.T, objs []*unstructured.Unstructured, v map[string]any, ns string, testPod *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	c, warnings := chartWarningClient(t)
	for _, o := range objs {
		if o.GetNamespace() != "" && o.GetNamespace() != ns { // the dashboard's
			ensureNamespace(t, o.GetNamespace())
		}
		err := c.Create(ctx, o.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict"))
		if err != nil {
			t.Errorf("dry-run create %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if w := warnings.take(); len(w) > 0 {
			t.Errorf("dry-run create %s %s: warnings %q", o.GetKind(), o.GetName(), w)
		}
	}

	// The Pod needs its ServiceAccount (the chart's, or the admin's) and
	// PriorityClass to exist.
	var dep appsv1.Deployment
	toTyped(t, chartObject(objs, "Deployment"), &dep)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: dep.Spec.Template.Spec.ServiceAccountName, Namespace: ns}}
	if o := chartObject(objs, "ServiceAccount"); o != nil {
		toTyped(t, o, sa)
	}
	if err := k8sClient.Create(ctx, sa); err != nil {
		t.Fatalf("creating the ServiceAccount: %v", err)
	}
	if pc := valStr(v, "priorityClassName"); pc != "" {
		ensurePriorityClass(t, pc)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: dep.Name + "-pod", Namespace: ns, Labels: dep.Spec.Template.Labels, Annotations: dep.Spec.Template.Annotations},
		Spec:       dep.Spec.Template.Spec,
	}
	if err := c.Create(ctx, pod, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
		t.Errorf("a Pod of the Deployment's template is not admitted in a restricted namespace: %v", err)
	}
	if w := warnings.take(); len(w) > 0 {
		t.Errorf("dry-run create of the hook's Pod: warnings %q", w)
	}
	if err := c.Create(ctx, testPod.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict")); err != nil {
		t.Errorf("the helm test Pod is not admitted in a restricted namespace: %v", err)
	}
	if w := warnings.take(); len(w) > 0 {
		t.Errorf("dry-run create of the helm test Pod: warnings %q", w)
	}
}

// ensureNamespace makes a namespace of that name, once for the whole run.
func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8sClient.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

func ensurePriorityClass(t *testing.T, name string) {
	t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: 1000}
	if err := k8sClient.Create(context.Background(), pc); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating PriorityClass %s: %v", name, err)
	}
}

// chartWarnings keeps the API server's warnings until taken.
type chartWarnings struct {
	mu       sync.Mutex
	warnings []string
}

func (r *chartWarnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, text)
}

func (r *chartWarnings) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.warnings
	r.warnings = nil
	return w
}

// chartWarningClient is an admin client whose warnings are recorded.
func chartWarningClient(t *testing.T) (client.Client, *chartWarnings) {
	t.Helper()
	rec := &chartWarnings{}
	config := rest.CopyConfig(cfg)
	config.WarningHandler = nil
	config.WarningHandlerWithContext = rec
	c, err := client.New(config, client.Options{Mapper: k8sClient.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// helmBin is the pinned helm that tools/assets.sh puts beside the control plane.
func helmBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "helm")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("helm is not in KUBEBUILDER_ASSETS (rerun tools/assets.sh): %v", err)
	}
	return bin
}

// helmEnv: the environment with helm's config, cache and data in a fresh
// folder and no kubeconfig, so nothing of the machine's changes a render.
func helmEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	return append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
	)
}

// runHelm returns helm's stdout, or an error carrying its stderr.
// uninstallAtCleanup uninstalls the Helm release from namespace ns, then
// deletes ns, when the test ends: the next test's install finds neither.
func uninstallAtCleanup(t *testing.T, release, ns, kubeconfig string) {
	t.Cleanup(func() {
		_, _ = runHelm(t, "uninstall", release, "-n", ns, "--kubeconfig", kubeconfig)
		err := k8sClient.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
}

func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helmBin(t), args...)
	cmd.Env = helmEnv(t)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

// renderChart runs helm template for the release in namespace ns, for a
// cluster that serves Metacontroller's API (as the test API server does):
// what helm install creates, so without the helm test Pod (renderTestPod).
func renderChart(t *testing.T, ns string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	start := time.Now()
	out, err := runHelm(t, append([]string{"template", chartRelease, chartDir, "--namespace", ns, "--api-versions", apiCompositeController, "--skip-tests"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helm template %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return decodeYAMLObjects(t, []byte(out))
}

// helmArgs: -f for each file, then for the overrides.
func (s chartValueSet) helmArgs(t *testing.T) []string {
	t.Helper()
	var args []string
	for _, f := range s.files {
		args = append(args, "-f", f)
	}
	if s.overrides != nil {
		b, err := json.Marshal(s.overrides) // JSON is YAML
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "overrides.yaml")
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-f", f)
	}
	return args
}

// renderArgs: helmArgs, and the APIs the cluster is said to serve.
func (s chartValueSet) renderArgs(t *testing.T) []string {
	t.Helper()
	args := s.helmArgs(t)
	for _, api := range s.apiVersions {
		args = append(args, "--api-versions", api)
	}
	return args
}

// values: the values Helm renders with, merged as Helm merges them (maps
// key by key, anything else replaced).
func (s chartValueSet) values(t *testing.T, defaults map[string]any) map[string]any {
	t.Helper()
	v := defaults
	for _, f := range s.files {
		v = mergeChartValues(v, readValues(t, f))
	}
	return mergeChartValues(v, s.overrides)
}

func mergeChartValues(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = mergeChartValues(dm, sm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func chartDefaults(t *testing.T) map[string]any {
	t.Helper()
	return readValues(t, filepath.Join(chartDir, "values.yaml"))
}

func chartMetadata(t *testing.T) map[string]any {
	t.Helper()
	return readValues(t, filepath.Join(chartDir, "Chart.yaml"))
}

func readValues(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if m == nil { // only comments
		m = map[string]any{}
	}
	return m
}

// decodeYAMLObjects reads a multi-document YAML stream, skipping empty
// documents; duplicate keys are errors.
func decodeYAMLObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("reading YAML: %v", err)
		}
		var m map[string]any
		if err := yaml.UnmarshalStrict(doc, &m); err != nil {
			t.Fatalf("decoding YAML: %v\n%s", err, doc)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

func chartKinds(objs []*unstructured.Unstructured) []string {
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	sort.Strings(kinds)
	return kinds
}

func chartObjectNamed(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// checkMetacontrollerServiceMonitor: it scrapes the port the Service of
// chart/files/metacontroller-values.yaml names, in the namespace and by
// the name label Metacontroller's chart gives its Service.
func checkMetacontrollerServiceMonitor(t *testing.T, sm *unstructured.Unstructured, v map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartDir, "files", "metacontroller-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type servicePort struct {
		Name       string
		Port       int
		TargetPort int `json:"targetPort"`
	}
	var mcValues struct {
		Service struct {
			Enabled bool
			Ports   []servicePort
		}
		CommandArgs []string `json:"commandArgs"`
	}
	if err := yaml.Unmarshal(b, &mcValues); err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Selector          metav1.LabelSelector
		NamespaceSelector struct{ MatchNames []string }
		Endpoints         []struct{ Port, Path string }
	}
	viaJSON(t, sm.Object["spec"], &spec)
	if len(spec.Endpoints) != 1 || spec.Endpoints[0].Path != "/metrics" ||
		!mcValues.Service.Enabled || !slices.ContainsFunc(mcValues.Service.Ports, func(p servicePort) bool {
		return p.Name == spec.Endpoints[0].Port && p.TargetPort == 9999 // Metacontroller's --metrics-address default
	}) {
		t.Errorf("Metacontroller's ServiceMonitor scrapes %+v; the values file's Service: %+v", spec.Endpoints, mcValues.Service)
	}
	if slices.ContainsFunc(mcValues.CommandArgs, func(a string) bool { return strings.HasPrefix(a, "--metrics-address") }) {
		t.Error("the values file moves --metrics-address: the Service's targetPort must follow")
	}
	if spec.Selector.MatchLabels["app.kubernetes.io/name"] != valStr(v, "metacontrollerServiceMonitor.name") ||
		!slices.Equal(spec.NamespaceSelector.MatchNames, []string{valStr(v, "metacontrollerServiceMonitor.namespace")}) {
		t.Errorf("Metacontroller's ServiceMonitor selects %v in %v", spec.Selector, spec.NamespaceSelector)
	}
}

func chartObject(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	return nil
}

func toTyped(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

// viaJSON decodes a values subtree into a typed object, through JSON. An
// empty map or list leaves out as it is, as Helm's `with` renders nothing.
func viaJSON(t *testing.T, in, out any) {
	t.Helper()
	switch x := in.(type) {
	case nil:
		return
	case map[string]any:
		if len(x) == 0 {
			return
		}
	case []any:
		if len(x) == 0 {
			return
		}
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s into %T: %v", b, out, err)
	}
}

// checkConverted: the rendered value equals the wanted one, both decoded
// through JSON into the rendered one's type (so 1 and "1" are one CPU, an
// empty map is no map, and numbers compare whatever their Go type).
func checkSame[T any](t *testing.T, what string, want any, got T) {
	t.Helper()
	var w, g T
	viaJSON(t, want, &w)
	viaJSON(t, got, &g)
	if !apiequality.Semantic.DeepEqual(w, g) {
		t.Errorf("%s: rendered %+v, want %+v", what, g, w)
	}
}

// valGet walks a dotted path through nested maps.
func valGet(v map[string]any, path string) any {
	var cur any = v
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

func valStr(v map[string]any, path string) string {
	s, _ := valGet(v, path).(string)
	return s
}

func valInt(v map[string]any, path string) int64 {
	switch n := valGet(v, path).(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return -1
}

func ptrTrue(b *bool) bool  { return b != nil && *b }
func ptrFalse(b *bool) bool { return b != nil && !*b }

// firstLineDiff shows the first line where two different files differ.
func firstLineDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(al), len(bl)) {
		if i >= len(al) || i >= len(bl) || al[i] != bl[i] {
			var x, y string
			if i < len(al) {
				x = al[i]
			}
			if i < len(bl) {
				y = bl[i]
			}
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return "(no line differs)"
}

// checkPodMonitor: the Monocles' PodMonitor selects the API and crawler pods
// the hook makes, and them only (not Elasticsearch's, whose port 9200 has no
// /metrics), on a port each of them names, in the namespaces asked.
func checkPodMonitor(t *testing.T, pm *unstructured.Unstructured, v map[string]any) {
	t.Helper()
	var spec struct {
		Selector          metav1.LabelSelector
		NamespaceSelector struct {
			Any        bool
			MatchNames []string
		}
		PodMetricsEndpoints []struct {
			Port, Path string
		}
		FallbackScrapeProtocol string
	}
	viaJSON(t, pm.Object["spec"], &spec)
	selector, err := metav1.LabelSelectorAsSelector(&spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.PodMetricsEndpoints) != 1 || spec.PodMetricsEndpoints[0].Path != "/metrics" {
		t.Fatalf("endpoints %+v", spec.PodMetricsEndpoints)
	}
	if want := valStr(v, "monoclePodMonitor.fallbackScrapeProtocol"); spec.FallbackScrapeProtocol != want {
		t.Errorf("fallbackScrapeProtocol %q, want %q (the crawler's /metrics has no Content-Type)", spec.FallbackScrapeProtocol, want)
	}
	port := spec.PodMetricsEndpoints[0].Port
	children, _, err := hook.Render([]byte("apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata: {name: m, namespace: team-a}\nspec: {}\n"), hook.Env{Now: time.Now, Rand: randReader{}})
	if err != nil {
		t.Fatal(err)
	}
	selected := map[string]bool{}
	for _, doc := range strings.Split(string(children), "\n---\n") {
		var o struct {
			Kind     string
			Metadata metav1.ObjectMeta
			Spec     struct{ Template corev1.PodTemplateSpec }
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		if o.Kind != "Deployment" && o.Kind != "StatefulSet" {
			continue
		}
		if !selector.Matches(labels.Set(o.Spec.Template.Labels)) {
			continue
		}
		selected[o.Metadata.Name] = true
		if !slices.ContainsFunc(o.Spec.Template.Spec.Containers[0].Ports, func(p corev1.ContainerPort) bool { return p.Name == port }) {
			t.Errorf("%s %s has no port %q", o.Kind, o.Metadata.Name, port)
		}
	}
	if !selected["m-api"] || !selected["m-crawler"] || len(selected) != 2 {
		t.Errorf("the PodMonitor selects %v, want m-api and m-crawler", selected)
	}
	namespaces, _ := valGet(v, "monoclePodMonitor.namespaces").([]any)
	if spec.NamespaceSelector.Any != (len(namespaces) == 0) || len(spec.NamespaceSelector.MatchNames) != len(namespaces) {
		t.Errorf("namespaceSelector %+v for namespaces %v", spec.NamespaceSelector, namespaces)
	}
}

// TestPlainManifestsAdoptedByHelm: objects applied from the plain manifests,
// as docs/install.md's step 2 applies them, are adopted by a helm install of the
// same release (their ownership metadata is Helm's), not refused; the same
// objects stay (their UIDs).
func TestPlainManifestsAdoptedByHelm(t *testing.T) {
	ctx := context.Background()
	kubeconfig := adminKubeconfig(t, "helm-adopt")
	const ns = "monocle-hook" // the plain manifests' namespace
	uninstallAtCleanup(t, chartRelease, ns, kubeconfig)
	for _, line := range []string{
		"kubectl apply -f metacontroller/hook.yaml",
		"kubectl apply -f metacontroller/compositecontroller.yaml",
	} {
		shell(t, kubeconfig, "cd .. && "+line)
	}
	var dep appsv1.Deployment
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "monocle-hook"}, &dep); err != nil {
		t.Fatal(err)
	}
	cc := &unstructured.Unstructured{}
	cc.SetAPIVersion("metacontroller.k8s.io/v1alpha1")
	cc.SetKind("CompositeController")
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: "monocle"}, cc); err != nil {
		t.Fatal(err)
	}
	if _, err := runHelm(t, "install", chartRelease, chartDir, "-n", ns, "--kubeconfig", kubeconfig); err != nil {
		t.Fatalf("helm install over the plain manifests: %v", err)
	}
	var after appsv1.Deployment
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "monocle-hook"}, &after); err != nil {
		t.Fatal(err)
	}
	ccAfter := cc.DeepCopy()
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: "monocle"}, ccAfter); err != nil {
		t.Fatal(err)
	}
	if after.UID != dep.UID || ccAfter.GetUID() != cc.GetUID() {
		t.Errorf("helm install replaced the objects instead of adopting them")
	}
	if _, err := runHelm(t, "status", chartRelease, "-n", ns, "--kubeconfig", kubeconfig); err != nil {
		t.Errorf("no release after the install: %v", err)
	}
}

// TestChartWithoutCompositeController: compositeController.enabled=false
// installs the hook alone (the seed operator's migration needs it so); the
// command the notes then print adds the CompositeController.
func TestChartWithoutCompositeController(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	kubeconfig := adminKubeconfig(t, "helm-no-cc")
	t.Cleanup(func() { _, _ = runHelm(t, "uninstall", chartRelease, "-n", ns, "--kubeconfig", kubeconfig) })
	out, err := runHelm(t, "install", chartRelease, chartDir, "-n", ns, "--kubeconfig", kubeconfig,
		"--set", "compositeController.name="+ns, "--set", "compositeController.enabled=false")
	if err != nil {
		t.Fatal(err)
	}
	cc := &unstructured.Unstructured{}
	cc.SetAPIVersion("metacontroller.k8s.io/v1alpha1")
	cc.SetKind("CompositeController")
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: ns}, cc); !apierrors.IsNotFound(err) {
		t.Fatalf("with compositeController.enabled=false, the CompositeController: %v, want NotFound", err)
	}
	var printed string
	for l := range strings.Lines(out) {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "helm upgrade") && strings.Contains(l, "compositeController.enabled=true") {
			printed = l
		}
	}
	if !strings.Contains(printed, "--set compositeController.enabled=true") {
		t.Fatalf("the notes print no command that adds the CompositeController:\n%s", out)
	}
	line := strings.Replace(printed, "<this chart>", chartDir, 1) + " --kubeconfig " + kubeconfig
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = append(helmEnv(t), "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: ns}, cc); err != nil {
		t.Errorf("after the notes' command, the CompositeController: %v", err)
	}
}
