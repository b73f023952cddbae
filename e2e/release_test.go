package e2e

// What a platform team checks before adopting a release, on the release
// TestPushAndInstallFromRegistry pushes: every signature and the SBOM,
// verified with the commands docs/support.md prints, and the chart's helm
// test, created by Helm in a restricted namespace and its command run from
// the host.

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cosignKeyPair makes a key pair in dir (cosign.key, cosign.pub), its
// private key encrypted with password.
func cosignKeyPair(t *testing.T, cosign, dir, password string) {
	t.Helper()
	cmd := exec.Command(cosign, "generate-key-pair")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD="+password)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
	}
}

// docsVerifyCommands are the verify commands of docs/support.md, as printed.
func docsVerifyCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/support.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "## Verifying a release")
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var commands []string
	for l := range strings.Lines(block) {
		if l = strings.TrimSpace(l); l != "" {
			commands = append(commands, l)
		}
	}
	if len(commands) != 3 {
		t.Fatalf("docs/support.md prints %d verify commands, want the image's, the chart's and the SBOM's:\n%s", len(commands), block)
	}
	return commands
}

// verifyAsDocumented runs the docs' verify commands against the release
// pushed to reg, in a folder holding the key's cosign.pub: each verifies
// the digest pushed, the SBOM names every module linked into the image's
// binary, and the same commands with another key fail.
func verifyAsDocumented(t *testing.T, cosign, keys, otherKeys, reg, version, chartVersion, imageDigest string, binary []byte) {
	t.Helper()
	chartRef, err := name.ParseReference(reg + "/charts/monocle-hook:" + chartVersion)
	if err != nil {
		t.Fatal(err)
	}
	chartDesc, err := remote.Head(chartRef)
	if err != nil {
		t.Fatal(err)
	}
	run := func(dir, command string) (string, error) {
		// The registry is ours on loopback, over plain HTTP: cosign must be
		// told so; nothing else changes.
		line := strings.ReplaceAll(command, "ghcr.io/change-metrics", reg)
		args := strings.Fields(line)
		if args[0] != "cosign" {
			t.Fatalf("docs/support.md prints %q, not a cosign command", command)
		}
		cmd := exec.Command(cosign, slices.Insert(args[1:], 1, "--allow-http-registry")...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			err = &commandError{line, err, stderr.String()}
		}
		return stdout.String(), err
	}
	commands := docsVerifyCommands(t)
	for i, command := range commands {
		out, err := run(keys, command)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.Contains(command, "verify-attestation"):
			checkSBOMAttestation(t, out, imageDigest, version, binary)
		default:
			want := imageDigest
			if strings.Contains(command, "/charts/") {
				want = chartDesc.Digest.String()
			}
			var payloads []struct {
				Critical struct {
					Image struct {
						Digest string `json:"docker-manifest-digest"`
					} `json:"image"`
				} `json:"critical"`
			}
			if err := json.Unmarshal([]byte(out), &payloads); err != nil || len(payloads) == 0 {
				t.Fatalf("%s printed %q (%v); want the verified signatures' payloads", command, out, err)
			}
			for _, p := range payloads {
				if p.Critical.Image.Digest != want {
					t.Errorf("%s: a signature of %s, want %s", command, p.Critical.Image.Digest, want)
				}
			}
		}
		t.Logf("verified as docs/support.md prints it (%d of %d): %s", i+1, len(commands), command)
		// Another key pair's public key: refused.
		if out, err := run(otherKeys, command); err == nil {
			t.Errorf("%s verified with another key:\n%s", command, out)
		}
	}
}

type commandError struct {
	line   string
	err    error
	stderr string
}

func (e *commandError) Error() string { return e.line + ": " + e.err.Error() + "\n" + e.stderr }

// checkSBOMAttestation: an in-toto statement about the image's index whose
// predicate is a CycloneDX SBOM of the hook, listing every module in the
// binary's build info at its version, and the Go it was built with.
func checkSBOMAttestation(t *testing.T, out, imageDigest, version string, binary []byte) {
	t.Helper()
	info, err := buildinfo.Read(bytes.NewReader(binary))
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(strings.NewReader(out))
	lines.Buffer(nil, 16<<20)
	n := 0
	for lines.Scan() {
		var envelope struct{ PayloadType, Payload string }
		if err := json.Unmarshal(lines.Bytes(), &envelope); err != nil {
			t.Fatalf("verify-attestation printed %q: %v", lines.Text(), err)
		}
		payload, err := base64.StdEncoding.DecodeString(envelope.Payload)
		if err != nil {
			t.Fatal(err)
		}
		var statement struct {
			PredicateType string `json:"predicateType"`
			Subject       []struct {
				Digest map[string]string `json:"digest"`
			} `json:"subject"`
			Predicate struct {
				BOMFormat string `json:"bomFormat"`
				Metadata  struct {
					Component struct{ Name, Version string } `json:"component"`
				} `json:"metadata"`
				Components []struct{ Name, Version string } `json:"components"`
			} `json:"predicate"`
		}
		if err := json.Unmarshal(payload, &statement); err != nil {
			t.Fatal(err)
		}
		n++
		if envelope.PayloadType != "application/vnd.in-toto+json" || statement.PredicateType != "https://cyclonedx.org/bom" ||
			len(statement.Subject) != 1 || "sha256:"+statement.Subject[0].Digest["sha256"] != imageDigest {
			t.Errorf("attestation %s %s about %+v; want a CycloneDX in-toto statement about %s", envelope.PayloadType, statement.PredicateType, statement.Subject, imageDigest)
		}
		sbom := statement.Predicate
		if sbom.BOMFormat != "CycloneDX" || sbom.Metadata.Component.Name != info.Main.Path || sbom.Metadata.Component.Version != "v"+version {
			t.Errorf("SBOM %s of %s %s; want CycloneDX, of %s v%s", sbom.BOMFormat, sbom.Metadata.Component.Name, sbom.Metadata.Component.Version, info.Main.Path, version)
		}
		var got []string
		for _, c := range sbom.Components {
			got = append(got, c.Name+"@"+c.Version)
		}
		want := []string{"std@" + info.GoVersion}
		for _, d := range info.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			want = append(want, d.Path+"@"+d.Version)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("the SBOM's components\n%v\nare not the binary's modules\n%v", got, want)
		}
		t.Logf("SBOM: %d components, the binary's %d modules and Go %s", len(got), len(info.Deps), info.GoVersion)
	}
	if n != 1 {
		t.Errorf("%d SBOM attestations verified, want 1", n)
	}
}

// helmTestAsInstalled runs `helm test` on the release: Helm creates its Pod
// in the restricted namespace (the API server admits it; no kubelet runs it
// here, so the test times out Pending), then the image's binary runs with
// that Pod's arguments from the host, against a hook serving on loopback.
// The Pod's URL names the in-cluster Service: HTTP_PROXY sends it to the
// hook, arguments unchanged (Go's server routes a proxied request by its
// path).
func helmTestAsInstalled(t *testing.T, ns, kubeconfig, bin string) {
	t.Helper()
	out, err := runHelm(t, "test", chartRelease, "-n", ns, "--kubeconfig", kubeconfig, "--timeout", "5s")
	if err == nil || !strings.Contains(err.Error(), "timed out waiting for the condition") {
		t.Fatalf("helm test with no kubelet: %v\n%s; want it to time out waiting for its Pod", err, out)
	}
	var pod corev1.Pod
	if err := k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "monocle-hook-test"}, &pod); err != nil {
		t.Fatalf("helm test created no Pod monocle-hook-test: %v", err)
	}
	if pod.Annotations["helm.sh/hook"] != "test" || pod.Status.Phase != corev1.PodPending {
		t.Errorf("the helm test Pod: annotations %v, phase %s; want a test hook, Pending", pod.Annotations, pod.Status.Phase)
	}
	args := pod.Spec.Containers[0].Args

	hook := exec.Command(bin, "--listen", "127.0.0.1:0")
	stderr, err := hook.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = hook.Process.Kill()
		_ = hook.Wait()
	}()
	var addr string
	logs := bufio.NewScanner(stderr)
	for addr == "" && logs.Scan() {
		var entry struct{ Msg, Address string }
		if json.Unmarshal(logs.Bytes(), &entry) == nil && entry.Msg == "serving" {
			addr = entry.Address
		}
	}
	if addr == "" {
		t.Fatalf("the hook never logged its address: %v", logs.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HTTP_PROXY=http://"+addr, "HTTPS_PROXY=", "NO_PROXY=", "http_proxy=", "https_proxy=", "no_proxy=")
	got, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(got), "answered the recorded sync") {
		t.Fatalf("monocle-hook %s (the helm test Pod's arguments): %v\n%s", strings.Join(args, " "), err, got)
	}
	t.Logf("monocle-hook %s, from the host: %s", strings.Join(args, " "), strings.TrimSpace(string(got)))
}

// verifyPluginAsDocumented runs the docs' commands that verify the
// plugin's archives, as printed, in dist (what make push wrote), with the
// key's cosign.pub beside them; the signature check with another key fails,
// and so does the checksums' check of an archive changed by one byte.
func verifyPluginAsDocumented(t *testing.T, cosign, keys, otherKeys, dist, version string) {
	t.Helper()
	commands := docsPluginVerifyCommands(t, version)
	run := func(keyDir, command string) (string, error) {
		pub, err := os.ReadFile(filepath.Join(keyDir, "cosign.pub"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dist, "cosign.pub"), pub, 0o644); err != nil {
			t.Fatal(err)
		}
		args := strings.Fields(command)
		if args[0] == "cosign" {
			args[0] = cosign
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dist
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, command := range commands {
		out, err := run(keys, command)
		if err != nil {
			t.Fatalf("%s: %v\n%s", command, err, out)
		}
		t.Logf("as docs/support.md prints it: %s\n%s", command, out)
		// The signed checksums cover krew's manifest too.
		if strings.HasPrefix(command, "sha256sum ") && !strings.Contains(out, "monocle.yaml: OK") {
			t.Errorf("%s checked no monocle.yaml:\n%s", command, out)
		}
	}
	if out, err := run(otherKeys, commands[0]); err == nil {
		t.Errorf("%s verified with another key:\n%s", commands[0], out)
	}
	archives, _ := filepath.Glob(filepath.Join(dist, "kubectl-monocle_"+version+"_*.tar.gz"))
	if len(archives) != 4 {
		t.Fatalf("archives %v, want one per platform of the plugin (linux and darwin, amd64 and arm64)", archives)
	}
	a, err := os.ReadFile(archives[0])
	if err != nil {
		t.Fatal(err)
	}
	a[len(a)/2] ^= 1
	if err := os.WriteFile(archives[0], a, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(keys, commands[1]); err == nil {
		t.Errorf("%s passed a changed archive:\n%s", commands[1], out)
	}
}

// docsPluginVerifyCommands are docs/support.md's commands that verify the
// plugin's archives and manifest, as printed (for the chart's appVersion),
// for version.
func docsPluginVerifyCommands(t *testing.T, version string) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/support.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "The kubectl plugin's archives")
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	printed := valStr(chartMetadata(t), "appVersion")
	var commands []string
	for l := range strings.Lines(block) {
		if l = strings.TrimSpace(l); l != "" {
			commands = append(commands, strings.ReplaceAll(l, printed, version))
		}
	}
	if len(commands) != 2 || !strings.HasPrefix(commands[0], "cosign verify-blob ") || !strings.HasPrefix(commands[1], "sha256sum ") {
		t.Fatalf("docs/support.md prints %q, want cosign verify-blob then sha256sum", commands)
	}
	return commands
}
