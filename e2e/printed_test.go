package e2e

// Every command the chart prints, run as printed: its NOTES (in each of
// their variants), the message its Metacontroller check fails with, and its
// README (what `helm show readme` prints). The chart is pushed to an OCI
// registry on loopback and every text is read back from there; each command
// found must have an entry below, which runs it against the real API
// server (the registry, namespace and version substituted, as a user
// would) or names the test that does. A command added to the chart's texts
// without an entry fails this test, and so does an entry no text prints.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A command as printed, where.
type printedCommand struct {
	source string // "NOTES", "README", ...
	text   string // as printed; a heredoc with its lines
}

// printedRun is what the entries share: one release installed from the
// loopback registry as the README says, then used by the NOTES' commands.
type printedRun struct {
	host       string // the registry, 127.0.0.1:port
	ref        string // the chart there, oci://...
	version    string // the chart's version
	ns         string // the release's namespace (the printed monocle-hook)
	kubeconfig string // an admin's, its current namespace ns
	dir        string // where the user runs the commands: helm pull writes there
	notes      []printedCommand
	d          *driver // Metacontroller's part, for the Monocle of the NOTES
}

// printedEntry is what the test does with one printed command: run it, or
// say which test runs it.
type printedEntry struct {
	command string // the key: see printedKey
	run     func(t *testing.T, r *printedRun, text string)
	by      string // else: the test that runs it
}

func TestChartPrintedCommands(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	r := &printedRun{host: strings.TrimPrefix(srv.URL, "http://"), version: valStr(chartMetadata(t), "version"), dir: t.TempDir()}
	r.ref = "oci://" + r.host + "/e2e/charts/monocle-hook"
	dist := t.TempDir()
	if _, err := runHelm(t, "package", chartDir, "-d", dist); err != nil {
		t.Fatal(err)
	}
	if _, err := runHelm(t, "push", filepath.Join(dist, "monocle-hook-"+r.version+".tgz"), "oci://"+r.host+"/e2e/charts", "--plain-http"); err != nil {
		t.Fatal(err)
	}
	from := []string{r.ref, "--version", r.version, "--plain-http"}

	// What the chart prints, read from the registry. The NOTES of a dry run
	// for the release and namespace the README uses (nothing is written):
	// as installed, then each variant that prints something else.
	admin := adminKubeconfig(t, "printed-commands")
	var printed []printedCommand
	for _, variant := range [][]string{
		nil,
		{"--set", "compositeController.enabled=false"},
		// Not served by this API server: the notes say how to get them.
		{"--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true"},
	} {
		out, err := runHelm(t, slices.Concat([]string{"install", chartRelease}, from,
			[]string{"-n", "monocle-hook", "--kubeconfig", admin, "--dry-run=server"}, variant)...)
		if err != nil {
			t.Fatal(err)
		}
		notes := notesCommands(t, out)
		if variant == nil {
			r.notes = notes
		}
		for _, c := range notes {
			c.source = strings.TrimSpace("NOTES " + strings.Join(variant, " "))
			printed = append(printed, c)
		}
	}
	// Without Metacontroller's API (helm template asks no cluster): the
	// check's one-line message.
	if _, err := runHelm(t, slices.Concat([]string{"template", chartRelease}, from)...); err == nil {
		t.Fatal("helm template without Metacontroller's API succeeded; want the check's message")
	} else {
		for _, text := range codeSpans(err.Error()) {
			printed = append(printed, printedCommand{"the Metacontroller check's message", text})
		}
	}
	readme, err := runHelm(t, slices.Concat([]string{"show", "readme"}, from)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range markdownCommands(readme) {
		c.source = "README"
		printed = append(printed, c)
	}

	entries := printedEntries()
	byKey := map[string]printedCommand{}
	for _, c := range printed {
		key := printedKey(c.text, r.version)
		if _, ok := byKey[key]; ok {
			continue
		}
		byKey[key] = c
		if !slices.ContainsFunc(entries, func(e printedEntry) bool { return e.command == key }) {
			t.Errorf("the chart's %s prints a command no entry of printedEntries runs: add one\n%s", c.source, key)
		}
	}
	tests := testFunctions(t)
	for _, e := range entries {
		if _, ok := byKey[e.command]; !ok {
			t.Errorf("printedEntries has %q, which the chart no longer prints: remove it", e.command)
		}
		if e.run == nil && !tests[e.by] {
			t.Errorf("%q: run by %s, which is no test", e.command, e.by)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The release's namespace: made by the README's install command.
	r.ns = "e2e-printed-" + utilrand.String(5)
	uninstallAtCleanup(t, chartRelease, r.ns, admin)
	// Its user's kubeconfig has that namespace current: the NOTES' Monocle
	// goes "in any namespace", the one kubectl is in.
	r.kubeconfig = admin
	if out, err := r.sh(t, "", "kubectl config set-context --current --namespace="+r.ns); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r.d = newDriver(t, r.ns)

	for _, e := range entries {
		if e.run == nil {
			t.Logf("%s: run by %s", e.command, e.by)
			continue
		}
		// In order, each on what the ones before did: stop at the first
		// that fails.
		if !t.Run(e.command, func(t *testing.T) { e.run(t, r, byKey[e.command].text) }) {
			break
		}
	}
}

// What the NOTES print with compositeController.enabled=false.
const notesEnableCompositeController = "helm upgrade monocle-hook <this chart> -n monocle-hook --reset-then-reuse-values --set compositeController.enabled=true"

// What the NOTES print to name Prometheus in the hook's NetworkPolicy.
const notesScraperPeers = `helm upgrade monocle-hook <this chart> -n monocle-hook --reset-then-reuse-values --set-json 'networkPolicy.metricsScraperPeers=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}},"podSelector":{"matchLabels":{"app.kubernetes.io/name":"prometheus"}}}]'`

// printedEntries: every command the chart prints, in the order they run.
func printedEntries() []printedEntry {
	return []printedEntry{
		{command: "helm install monocle-hook oci://ghcr.io/change-metrics/charts/monocle-hook --version V -n monocle-hook --create-namespace",
			// The README's alternative, ./chart from a clone: TestChartInstall.
			run: func(t *testing.T, r *printedRun, text string) {
				// Its own CompositeController name, as every test's: the
				// object is cluster-scoped.
				out := r.mustSh(t, "", r.local(uncommented(text))+" --set compositeController.name="+r.ns)
				// The NOTES it printed are the dry run's, in its namespace.
				var got, want []string
				for _, c := range notesCommands(t, out) {
					got = append(got, printedKey(strings.ReplaceAll(c.text, r.ns, "monocle-hook"), r.version))
				}
				for _, c := range r.notes {
					want = append(want, printedKey(c.text, r.version))
				}
				if !slices.Equal(got, want) {
					t.Errorf("the install's NOTES print\n%s\nthe dry run's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				cc := compositeController()
				if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: r.ns}, cc); err != nil {
					t.Errorf("after the README's install, the CompositeController: %v", err)
				}
			}},
		{command: "kubectl label ns monocle-hook pod-security.kubernetes.io/enforce=restricted",
			run: func(t *testing.T, r *printedRun, text string) {
				r.mustSh(t, "", r.local(text))
				var ns corev1.Namespace
				if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: r.ns}, &ns); err != nil {
					t.Fatal(err)
				}
				if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
					t.Errorf("after the README's label command, the namespace enforces %q", got)
				}
			}},
		{command: "kubectl -n monocle-hook rollout status deployment/monocle-hook",
			run: func(t *testing.T, r *printedRun, text string) {
				// No kube-controller-manager nor kubelet here: nothing
				// reports the Deployment's replicas, and the command waits.
				if out, err := r.sh(t, "", r.local(uncommented(text))+" --timeout=2s"); err == nil || !strings.Contains(out, "Waiting") {
					t.Errorf("rollout status before any replica is available: %v, want it to wait\n%s", err, out)
				}
				// Its status as its controller writes it once every replica
				// is available: then the command says so.
				r.d.markReady("Deployment.apps/v1", "monocle-hook")
				if out := r.mustSh(t, "", r.local(text)); !strings.Contains(out, "successfully rolled out") {
					t.Errorf("rollout status printed\n%s", out)
				}
			}},
		{command: "kubectl apply -f - <<'EOF'",
			run: func(t *testing.T, r *printedRun, text string) {
				if !strings.HasSuffix(text, "\nEOF") {
					t.Fatalf("the NOTES' heredoc does not end with EOF:\n%s", text)
				}
				r.mustSh(t, "", text)
				m := r.d.monocle("monocle-sample")
				if url, _, _ := unstructured.NestedString(m.Object, "spec", "publicURL"); url != "http://localhost:8090" {
					t.Errorf("the NOTES' Monocle has publicURL %q", url)
				}
			}},
		{command: "kubectl get monocle monocle-sample -w",
			run: func(t *testing.T, r *printedRun, text string) {
				ctx, cancel := context.WithCancel(context.Background())
				var out syncBuffer
				watch := r.command(ctx, t, "", "exec "+text)
				watch.Stdout, watch.Stderr = &out, &out
				if err := watch.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() {
					cancel()
					_ = watch.Wait()
				}()
				// Metacontroller and the hook, then the workloads' controllers
				// (none runs here: the driver and the statuses a kubelet's
				// pods would give).
				r.d.converge("monocle-sample")
				for _, w := range []struct{ key, name string }{
					{"StatefulSet.apps/v1", "monocle-sample-elastic"},
					{"Deployment.apps/v1", "monocle-sample-api"},
					{"Deployment.apps/v1", "monocle-sample-crawler"},
				} {
					r.d.markReady(w.key, w.name)
				}
				r.d.converge("monocle-sample")
				ready := regexp.MustCompile(`(?m)^monocle-sample\s+True\s`)
				for deadline := time.Now().Add(30 * time.Second); !ready.MatchString(out.String()); time.Sleep(100 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("the watch never showed READY True:\n%s", out.String())
					}
				}
				if !strings.HasPrefix(out.String(), "NAME") || !strings.Contains(out.String(), "READY") {
					t.Errorf("the watch printed no READY column:\n%s", out.String())
				}
			}},
		{command: "kubectl port-forward svc/monocle-sample-api 8090:8080",
			run: func(t *testing.T, r *printedRun, text string) {
				// Forwarding goes through the kubelet to a running API pod:
				// there is neither here. What can run: kubectl finds the
				// Service and waits for a pod of it (a bounded wait, not the
				// minute it gives by default); the Service's port 8080 is
				// the API's.
				out, err := r.sh(t, "", uncommented(text)+" --pod-running-timeout=2s")
				if err == nil || strings.Contains(out, "not found") || !strings.Contains(out, "timed out waiting") {
					t.Errorf("port-forward without a pod: %v, want it to wait for one\n%s", err, out)
				}
				svc := r.d.get("Service.v1", "monocle-sample-api")
				ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
				if !slices.ContainsFunc(ports, func(p any) bool { return p.(map[string]any)["port"] == int64(8080) }) {
					t.Errorf("the Service monocle-sample-api has no port 8080: %v", ports)
				}
			}},
		{command: "kubectl explain monocle.spec",
			run: func(t *testing.T, r *printedRun, text string) {
				if out := r.mustSh(t, "", text); !strings.Contains(out, "publicURL") {
					t.Errorf("kubectl explain monocle.spec lists no publicURL:\n%s", out)
				}
			}},
		{command: "helm show crds oci://ghcr.io/change-metrics/charts/monocle-hook --version V | kubectl apply --server-side --force-conflicts -f -",
			// A server-side dry run: applied for real, the CRD's fields
			// would become kubectl's, and TestPushAndInstallFromRegistry
			// (which runs this line for real, for a next version) shows
			// that without --force-conflicts the apply is refused because
			// they are not.
			run: func(t *testing.T, r *printedRun, text string) {
				out := r.mustSh(t, "", r.local(uncommented(text))+" --dry-run=server")
				if !strings.Contains(out, "monocles.monocle.monocle.change-metrics.io serverside-applied (server dry run)") {
					t.Errorf("the CRD's apply printed\n%s", out)
				}
				shown := r.mustSh(t, "", r.local(strings.SplitN(text, "|", 2)[0]))
				crd, err := os.ReadFile(filepath.Join(chartDir, "crds", "monocle.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(shown, strings.TrimSpace(string(crd))) {
					t.Errorf("helm show crds of the pushed chart is not chart/crds/monocle.yaml")
				}
			}},
		{command: "kubectl apply --server-side --force-conflicts -f chart/crds/",
			// From a checkout; a dry run for the same reason.
			run: func(t *testing.T, r *printedRun, text string) {
				if out := r.mustSh(t, "..", uncommented(text)+" --dry-run=server"); !strings.Contains(out, "serverside-applied (server dry run)") {
					t.Errorf("the checkout's CRD apply printed\n%s", out)
				}
			}},
		{command: "helm upgrade monocle-hook oci://ghcr.io/change-metrics/charts/monocle-hook --version V -n monocle-hook --reset-then-reuse-values",
			run: func(t *testing.T, r *printedRun, text string) {
				r.mustSh(t, "", r.local(text))
				// The install's values are kept: the CompositeController's
				// name among them.
				if v := r.release(t); v.Version != 2 || v.Config["compositeController"] == nil {
					t.Errorf("after the README's upgrade, revision %d with values %v; want 2, the install's", v.Version, v.Config)
				}
				if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: r.ns}, compositeController()); err != nil {
					t.Errorf("after the README's upgrade, the CompositeController: %v", err)
				}
			}},
		{command: notesEnableCompositeController,
			// TestChartWithoutCompositeController runs it with ./chart; here
			// with the chart from the registry, after the release dropped
			// its CompositeController.
			run: func(t *testing.T, r *printedRun, text string) {
				if _, err := runHelm(t, slices.Concat([]string{"upgrade", chartRelease}, []string{r.ref, "--version", r.version, "--plain-http"},
					[]string{"-n", r.ns, "--kubeconfig", r.kubeconfig, "--reset-then-reuse-values", "--set", "compositeController.enabled=false"})...); err != nil {
					t.Fatal(err)
				}
				if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: r.ns}, compositeController()); !apierrors.IsNotFound(err) {
					t.Fatalf("with compositeController.enabled=false, the CompositeController: %v, want NotFound", err)
				}
				r.mustSh(t, "", r.local(text))
				if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: r.ns}, compositeController()); err != nil {
					t.Errorf("after the NOTES' command, the CompositeController: %v", err)
				}
			}},
		// The values' description of compositeController.enabled: the NOTES'
		// command above, without its release and chart.
		{command: "helm upgrade --reset-then-reuse-values --set compositeController.enabled=true",
			run: func(t *testing.T, r *printedRun, text string) {
				full := strings.Fields(notesEnableCompositeController)
				for _, f := range strings.Fields(text) {
					if !slices.Contains(full, f) {
						t.Errorf("%q is not in the NOTES' command %s", f, notesEnableCompositeController)
					}
				}
			}},
		// The same upgrade, named in passing (after installing Prometheus
		// Operator; before the CRD's apply): the README's full command above.
		{command: "helm upgrade", run: func(t *testing.T, r *printedRun, _ string) {
			if v := r.release(t); v.Version != 4 {
				t.Errorf("release revision %d, want 4: the upgrades above", v.Version)
			}
		}},
		// The NOTES' way to name a scraper (or another Metacontroller) in
		// the hook's NetworkPolicy: the values are kept, and the policy
		// admits the scraper beside Metacontroller.
		{command: notesScraperPeers,
			run: func(t *testing.T, r *printedRun, text string) {
				r.mustSh(t, "", r.local(text))
				v := r.release(t)
				if v.Version != 5 || v.Config["compositeController"] == nil {
					t.Errorf("after the NOTES' scraper command, revision %d with values %v; want 5, the install's kept", v.Version, v.Config)
				}
				var np networkingv1.NetworkPolicy
				if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: r.ns, Name: "monocle-hook"}, &np); err != nil {
					t.Fatal(err)
				}
				var from []string
				for _, rule := range np.Spec.Ingress {
					for _, p := range rule.From {
						from = append(from, metav1.FormatLabelSelector(p.NamespaceSelector)+" "+metav1.FormatLabelSelector(p.PodSelector))
					}
				}
				want := []string{
					"kubernetes.io/metadata.name=metacontroller app.kubernetes.io/name in (metacontroller,metacontroller-helm)",
					"kubernetes.io/metadata.name=monitoring app.kubernetes.io/name=prometheus",
				}
				for _, w := range want {
					if !slices.Contains(from, w) {
						t.Errorf("the NetworkPolicy admits %q, not %q", from, w)
					}
				}
			}},
		// "for `helm template` pipelines", with capabilityChecks=false (the
		// check's message says the same): the chart from the registry,
		// rendered with no cluster.
		{command: "helm template", run: func(t *testing.T, r *printedRun, _ string) {
			out, err := runHelm(t, "template", chartRelease, r.ref, "--version", r.version, "--plain-http", "--set", "capabilityChecks=false")
			if err != nil {
				t.Fatal(err)
			}
			if kinds := chartKinds(decodeYAMLObjects(t, []byte(out))); !slices.Contains(kinds, "CompositeController") {
				t.Errorf("helm template with capabilityChecks=false rendered %v; want the CompositeController", kinds)
			}
		}},
		// A target of the checkout's Makefile, which `make test` runs;
		// TestChartLint runs its helm lint --strict on the same value sets.
		{command: "make chart-lint", by: "TestChartLint"},
		// It writes into the checkout: TestManifestsUpToDate renders the
		// same into a temporary folder and compares.
		{command: "make manifests", by: "TestManifestsUpToDate"},
		// The README's upgrade procedure starts with it (kubectl get ... |
		// monocle-hook check -f -); the binary's own tests run it.
		{command: "monocle-hook check", by: "TestCheckGate"},
		// The values' description of extraArgs: the binary's own test
		// builds and runs it.
		{command: "monocle-hook --help", by: "TestBinaryHelpAndVersion"},
		// The check's message (and the docs' install): the chart from the
		// registry, for the Metacontroller values it carries in files/.
		{command: "helm pull oci://ghcr.io/change-metrics/charts/monocle-hook --version V --untar",
			run: runChartPull},
		{command: "helm install metacontroller oci://ghcr.io/metacontroller/metacontroller-helm --version 4.17.2 -n metacontroller --create-namespace -f monocle-hook/files/metacontroller-values.yaml",
			run: runMetacontrollerInstall},
		// Its complete form, last: what stays is what the NOTES say.
		{command: "helm uninstall", run: func(t *testing.T, r *printedRun, _ string) {
			r.mustSh(t, "", "helm uninstall monocle-hook -n "+r.ns)
			ctx := context.Background()
			if err := k8sClient.Get(ctx, client.ObjectKey{Name: r.ns}, compositeController()); !apierrors.IsNotFound(err) {
				t.Errorf("after helm uninstall, the CompositeController: %v, want NotFound", err)
			}
			if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: "monocle-hook"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
				t.Errorf("after helm uninstall, the hook's Deployment: %v, want NotFound", err)
			}
			r.d.monocle("monocle-sample")
			for _, w := range []string{"monocle-sample-api", "monocle-sample-crawler"} {
				r.d.get("Deployment.apps/v1", w)
			}
			r.d.get("StatefulSet.apps/v1", "monocle-sample-elastic")
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			if err := k8sClient.Get(ctx, client.ObjectKey{Name: "monocles.monocle.monocle.change-metrics.io"}, crd); err != nil {
				t.Errorf("after helm uninstall, the Monocle CRD: %v", err)
			}
		}},
	}
}

// runChartPull pulls the chart from the registry into the user's folder
// (r.dir): the Metacontroller values it carries are there, the very files
// of chart/files/.
func runChartPull(t *testing.T, r *printedRun, text string) {
	if r.dir == "" {
		t.Fatal("no user's folder (printedRun.dir) to pull the chart into")
	}
	r.mustSh(t, r.dir, r.local(uncommented(text)))
	for _, name := range []string{"metacontroller-values.yaml", "metacontroller-values-dedicated.yaml"} {
		pulled, err := os.ReadFile(filepath.Join(r.dir, "monocle-hook", "files", name))
		if err != nil {
			t.Fatalf("the pulled chart: %v", err)
		}
		source, err := os.ReadFile(filepath.Join(chartDir, "files", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pulled, source) {
			t.Errorf("the pulled chart's files/%s is not chart/files/%s", name, name)
		}
	}
}

// runMetacontrollerInstall runs the check's hint with Metacontroller's own
// chart pushed to the loopback registry as metacontroller-helm 4.17.2,
// in the folder where runChartPull pulled monocle-hook's chart (the printed
// values file is in it): a real install, with no pod ever running (no
// kubelet). The chart comes from
// Metacontroller's source at tag v4.17.2 (its deploy/helm/metacontroller),
// named by $METACONTROLLER_CHART: ghcr.io cannot be reached here, and
// Metacontroller's code is not copied into this repository.
func runMetacontrollerInstall(t *testing.T, r *printedRun, text string) {
	src := os.Getenv("METACONTROLLER_CHART")
	if src == "" {
		t.Skip("METACONTROLLER_CHART is not set (Metacontroller v4.17.2's deploy/helm/metacontroller: tools/metacontroller-chart.sh, with METACONTROLLER_REPO a git directory of its repository): the check's install hint is not run")
	}
	dist := t.TempDir()
	if _, err := runHelm(t, "package", src, "-d", dist); err != nil {
		t.Fatal(err)
	}
	tgz := filepath.Join(dist, "metacontroller-helm-4.17.2.tgz")
	if _, err := os.Stat(tgz); err != nil {
		t.Fatalf("%s is not metacontroller-helm 4.17.2: %v", src, err)
	}
	if _, err := runHelm(t, "push", tgz, "oci://"+r.host+"/metacontroller", "--plain-http"); err != nil {
		t.Fatal(err)
	}
	ns := "e2e-metacontroller-" + utilrand.String(5)
	uninstallAtCleanup(t, "metacontroller", ns, r.kubeconfig)
	line := strings.ReplaceAll(r.local(text), "-n metacontroller ", "-n "+ns+" ")
	if r.dir == "" {
		t.Fatal("no folder holds the pulled chart: the helm pull entry runs first")
	}
	r.mustSh(t, r.dir, line)
	// As the values file sets it: two replicas under leader election.
	var sts appsv1.StatefulSet
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "metacontroller-metacontroller-helm"}, &sts); err != nil {
		t.Fatal(err)
	}
	if *sts.Spec.Replicas != 2 || !slices.Contains(sts.Spec.Template.Spec.Containers[0].Args, "--leader-election") {
		t.Errorf("Metacontroller's StatefulSet: %d replicas, args %v; want metacontroller-values.yaml's", *sts.Spec.Replicas, sts.Spec.Template.Spec.Containers[0].Args)
	}
}

func compositeController() *unstructured.Unstructured {
	cc := &unstructured.Unstructured{}
	cc.SetAPIVersion("metacontroller.k8s.io/v1alpha1")
	cc.SetKind("CompositeController")
	return cc
}

// local is a printed command for here: the loopback registry (over plain
// HTTP) for ghcr.io, the release's namespace for monocle-hook, the chart
// pushed for its version.
func (r *printedRun) local(text string) string {
	text = strings.NewReplacer(
		"oci://ghcr.io/change-metrics/charts/monocle-hook", r.ref,
		"oci://ghcr.io/metacontroller/metacontroller-helm", "oci://"+r.host+"/metacontroller/metacontroller-helm",
		"<this chart>", r.ref+" --version "+r.version,
		"-n monocle-hook", "-n "+r.ns,
		"ns monocle-hook ", "ns "+r.ns+" ",
		"--version V ", "--version "+r.version+" ",
	).Replace(text)
	return helmSubcommand.ReplaceAllString(text, "${1} --plain-http")
}

var helmSubcommand = regexp.MustCompile(`\b(helm (?:install|upgrade|template|pull|show (?:all|chart|crds|readme|values)))\b`)

// command is a shell running script as a user would, with this test's
// kubeconfig, V set to the chart's version (as the README's procedure
// sets it), and the assets' helm and kubectl first on PATH.
func (r *printedRun) command(ctx context.Context, t *testing.T, dir, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, "sh", "-c", "V="+r.version+"\n"+script)
	cmd.Dir = dir
	cmd.Env = append(helmEnv(t), "KUBECONFIG="+r.kubeconfig, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
	return cmd
}

func (r *printedRun) sh(t *testing.T, dir, script string) (string, error) {
	t.Helper()
	out, err := r.command(context.Background(), t, dir, script).CombinedOutput()
	return string(out), err
}

func (r *printedRun) mustSh(t *testing.T, dir, script string) string {
	t.Helper()
	out, err := r.sh(t, dir, script)
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return out
}

// release is helm's record of the release: its revision and the values
// given to it.
func (r *printedRun) release(t *testing.T) (v struct {
	Version int
	Config  map[string]any
}) {
	t.Helper()
	out, err := runHelm(t, "status", chartRelease, "-n", r.ns, "--kubeconfig", r.kubeconfig, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// uncommented is a one-line command without its comment, to add flags to.
func uncommented(text string) string {
	text, _, _ = strings.Cut(text, " #")
	return strings.TrimSpace(text)
}

// printedKey is a command as the entries name it: its first line (a
// heredoc's opening), without its comment, spaces collapsed, and the
// chart's version (or docs/upgrade.md's and the README's $V) as V.
func printedKey(text, version string) string {
	line, _, _ := strings.Cut(text, "\n")
	line, _, _ = strings.Cut(line, " #")
	fields := strings.Fields(line)
	for i := 1; i < len(fields); i++ {
		if fields[i-1] == "--version" && (fields[i] == version || fields[i] == "$V") {
			fields[i] = "V"
		}
	}
	return strings.Join(fields, " ")
}

// commandWord: what a printed command starts with.
var commandWord = regexp.MustCompile(`^(helm|kubectl|make|monocle-hook)\s+\S`)

// codeSpans are the commands quoted `like this` in text (over a line
// break too).
func codeSpans(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(text, -1) {
		if span := strings.Join(strings.Fields(m[1]), " "); commandWord.MatchString(span) {
			out = append(out, span)
		}
	}
	return out
}

// notesCommands are the commands of the NOTES in helm install's output:
// its indented lines that start with helm or kubectl (a heredoc with its
// lines, to EOF), and its code spans.
func notesCommands(t *testing.T, out string) []printedCommand {
	t.Helper()
	_, notes, ok := strings.Cut(out, "\nNOTES:\n")
	if !ok {
		t.Fatalf("helm install printed no NOTES:\n%s", out)
	}
	var cmds []printedCommand
	lines := strings.Split(notes, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(lines[i], " ") || !regexp.MustCompile(`^(helm|kubectl)\s`).MatchString(line) {
			continue
		}
		if strings.Contains(line, "<<'EOF'") {
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
			block := []string{line}
			for i++; i < len(lines); i++ {
				block = append(block, strings.TrimPrefix(lines[i], strings.Repeat(" ", indent)))
				if strings.TrimSpace(lines[i]) == "EOF" {
					break
				}
			}
			line = strings.Join(block, "\n")
		}
		cmds = append(cmds, printedCommand{text: line})
	}
	for _, span := range codeSpans(notes) {
		cmds = append(cmds, printedCommand{text: span})
	}
	return cmds
}

// markdownCommands are the commands of a README: each line of its ```sh
// blocks (continued lines joined), and its code spans.
func markdownCommands(md string) []printedCommand {
	var cmds []printedCommand
	blocks := regexp.MustCompile("(?s)```(?:sh|bash|shell)\n(.*?)```")
	for _, m := range blocks.FindAllStringSubmatch(md, -1) {
		for _, line := range strings.Split(strings.ReplaceAll(m[1], "\\\n", " "), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				cmds = append(cmds, printedCommand{text: line})
			}
		}
	}
	for _, span := range codeSpans(blocks.ReplaceAllString(md, "")) {
		cmds = append(cmds, printedCommand{text: span})
	}
	return cmds
}

// testFunctions: the Test functions of this package and of the hook's own
// (the module's root), by name.
func testFunctions(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Glob("../*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range append(files, root...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`).FindAllSubmatch(b, -1) {
			out[string(m[1])] = true
		}
	}
	return out
}

// syncBuffer is a bytes.Buffer a running command writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
