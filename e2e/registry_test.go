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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestPushAndInstallFromRegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://") // 127.0.0.1:port
	reg := host + "/e2e"
	meta := chartMetadata(t)
	version, chartVersion := valStr(meta, "appVersion"), valStr(meta, "version")
	dist := t.TempDir()

	// The Makefile's own targets, as `make push REGISTRY=...` runs them.
	start := time.Now()
	make := exec.Command("make", "-C", "..", "push", "REGISTRY="+reg, "DIST="+dist,
		"HELM="+helmBin(t), "HELM_PUSH_FLAGS=--plain-http")
	make.Env = helmEnv(t)
	if out, err := make.CombinedOutput(); err != nil {
		t.Fatalf("make push: %v\n%s", err, out)
	}
	t.Logf("make push (image for 2 platforms, chart): %s", time.Since(start).Round(time.Millisecond))
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
}

// checkBinaryVersion runs the binary: --version prints the version and the
// commit, and the served /metrics says the version too.
func checkBinaryVersion(t *testing.T, bin, version, commit string) {
	t.Helper()
	out, err := exec.Command(bin, "--version").CombinedOutput()
	switch {
	case err == nil:
		if !strings.Contains(string(out), version) || !strings.Contains(string(out), commit[:12]) {
			t.Errorf("monocle-hook --version printed %q; want the version %s and the commit %s", out, version, commit)
		}
	case strings.Contains(string(out), "flag provided but not defined: -version"):
		// The flag comes with issue 8's change to main.go; until it is
		// merged, the served metrics below are the check.
		t.Log("this monocle-hook has no --version flag yet: its version is checked on /metrics only")
	default:
		t.Errorf("monocle-hook --version: %v\n%s", err, out)
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
