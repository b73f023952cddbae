package e2e

// kubectl-monocle installed with krew, as a user does it from a release's
// files: the manifest and the archives `make plugin-archives` writes,
// served on loopback, downloaded and installed with the commands
// docs/support.md prints, offline.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The release's files live under this URL; the docs' downloads and the
// manifest's uris name it.
const releaseDownloads = "https://github.com/change-metrics/monocle-hook/releases/download/"

// krewManifest is the part of krew's Plugin (sigs.k8s.io/krew/pkg/index)
// that the test reads.
type krewManifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

func TestKrewInstallAsDocumented(t *testing.T) {
	version := valStr(chartMetadata(t), "appVersion")
	platforms := []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}
	archive := func(goos, goarch string) string {
		return "kubectl-monocle_" + version + "_" + goos + "_" + goarch + ".tar.gz"
	}

	// make plugin-archives twice, into two folders: the same bytes.
	dist, again := t.TempDir(), t.TempDir()
	for _, d := range []string{dist, again} {
		start := time.Now()
		if out, err := exec.Command("make", "-C", "..", "plugin-archives", "DIST="+d).CombinedOutput(); err != nil {
			t.Fatalf("make plugin-archives: %v\n%s", err, out)
		}
		t.Logf("make plugin-archives DIST=%s: %s", d, time.Since(start).Round(time.Millisecond))
	}
	want := []string{"kubectl-monocle_" + version + "_checksums.txt", "monocle.yaml"}
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		want = append(want, archive(goos, goarch))
	}
	slices.Sort(want)
	files := map[string][]byte{}
	for _, name := range want {
		a, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(again, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("make plugin-archives wrote %s twice with different bytes", name)
		}
		files[name] = a
	}
	var got []string
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			got = append(got, e.Name())
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("make plugin-archives wrote %v, want %v", got, want)
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

	// The checksums: every archive and the manifest, nothing else.
	sums := map[string]string{}
	lines := bufio.NewScanner(bytes.NewReader(files["kubectl-monocle_"+version+"_checksums.txt"]))
	for lines.Scan() {
		s, name, ok := strings.Cut(lines.Text(), "  ")
		if !ok {
			t.Fatalf("checksums: line %q is not sha256sum's", lines.Text())
		}
		sums[name] = s
	}
	for _, name := range want {
		if strings.HasSuffix(name, "_checksums.txt") {
			continue
		}
		if sums[name] != sum(files[name]) {
			t.Errorf("checksums: %s is %q, its SHA-256 is %s", name, sums[name], sum(files[name]))
		}
		delete(sums, name)
	}
	if len(sums) > 0 {
		t.Errorf("checksums of files make did not write: %v", sums)
	}

	// The manifest: plugin monocle at vVERSION, one platform per os/arch,
	// each its archive's SHA-256 and its URL on the release, the binary and
	// the LICENSE from the archive's folder.
	var m krewManifest
	if err := yaml.UnmarshalStrict(files["monocle.yaml"], &m); err != nil {
		t.Fatalf("monocle.yaml: %v", err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "monocle" ||
		m.Spec.Version != "v"+version || m.Spec.Homepage != "https://github.com/change-metrics/monocle-hook" || m.Spec.ShortDescription == "" {
		t.Errorf("monocle.yaml: %s %s %s %s, homepage %q, short description %q; want krew's v1alpha2 Plugin monocle v%s, this project's homepage",
			m.APIVersion, m.Kind, m.Metadata.Name, m.Spec.Version, m.Spec.Homepage, m.Spec.ShortDescription, version)
	}
	var manifestPlatforms []string
	uris := map[string]string{}
	for _, p := range m.Spec.Platforms {
		goos, goarch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		manifestPlatforms = append(manifestPlatforms, goos+"/"+goarch)
		uris[goos+"/"+goarch] = p.URI
		name := archive(goos, goarch)
		folder := strings.TrimSuffix(name, ".tar.gz")
		if len(p.Selector.MatchLabels) != 2 || p.URI != releaseDownloads+"v"+version+"/"+name || p.Sha256 != sum(files[name]) || p.Bin != "kubectl-monocle" ||
			len(p.Files) != 2 || p.Files[0].From != folder+"/kubectl-monocle" || p.Files[1].From != folder+"/LICENSE" || p.Files[0].To != "." || p.Files[1].To != "." {
			t.Errorf("monocle.yaml, platform %s/%s: %+v; want %s%s, its SHA-256 %s, bin kubectl-monocle from %s with the LICENSE",
				goos, goarch, p, releaseDownloads+"v"+version+"/", name, sum(files[name]), folder)
		}
	}
	if !slices.Equal(manifestPlatforms, platforms) {
		t.Errorf("monocle.yaml's platforms %v, want %v", manifestPlatforms, platforms)
	}

	// krew's own check of a plugin manifest, validate-krew-manifest (krew's
	// validation as krew install runs it, with the file named after the
	// plugin and no two platforms selecting the same os/arch): accepted;
	// with a version that is not vSEMVER, or a platform twice, refused.
	tools := krewTools(t)
	validate := func(manifest []byte) (string, error) {
		path := filepath.Join(t.TempDir(), "monocle.yaml")
		if err := os.WriteFile(path, manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(filepath.Join(tools, "validate-krew-manifest"), "-manifest", path, "-skip-install").CombinedOutput()
		return string(out), err
	}
	if out, err := validate(files["monocle.yaml"]); err != nil {
		t.Fatalf("validate-krew-manifest refused monocle.yaml: %v\n%s", err, out)
	}
	noV := bytes.Replace(files["monocle.yaml"], []byte("\n  version: v"+version+"\n"), []byte("\n  version: "+version+"\n"), 1)
	if out, err := validate(noV); err == nil || !strings.Contains(out, "failed to parse plugin version") {
		t.Errorf("validate-krew-manifest, version %s without its v: %v\n%s; want it refused", version, err, out)
	}
	twice := bytes.Replace(files["monocle.yaml"], []byte("os: darwin\n        arch: amd64"), []byte("os: darwin\n        arch: arm64"), 1)
	if out, err := validate(twice); err == nil || !strings.Contains(out, "overlapping") {
		t.Errorf("validate-krew-manifest, darwin/arm64 twice: %v\n%s; want it refused", err, out)
	}

	// The release's files on loopback, as the docs' downloads fetch them;
	// any other address goes to a proxy that answers nothing and counts.
	var mu sync.Mutex
	var served, proxied []string
	release := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.URL.Path)
		mu.Unlock()
		http.StripPrefix("/releases/download/v"+version+"/", http.FileServer(http.Dir(dist))).ServeHTTP(w, r)
	}))
	t.Cleanup(release.Close)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		proxied = append(proxied, r.Method+" "+r.Host)
		mu.Unlock()
		http.Error(w, "no network in this test", http.StatusForbidden)
	}))
	t.Cleanup(proxy.Close)
	seen := func() (s, p []string) {
		mu.Lock()
		defer mu.Unlock()
		s, p = served, proxied
		served, proxied = nil, nil
		return s, p
	}

	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("no kubectl in KUBEBUILDER_ASSETS: %v", err)
	}
	home := t.TempDir()
	// env is a user's with krew set up (its bin on PATH) in krewRoot.
	env := func(krewRoot string, extra ...string) []string {
		return append([]string{
			"HOME=" + home,
			"PATH=" + filepath.Join(krewRoot, "bin") + ":" + tools + ":" + os.Getenv("KUBEBUILDER_ASSETS") + ":" + os.Getenv("PATH"),
			"KREW_ROOT=" + krewRoot,
			"KREW_NO_UPGRADE_CHECK=1",
			"HTTPS_PROXY=" + proxy.URL, "HTTP_PROXY=" + proxy.URL, "https_proxy=" + proxy.URL, "http_proxy=" + proxy.URL,
			"NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1",
		}, extra...)
	}
	run := func(dir string, env []string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// The proxy sees what goes out: krew asked for a manifest by URL gets
	// nothing, and the proxy counts the attempt.
	if out, err := run(dist, env(t.TempDir()), kubectl, "krew", "install", "--manifest-url="+uris["linux/amd64"]); err == nil {
		t.Errorf("kubectl krew install --manifest-url through the proxy: %v\n%s; want it failed", err, out)
	}
	if _, p := seen(); len(p) == 0 || !strings.Contains(p[0], "github.com") {
		t.Fatalf("krew's download of %s reached the proxy as %q; want it counted there", uris["linux/amd64"], p)
	}

	// Each platform's archive, installed as krew on that platform would
	// (KREW_OS, KREW_ARCH): the binary for that os and arch, and the
	// LICENSE, in krew's store, nothing fetched.
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		root := t.TempDir()
		out, err := run(dist, env(root, "KREW_OS="+goos, "KREW_ARCH="+goarch), kubectl, "krew", "install",
			"--manifest=monocle.yaml", "--archive="+archive(goos, goarch))
		if err != nil {
			t.Errorf("kubectl krew install for %s: %v\n%s", p, err, out)
			continue
		}
		store := filepath.Join(root, "store", "monocle", "v"+version)
		if _, err := os.Stat(filepath.Join(store, "LICENSE")); err != nil {
			t.Errorf("krew install for %s: no LICENSE in the store: %v", p, err)
		}
		if got := binaryPlatform(t, filepath.Join(store, "kubectl-monocle")); got != p {
			t.Errorf("krew install for %s installed a binary for %s", p, got)
		}
	}
	if _, p := seen(); len(p) > 0 {
		t.Errorf("krew install --archive went to the network: %q", p)
	}

	// A manifest whose SHA-256 for this platform is another archive's:
	// krew refuses to install, and installs nothing.
	host := archive(runtime.GOOS, runtime.GOARCH)
	other := archive("darwin", "arm64")
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		other = archive("linux", "amd64")
	}
	wrong := bytes.Replace(files["monocle.yaml"], []byte("sha256: "+sum(files[host])), []byte("sha256: "+sum(files[other])), 1)
	if bytes.Equal(wrong, files["monocle.yaml"]) {
		t.Fatalf("monocle.yaml has no sha256 %s for %s", sum(files[host]), host)
	}
	wrongDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(wrongDir, "monocle.yaml"), wrong, 0o644); err != nil {
		t.Fatal(err)
	}
	wrongRoot := t.TempDir()
	if out, err := run(wrongDir, env(wrongRoot), kubectl, "krew", "install", "--manifest=monocle.yaml", "--archive="+filepath.Join(dist, host)); err == nil ||
		!strings.Contains(out, "checksum does not match") {
		t.Errorf("kubectl krew install of a manifest with another archive's sha256: %v\n%s; want it refused", err, out)
	}
	if entries, _ := os.ReadDir(filepath.Join(wrongRoot, "bin")); len(entries) > 0 {
		t.Errorf("the refused install left %v in krew's bin", entries)
	}

	// The docs' commands as printed: the release and this platform, the
	// downloads from loopback; between them, the checksums' check the docs
	// print above (the signature's is run by TestPushAndInstallFromRegistry).
	download, install := docsKrewBlocks(t)
	first := "V=" + version + " OS=linux ARCH=amd64 "
	if !strings.HasPrefix(download[0], first) {
		t.Fatalf("docs/support.md's krew downloads start with %q, want %q...", download[0], first)
	}
	download[0] = fmt.Sprintf("V=%s OS=%s ARCH=%s", version, runtime.GOOS, runtime.GOARCH)
	for i, l := range download[1:] {
		if !strings.Contains(l, releaseDownloads) {
			t.Fatalf("docs/support.md's krew download %q is not from %s", l, releaseDownloads)
		}
		download[i+1] = strings.ReplaceAll(l, releaseDownloads, release.URL+"/releases/download/")
	}
	work, root := t.TempDir(), t.TempDir()
	script := func(lines []string) string { return strings.Join(append([]string{download[0]}, lines...), "\n") }
	if out, err := run(work, env(root), "sh", "-ec", script(download[1:])); err != nil {
		t.Fatalf("docs/support.md's krew downloads: %v\n%s\n%s", err, script(download[1:]), out)
	}
	s, _ := seen()
	hostURI := "/releases/download/" + strings.TrimPrefix(uris[runtime.GOOS+"/"+runtime.GOARCH], releaseDownloads)
	if wantServed := []string{"/releases/download/v" + version + "/monocle.yaml", hostURI}; !slices.Equal(s, wantServed) {
		t.Errorf("the docs' downloads fetched %v, want %v (the manifest's uri for %s/%s)", s, wantServed, runtime.GOOS, runtime.GOARCH)
	}
	if err := os.WriteFile(filepath.Join(work, "kubectl-monocle_"+version+"_checksums.txt"), files["kubectl-monocle_"+version+"_checksums.txt"], 0o644); err != nil {
		t.Fatal(err)
	}
	check := docsPluginVerifyCommands(t, version)[1]
	if out, err := run(work, env(root), "sh", "-ec", check); err != nil ||
		!strings.Contains(out, "monocle.yaml: OK") || !strings.Contains(out, host+": OK") {
		t.Errorf("%s on the docs' downloads: %v\n%s; want monocle.yaml and %s OK", check, err, out, host)
	}
	start := time.Now()
	out, err := run(work, env(root), "sh", "-ec", script(install))
	if err != nil {
		t.Fatalf("docs/support.md's krew install: %v\n%s\n%s", err, script(install), out)
	}
	t.Logf("as docs/support.md prints it (%s):\n%s\n%s", time.Since(start).Round(time.Millisecond), script(install), out)
	if !strings.Contains(out, "Installed plugin: monocle") || !strings.Contains(out, "kubectl monocle: how a Monocle is doing") {
		t.Errorf("docs/support.md's krew install printed no install of monocle, or no kubectl monocle --help:\n%s", out)
	}
	if _, p := seen(); len(p) > 0 {
		t.Errorf("the docs' krew install went to the network: %q", p)
	}
	link := filepath.Join(root, "bin", "kubectl-monocle")
	if target, err := os.Readlink(link); err != nil || target != filepath.Join(root, "store", "monocle", "v"+version, "kubectl-monocle") {
		t.Errorf("krew's %s links to %q (%v), want the store's v%s", link, target, err, version)
	}
	// The link krew made, run as kubectl runs it: the binary answers.
	if out, err := run(work, env(root), link, "--help"); err != nil || !strings.HasPrefix(out, "kubectl monocle: ") {
		t.Errorf("%s --help: %v\n%s", link, err, out)
	}
}

// docsKrewBlocks are the two blocks of docs/support.md's krew install: the
// downloads (V=... first) and the install.
func docsKrewBlocks(t *testing.T) (download, install []string) {
	t.Helper()
	b, err := os.ReadFile("../docs/support.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "### Install kubectl monocle with krew\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks [][]string
	for {
		var block string
		var found bool
		if _, section, found = strings.Cut(section, "```sh\n"); !found {
			break
		}
		block, section, _ = strings.Cut(section, "```")
		var lines []string
		for l := range strings.Lines(block) {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		blocks = append(blocks, lines)
	}
	if !ok || len(blocks) != 2 || len(blocks[0]) < 3 || len(blocks[1]) != 2 ||
		!strings.HasPrefix(blocks[1][0], "kubectl krew install --manifest=") || blocks[1][1] != "kubectl monocle --help" {
		t.Fatalf("docs/support.md's krew install: %q; want the downloads (V=, then curl), then kubectl krew install --manifest=... and kubectl monocle --help", blocks)
	}
	return blocks[0], blocks[1]
}

// binaryPlatform is the os/arch an executable was built for.
func binaryPlatform(t *testing.T, path string) string {
	t.Helper()
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		switch f.Machine {
		case elf.EM_X86_64:
			return "linux/amd64"
		case elf.EM_AARCH64:
			return "linux/arm64"
		}
		return "linux/" + f.Machine.String()
	}
	f, err := macho.Open(path)
	if err != nil {
		t.Fatalf("%s is neither ELF nor Mach-O: %v", path, err)
	}
	defer f.Close()
	switch f.Cpu {
	case macho.CpuAmd64:
		return "darwin/amd64"
	case macho.CpuArm64:
		return "darwin/arm64"
	}
	return "darwin/" + f.Cpu.String()
}
