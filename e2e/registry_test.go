package e2e

// The install from a registry, as a cluster admin does it: `make push` to an
// OCI registry on loopback (go-containerregistry's, in this process), then
// the image and the chart pulled back from it, checked, run and installed.

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

func TestPushAndInstallFromRegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://") // 127.0.0.1:port
	reg := host + "/e2e"
	meta := chartMetadata(t)
	version, chartVersion := valStr(meta, "appVersion"), valStr(meta, "version")
	dist := t.TempDir()

	// No unsigned push: without a key, make push stops before it pushes.
	make := exec.Command("make", "-C", "..", "push", "REGISTRY="+reg, "DIST="+dist, "HELM="+helmBin(t))
	make.Env = append(helmEnv(t), "COSIGN_KEY=")
	if out, err := make.CombinedOutput(); err == nil || !strings.Contains(string(out), "there is no unsigned push") {
		t.Fatalf("make push without COSIGN_KEY: %v\n%s; want it refused", err, out)
	}
	registryName, err := name.NewRegistry(host, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if repos, err := remote.Catalog(t.Context(), registryName); err != nil || len(repos) > 0 {
		t.Fatalf("make push without COSIGN_KEY: the registry holds %v (%v), want nothing", repos, err)
	}

	// The Makefile's own targets, as `make push REGISTRY=... COSIGN_KEY=...`
	// runs them, with a key pair made here; another one's public key must
	// verify nothing.
	cosign := releaseTools(t) + "/cosign"
	keys, otherKeys := t.TempDir(), t.TempDir()
	cosignKeyPair(t, cosign, keys, "e2e password")
	cosignKeyPair(t, cosign, otherKeys, "other password")
	start := time.Now()
	make = exec.Command("make", "-C", "..", "push", "REGISTRY="+reg, "DIST="+dist,
		"HELM="+helmBin(t), "HELM_PUSH_FLAGS=--plain-http", "COSIGN_KEY="+filepath.Join(keys, "cosign.key"), "COSIGN_FLAGS=--allow-http-registry")
	make.Env = append(helmEnv(t), "COSIGN_PASSWORD=e2e password")
	if out, err := make.CombinedOutput(); err != nil {
		t.Fatalf("make push: %v\n%s", err, out)
	}
	t.Logf("make push (image for 2 platforms, chart, both signed, the image's SBOM attested, the plugin's archives for 4, its krew manifest and their signed checksums): %s", time.Since(start).Round(time.Millisecond))
	built, err := os.ReadFile(filepath.Join(dist, "monocle-hook-"+version+".digest"))
	if err != nil {
		t.Fatal(err)
	}
	digest := strings.TrimSpace(string(built))

	// The image, by its tag: the index make image built, both platforms.
	ref, err := name.ParseReference(reg + "/monocle-hook:" + version)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := idx.Digest(); d.String() != digest {
		t.Errorf("pulled index %s, built %s", d, digest)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, m := range im.Manifests {
		platforms = append(platforms, m.Platform.String())
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Fatalf("index platforms %v, want linux/amd64 and linux/arm64", platforms)
	}

	commit := strings.TrimSpace(git(t, "rev-parse", "HEAD"))
	created, err := time.Parse(time.RFC3339, strings.TrimSpace(git(t, "log", "-1", "--format=%cI")))
	if err != nil {
		t.Fatal(err)
	}
	var binary []byte
	for _, m := range im.Manifests {
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/monocle-hook"}) || len(c.Cmd) != 0 {
			t.Errorf("%s: user %q entrypoint %q cmd %q; want 65532:65532 running /monocle-hook", m.Platform, c.User, c.Entrypoint, c.Cmd)
		}
		if cf.OS+"/"+cf.Architecture != m.Platform.String() || !cf.Created.Time.Equal(created) {
			t.Errorf("%s: config for %s/%s created %v; want the commit's time %v", m.Platform, cf.OS, cf.Architecture, cf.Created, created)
		}
		labels := c.Labels
		if labels["org.opencontainers.image.version"] != version ||
			!strings.HasPrefix(labels["org.opencontainers.image.revision"], commit) || // -dirty in a changed tree
			labels["org.opencontainers.image.licenses"] != "Apache-2.0" ||
			labels["org.opencontainers.image.source"] != "https://github.com/change-metrics/monocle-hook" ||
			labels["org.opencontainers.image.created"] != created.UTC().Format(time.RFC3339) {
			t.Errorf("%s: labels %v; want version %s, revision %s, Apache-2.0, the source, created %v", m.Platform, labels, version, commit, created)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		if len(layers) != 1 {
			t.Fatalf("%s: %d layers, want the binary's only", m.Platform, len(layers))
		}
		if m.Platform.Architecture == "amd64" {
			binary = layerFile(t, layers[0], "monocle-hook")
		}
	}

	// The amd64 binary, run from the layer: the version stamped in it.
	bin := filepath.Join(t.TempDir(), "monocle-hook")
	if err := os.WriteFile(bin, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	checkBinaryVersion(t, bin, version, commit)
	verifyAsDocumented(t, cosign, keys, otherKeys, reg, version, chartVersion, digest, binary)
	verifyPluginAsDocumented(t, cosign, keys, otherKeys, dist, version)

	// The chart, pulled back and installed on the real API server: its
	// default image is the one pushed, by tag and digest.
	pulled := t.TempDir()
	if _, err := runHelm(t, "pull", "oci://"+reg+"/charts/monocle-hook", "--version", chartVersion, "--plain-http", "-d", pulled); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(pulled, "monocle-hook-"+chartVersion+".tgz")
	ns := createNamespace(t, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	kubeconfig := adminKubeconfig(t, "helm-registry")
	t.Cleanup(func() { _, _ = runHelm(t, "uninstall", chartRelease, "-n", ns, "--kubeconfig", kubeconfig) })
	// Its own CompositeController name: the object is cluster-scoped. A
	// ServiceMonitor asked for where Prometheus Operator's API is not
	// served: left out, and the notes say so.
	out, err := runHelm(t, "install", chartRelease, chart, "-n", ns, "--kubeconfig", kubeconfig,
		"--set", "compositeController.name="+ns, "--set", "serviceMonitor.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "No ServiceMonitor was made") {
		t.Errorf("helm install's notes do not say the ServiceMonitor was left out:\n%s", out)
	}
	var dep appsv1.Deployment
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "monocle-hook"}, &dep); err != nil {
		t.Fatal(err)
	}
	if got, want := dep.Spec.Template.Spec.Containers[0].Image, reg+"/monocle-hook:"+version+"@"+digest; got != want {
		t.Errorf("the installed Deployment runs %s, want %s", got, want)
	}

	helmTestAsInstalled(t, ns, kubeconfig, bin)

	upgradeAsDocumented(t, reg, ns, kubeconfig, chartVersion, out)
	installAsDocumented(t, host, reg, chartVersion)
}

// installAsDocumented runs the README's Quickstart as printed, from what the
// registry holds alone (no path of a checkout): the registry, the
// namespaces and the version substituted, the CompositeController named
// for this test (it is cluster-scoped). Each command is run by the entry of
// printedEntries that runs the same command where the chart prints it
// (TestChartPrintedCommands), so both stay one. The installs of
// docs/install.md's steps 1 and 2 are the Quickstart's lines.
func installAsDocumented(t *testing.T, host, reg, chartVersion string) {
	t.Helper()
	commands := quickstartCommands(t)
	keys := map[string]bool{}
	for _, c := range commands {
		keys[printedKey(c, chartVersion)] = true
	}
	install, err := os.ReadFile("../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	var installs int
	for _, c := range markdownCommands(string(install)) {
		if key := printedKey(c.text, chartVersion); regexp.MustCompile(`^(V=|helm pull |helm install \S+ oci://)`).MatchString(key) {
			installs++
			if !keys[key] {
				t.Errorf("docs/install.md prints %q, which the Quickstart does not: they install alike", key)
			}
		}
	}
	if installs < 4 {
		t.Errorf("docs/install.md prints %d of the Quickstart's install lines, want V=, helm pull and both helm installs", installs)
	}

	admin := adminKubeconfig(t, "quickstart")
	r := &printedRun{host: host, ref: "oci://" + reg + "/charts/monocle-hook", version: chartVersion,
		ns: "e2e-quickstart-" + utilrand.String(5), kubeconfig: admin, dir: t.TempDir()}
	uninstallAtCleanup(t, chartRelease, r.ns, admin)
	// The NOTES the install must print: a dry run's, as
	// TestChartPrintedCommands reads them.
	out, err := runHelm(t, "install", chartRelease, r.ref, "--version", r.version, "--plain-http",
		"-n", "monocle-hook", "--kubeconfig", admin, "--dry-run=server")
	if err != nil {
		t.Fatal(err)
	}
	r.notes = notesCommands(t, out)
	// The Monocle goes where kubectl is: the release's namespace.
	if out, err := r.sh(t, "", "kubectl config set-context --current --namespace="+r.ns); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r.d = newDriver(t, r.ns)

	entries := printedEntries()
	for _, c := range commands {
		key := printedKey(c, r.version)
		if v, ok := strings.CutPrefix(key, "V="); ok {
			if v != r.version {
				t.Errorf("the Quickstart sets V=%s; the chart's version is %s", v, r.version)
			}
			continue
		}
		if strings.Contains(c, "chart/") || strings.Contains(c, "examples/") {
			t.Errorf("the Quickstart's %q reads a checkout's file", c)
		}
		i := slices.IndexFunc(entries, func(e printedEntry) bool { return e.command == key && e.run != nil })
		if i < 0 {
			t.Fatalf("the Quickstart's %q: no entry of printedEntries runs it", key)
		}
		if !t.Run("quickstart "+key, func(t *testing.T) { entries[i].run(t, r, c) }) {
			break
		}
	}
}

// quickstartCommands are the commands of the README's Quickstart, in
// order: its sh block's lines, continued lines joined, a heredoc with its
// lines.
func quickstartCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Quickstart\n")
	_, block, ok2 := strings.Cut(section, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no Quickstart with a sh block")
	}
	var commands []string
	lines := strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.Contains(line, "<<'EOF'") {
			for i++; i < len(lines); i++ {
				line += "\n" + lines[i]
				if lines[i] == "EOF" {
					break
				}
			}
		}
		commands = append(commands, line)
	}
	if len(commands) < 8 {
		t.Fatalf("the README's Quickstart: %d commands\n%s", len(commands), strings.Join(commands, "\n"))
	}
	return commands
}

// upgradeAsDocumented pushes a next version of the chart whose CRD differs,
// as a new version's would, and runs docs/upgrade.md's upgrade lines as written
// (the registry, version and namespace replaced): the CRD first, then the
// chart. The CRD's fields belong to the manager that created it (as Helm's
// plain create leaves them): without --force-conflicts the apply is
// refused; with it the CRD changes and a Monocle stored before is not
// written.
func upgradeAsDocumented(t *testing.T, reg, ns, kubeconfig, chartVersion, notes string) {
	t.Helper()
	lines := readmeUpgrade(t)
	// The install's notes print the same CRD command, with V for $V.
	var notesCRD string
	for l := range strings.Lines(notes) {
		if strings.HasPrefix(strings.TrimSpace(l), "helm show crds") {
			notesCRD = strings.ReplaceAll(strings.TrimSpace(l), "--version V ", "--version $V ")
		}
	}
	if readmeCRD, _, _ := strings.Cut(lines[1], "#"); notesCRD != strings.Join(strings.Fields(readmeCRD), " ") {
		t.Errorf("the notes' CRD command\n%s\nis not docs/upgrade.md's\n%s", notesCRD, readmeCRD)
	}
	ctx := context.Background()
	major, patch, _ := strings.Cut(chartVersion, ".")
	minor, patch, _ := strings.Cut(patch, ".")
	p, err := strconv.Atoi(patch)
	if err != nil {
		t.Fatalf("chart version %s: %v", chartVersion, err)
	}
	next := fmt.Sprintf("%s.%s.%d", major, minor, p+1)
	chart := filepath.Join(t.TempDir(), "monocle-hook")
	if out, err := exec.Command("cp", "-r", chartDir, chart).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	meta, err := os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	meta = []byte(strings.Replace(string(meta), "\nversion: "+chartVersion+"\n", "\nversion: "+next+"\n", 1))
	if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	crdPath := filepath.Join(chart, "crds", "monocle.yaml")
	b, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &crd.Object); err != nil {
		t.Fatal(err)
	}
	const description = "a new version's description"
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err := unstructured.SetNestedField(versions[0].(map[string]any), description, "schema", "openAPIV3Schema", "properties", "spec", "description"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if b, err = yaml.Marshal(crd.Object); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crdPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := runHelm(t, "package", chart, "-d", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := runHelm(t, "push", filepath.Join(dir, "monocle-hook-"+next+".tgz"), "oci://"+reg+"/charts", "--plain-http"); err != nil {
		t.Fatal(err)
	}

	m := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monocle.monocle.change-metrics.io/v1alpha1", "kind": "Monocle",
		"metadata": map[string]any{"name": "before-upgrade", "namespace": ns},
		"spec":     map[string]any{},
	}}
	if err := k8sClient.Create(ctx, m); err != nil {
		t.Fatal(err)
	}

	for i, line := range lines {
		line = strings.ReplaceAll(line, "oci://ghcr.io/change-metrics/charts/monocle-hook", "oci://"+reg+"/charts/monocle-hook")
		line = strings.ReplaceAll(line, "-n monocle-hook", "-n "+ns)
		line = strings.ReplaceAll(line, "helm show crds ", "helm show crds --plain-http ")
		line = strings.ReplaceAll(line, "helm upgrade ", "helm upgrade --plain-http ")
		if v, ok := strings.CutPrefix(line, "V="); ok {
			line = "V=" + next + strings.TrimLeft(v, "0123456789.")
		}
		lines[i] = line
	}
	script := strings.Join(lines, "\n")
	if !strings.Contains(script, "--force-conflicts") {
		t.Fatalf("docs/upgrade.md's upgrade applies the CRD without --force-conflicts:\n%s", script)
	}
	env := append(helmEnv(t), "KUBECONFIG="+kubeconfig, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
	run := func(script string) (string, error) {
		cmd := exec.Command("sh", "-ec", script)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Without --force-conflicts: refused, the reason docs/upgrade.md gives.
	crdLine := lines[1] // V=..., then the CRD's pipe
	if out, err := run(lines[0] + "\n" + strings.ReplaceAll(crdLine, " --force-conflicts", "")); err == nil || !strings.Contains(out, "conflict") {
		t.Errorf("the CRD applied without --force-conflicts (%v):\n%s", err, out)
	}
	if out, err := run(script); err != nil {
		t.Fatalf("docs/upgrade.md's upgrade: %v\n%s\n%s", err, script, out)
	}

	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: crd.GetName()}, stored); err != nil {
		t.Fatal(err)
	}
	storedVersions, _, _ := unstructured.NestedSlice(stored.Object, "spec", "versions")
	if got, _, _ := unstructured.NestedString(storedVersions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "description"); got != description {
		t.Errorf("the stored CRD's spec description is %q, want the new version's", got)
	}
	after := &unstructured.Unstructured{}
	after.SetGroupVersionKind(m.GroupVersionKind())
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(m), after); err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != m.GetResourceVersion() {
		t.Errorf("the upgrade wrote the Monocle: resourceVersion %s, then %s", m.GetResourceVersion(), after.GetResourceVersion())
	}
	var dep appsv1.Deployment
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "monocle-hook"}, &dep); err != nil {
		t.Fatal(err)
	}
	if got := dep.Labels["helm.sh/chart"]; got != "monocle-hook-"+next {
		t.Errorf("after the upgrade the hook's Deployment is of chart %s, want monocle-hook-%s", got, next)
	}
}

// readmeUpgrade is docs/upgrade.md's upgrade block, its continued lines joined.
func readmeUpgrade(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/upgrade.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```sh\nV=")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/upgrade.md has no upgrade block starting with V=")
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(strings.ReplaceAll("V="+block, "\\\n", " ")), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	if len(lines) != 3 {
		t.Fatalf("docs/upgrade.md's upgrade block: %d lines, want V=, the CRD and the chart:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	return lines
}

// checkBinaryVersion runs the binary: --version prints the version and the
// commit, and the served /metrics says the version too.
func checkBinaryVersion(t *testing.T, bin, version, commit string) {
	t.Helper()
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Errorf("monocle-hook --version: %v\n%s", err, out)
	} else if !strings.Contains(string(out), version) || !strings.Contains(string(out), commit[:12]) {
		t.Errorf("monocle-hook --version printed %q; want the version %s and the commit %s", out, version, commit)
	}

	// Serving: monocle_hook_build_info{version="..."} on /metrics.
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	var addr string
	lines := bufio.NewScanner(stderr)
	for addr == "" && lines.Scan() {
		var entry struct{ Msg, Address string }
		if json.Unmarshal(lines.Bytes(), &entry) == nil && entry.Msg == "serving" {
			addr = entry.Address
		}
	}
	if addr == "" {
		t.Fatalf("the binary never logged its address: %v", lines.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`version="%s"`, version); !strings.Contains(string(body), want) {
		t.Errorf("/metrics of the image's binary has no build_info with %s", want)
	}
}

// layerFile is the content of one file of a layer.
func layerFile(t *testing.T, layer interface{ Uncompressed() (io.ReadCloser, error) }, path string) []byte {
	t.Helper()
	rc, err := layer.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("the layer has no %s", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == path {
			if h.Mode&0o111 == 0 || h.Uid != 0 {
				t.Errorf("%s: mode %o owner %d; want executable, owned by root", path, h.Mode, h.Uid)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", ".."}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
