package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// syncBuffer is a log destination the server writes while the test reads.
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

// startServe runs serve with args until the test ends, and returns the
// address it listens on.
func startServe(t *testing.T, logs io.Writer, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, args, logs, func(a net.Addr) { addrc <- a }) }()
	select {
	case a := <-addrc:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		return a.String()
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
		return ""
	}
}

// SIGTERM lets a sync that is in flight finish: the real binary gets half
// a request body, then SIGTERM, then the rest, and still answers it before
// it exits 0.
func TestSIGTERMFinishesInFlightSync(t *testing.T) {
	body, err := os.ReadFile("hook/testdata/metacontroller/sync-v1-observed-children.json")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hookBinary(t), "--listen=127.0.0.1:0", "--shutdown-timeout=10s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	logs := bufio.NewScanner(stderr)
	var addr string
	for addr == "" && logs.Scan() {
		var line struct{ Msg, Address string }
		if json.Unmarshal(logs.Bytes(), &line) == nil && line.Msg == "serving" {
			addr = line.Address
		}
	}
	if addr == "" {
		t.Fatal("the hook never logged its address")
	}
	go io.Copy(io.Discard, stderr)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	half := len(body) / 2
	if _, err := conn.Write(body[:half]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the request is in the handler now
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the server is draining
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("a new connection was accepted while draining")
	}
	if _, err := conn.Write(body[half:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Contains(answer, []byte(`"children"`)) {
		t.Fatalf("in-flight sync got %d %s", resp.StatusCode, answer)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the hook exited with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the hook did not exit after its last sync")
	}
}

// The render subcommand reads each example file and prints its children as
// YAML documents. That they are exactly /sync's answer is
// hook.TestRenderIsSync's to show.
func TestRenderExamples(t *testing.T) {
	files, _ := filepath.Glob("examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	// The Secrets the examples' comments ask you to create: a Secret the
	// spec names and render is not given holds the API and the crawler,
	// as /sync does.
	const secrets = `
---
{apiVersion: v1, kind: Secret, metadata: {name: github-token}, data: {GITHUB_TOKEN: Z2hwX2V4YW1wbGU=}}
---
{apiVersion: v1, kind: Secret, metadata: {name: team-tokens}, data: {GITHUB_TOKEN: Z2hwX2V4YW1wbGU=}}
---
{apiVersion: v1, kind: Secret, metadata: {name: es-url}, data: {url: aHR0cDovL2VzLmV4YW1wbGUuY29tOjkyMDA=}}
`
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			example, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := render([]string{"-f", "-"}, bytes.NewReader(append(example, secrets...)), &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			for _, kind := range []string{"Secret", "ConfigMap", "Service", "Deployment"} {
				if !strings.Contains(out.String(), "\nkind: "+kind+"\n") {
					t.Errorf("no %s in:\n%s", kind, out.String())
				}
			}
		})
	}
}

// What render holds back is said on stderr, with the command that fixes it.
func TestRenderSaysWhatItHolds(t *testing.T) {
	monocle := "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata: {name: m, namespace: team}\n" +
		"spec: {config: \"workspaces:\\n  - name: demo\\n    crawlers:\\n      - {name: gh, update_since: '2024-01-01', provider: {github_organization: x}}\\n\"}\n"
	var out, errOut bytes.Buffer
	if err := render([]string{"-f", "-"}, strings.NewReader(monocle), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "SpecApplied=False, CrawlerTokenMissing: ") || !strings.Contains(errOut.String(), "kubectl -n team create secret generic m-api --from-file=GITHUB_TOKEN=./token-1") {
		t.Errorf("stderr: %s", errOut.String())
	}
	if strings.Contains(out.String(), "name: m-crawler") || !strings.Contains(out.String(), "name: m-api\n") {
		t.Errorf("stdout:\n%s", out.String())
	}
}

func TestRenderRejectsABadSpec(t *testing.T) {
	bad := "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata: {name: m}\nspec: {storageSize: lots}\n"
	err := render([]string{"-f", "-"}, strings.NewReader(bad), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "spec.storageSize") {
		t.Fatalf("err = %v", err)
	}
}

// Neither the log nor /metrics carries a secret: not the values of the
// Secrets a real sync request holds, nor a token sent in a body the hook
// cannot decode.
func TestServeLogsAndMetricsHoldNoSecret(t *testing.T) {
	fixture, err := os.ReadFile("hook/testdata/metacontroller/sync-v1-observed-children.json")
	if err != nil {
		t.Fatal(err)
	}
	// The Secret monocle-sample-api's values, as sent (base64) and decoded;
	// the decoded API key is also in the Secret's last-applied annotation.
	secrets := []string{
		"Z2hwX2V4YW1wbGVfYWRtaW5fdG9rZW4=", "ghp_example_admin_token",
		"Y2FwdHVyZWQtZml4dHVyZS1rZXktMDAwMDAw", "captured-fixture-key-000000",
	}
	for _, s := range []string{secrets[0], secrets[2], secrets[3]} {
		if !bytes.Contains(fixture, []byte(s)) {
			t.Fatalf("the fixture no longer holds %s", s)
		}
	}
	const token = "ghp_T0KEN0123456789sentInABadBody"

	logs := &syncBuffer{}
	base := "http://" + startServe(t, logs, "--listen=127.0.0.1:0", "--log-level=debug")
	post := func(path, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(answer)
	}

	code, answer := post("/sync", string(fixture))
	if code != 200 || !strings.Contains(answer, secrets[0]) {
		// The admin's GITHUB_TOKEN is kept: it went through the process.
		t.Fatalf("sync answered %d without the admin's key: %.300s", code, answer)
	}
	// The line is written once the answer is sent.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `"msg":"sync"`); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the sync was not logged:\n%s", logs.String())
		}
	}

	for _, c := range []struct{ name, path, body string }{
		{name: "syntax error at the token", path: "/sync", body: `{"parent": ` + token + `}`},
		{name: "body cut after the token", path: "/sync", body: `{"parent": {"metadata": {"name": "` + token},
		{name: "token as Secret data", path: "/sync", body: `{"children": {"Secret.v1": {"x": {"data": {"GITHUB_TOKEN": "` + token + `"}}}}}`},
		{name: "token as a Secret key", path: "/sync", body: `{"children": {"Secret.v1": {"x": {"data": {"` + token + `": 1}}}}}`},
		{name: "token in stringData", path: "/sync", body: `{"children": {"Secret.v1": {"x": {"stringData": {"` + token + `": ["` + token + `"]}}}}}`},
		{name: "token as a quantity", path: "/sync", body: `{"related": {"PersistentVolumeClaim.v1": {"x": {"status": {"capacity": {"storage": "` + token + `"}}}}}}`},
		{name: "token after the object", path: "/sync", body: `{"parent": null} ` + token},
		{name: "customize: syntax error at the token", path: "/customize", body: `{"parent": ` + token + `}`},
		// time.Parse's error, which metav1.Time returns, quotes the value.
		{name: "token as a timestamp", path: "/sync", body: `{"parent": {"metadata": {"name": "m", "creationTimestamp": "` + token + `"}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(logs.String())
			code, answer := post(c.path, c.body)
			if code != http.StatusBadRequest {
				t.Errorf("answered %d %s, want 400", code, answer)
			}
			logged := logs.String()[before:]
			if !strings.Contains(logged, `"reason":"malformed"`) {
				t.Errorf("no malformed request logged:\n%s", logged)
			}
			if strings.Contains(logged, token) || strings.Contains(answer, token) {
				t.Errorf("the token is in the log or the answer:\nlog: %s\nanswer: %s", logged, answer)
			}
		})
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(metrics, []byte(`monocle_hook_sync_errors_total{handler="sync",reason="malformed"}`)) {
		t.Fatalf("unexpected /metrics:\n%s", metrics)
	}
	// collectors/version's build_info: the build's version and commit.
	if !regexp.MustCompile(`(?m)^monocle_hook_build_info\{branch="[^"]*",goarch="[^"]+",goos="[^"]+",goversion="go[^"]+",revision="` + regexp.QuoteMeta(buildCommit()) + `",tags="[^"]*",version="` + regexp.QuoteMeta(version) + `"\} 1$`).Match(metrics) {
		t.Errorf("/metrics has no build_info of version %s, revision %s:\n%s", version, buildCommit(), metrics)
	}
	for _, s := range append(secrets, token) {
		if bytes.Contains(metrics, []byte(s)) {
			t.Errorf("/metrics holds %s", s)
		}
	}
	all := logs.String()
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("the log holds %s:\n%s", s, all)
		}
	}
}

var (
	builtOnce sync.Once
	builtPath string
	builtErr  error
)

// stampedVersion and stampedCommit are what hookBinary stamps, as the
// Makefile does.
const stampedVersion, stampedCommit = "9.8.7", "0123456789ab"

// hookBinary builds the hook once per test run, as the Makefile builds and
// stamps it.
func hookBinary(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "monocle-hook-test-")
		if err != nil {
			builtErr = err
			return
		}
		builtPath = filepath.Join(dir, "monocle-hook")
		build := exec.Command("go", "build", "-trimpath", "-ldflags",
			"-X main.version="+stampedVersion+" -X main.commit="+stampedCommit, "-o", builtPath, ".")
		// Static, as the Makefile builds it, also under `make unit`'s race
		// run (which needs cgo): its packages are then lint's.
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		if err != nil {
			builtErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtPath != "" {
		os.RemoveAll(filepath.Dir(builtPath))
	}
	os.Exit(code)
}

// --help and --version (and the words help and version, and a
// subcommand's --help) answer on standard output and exit 0; a wrong flag
// prints the usage on standard error and exits 2.
func TestBinaryHelpAndVersion(t *testing.T) {
	bin := hookBinary(t)
	tests := map[string]struct {
		args         []string
		code         int
		stdout       []string
		stderr       string
		stdoutIsLine bool
	}{
		"--help":              {args: []string{"--help"}, stdout: []string{"Usage:", "-memory-budget", "-log-level", "-version", "-listen", "cgroup"}},
		"-h":                  {args: []string{"-h"}, stdout: []string{"Usage:"}},
		"version":             {args: []string{"--version"}, stdout: []string{"monocle-hook " + stampedVersion + " (commit " + stampedCommit + ", " + runtime.Version() + ")\n"}, stdoutIsLine: true},
		"a wrong flag":        {args: []string{"--no-such-flag"}, code: 2, stderr: "Usage:"},
		"a wrong level":       {args: []string{"--log-level=loud"}, code: 2, stderr: "-log-level"},
		"a wrong budget":      {args: []string{"--memory-budget=lots"}, code: 1, stderr: `--memory-budget: "lots" is not a quantity`},
		"a budget under 1Mi":  {args: []string{"--memory-budget=100Ki"}, code: 1, stderr: "under the least budget"},
		"help, a word":        {args: []string{"help"}, stdout: []string{"Usage:", "-memory-budget"}},
		"version, a word":     {args: []string{"version"}, stdout: []string{"monocle-hook " + stampedVersion + " (commit " + stampedCommit + ", " + runtime.Version() + ")\n"}, stdoutIsLine: true},
		"render --help":       {args: []string{"render", "--help"}, stdout: []string{"Usage: monocle-hook render", "-image"}},
		"render -h":           {args: []string{"render", "-h"}, stdout: []string{"-f string"}},
		"render, no -f":       {args: []string{"render"}, code: 2, stderr: "-f is required"},
		"render, wrong flag":  {args: []string{"render", "--nope"}, code: 2, stderr: "Usage: monocle-hook render"},
		"render, arguments":   {args: []string{"render", "-f", "x", "extra"}, code: 2, stderr: "unexpected arguments"},
		"check --help":        {args: []string{"check", "--help"}, stdout: []string{"Usage: monocle-hook check"}},
		"janitor-job, gone":   {args: []string{"janitor-job", "update-idents"}, code: 2, stderr: "monocle-hook janitor-job: gone since 0.2.0: run kubectl monocle janitor"},
		"check, wrong flag":   {args: []string{"check", "--nope"}, code: 2, stderr: "Usage: monocle-hook check"},
		"snapshot --help":     {args: []string{"snapshot", "--help"}, stdout: []string{"Usage: monocle-hook snapshot"}},
		"snapshot, no flags":  {args: []string{"snapshot"}, code: 2, stderr: "missing --elastic"},
		"restore -h":          {args: []string{"restore", "-h"}, stdout: []string{"Usage: monocle-hook restore"}},
		"restore, wrong flag": {args: []string{"restore", "--nope"}, code: 2, stderr: "Usage: monocle-hook restore"},
		"restore-job, gone":   {args: []string{"restore-job", "--help"}, code: 2, stderr: "monocle-hook restore-job: gone since 0.2.0: run kubectl monocle restore"},
		"test --help":         {args: []string{"test", "--help"}, stdout: []string{"Usage: monocle-hook test", "-ca-bundle", "-url"}},
		"test, no --url":      {args: []string{"test"}, code: 2, stderr: "--url is required"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if exit, ok := err.(*exec.ExitError); ok {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout.String(), stderr.String())
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			if tc.stdoutIsLine && stdout.String() != tc.stdout[0] {
				t.Errorf("stdout %q, want exactly %q", stdout.String(), tc.stdout[0])
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr.String())
			}
			if tc.code == 0 && stderr.Len() > 0 {
				t.Errorf("stderr: %s", stderr.String())
			}
		})
	}
}

// The budget is --memory-budget, else a quarter of the cgroup's memory
// limit (the smallest on the way to the root), else the default; the Go
// memory limit is 1.5 times the budget.
func TestMemoryFor(t *testing.T) {
	const mi = 1 << 20
	unlimitedV1 := "9223372036854771712\n"
	tests := map[string]struct {
		flag   string
		files  fstest.MapFS
		budget int64
		from   string
	}{
		"cgroup v2, own namespace": {
			files:  fstest.MapFS{"proc/self/cgroup": file("0::/\n"), "sys/fs/cgroup/memory.max": file("134217728\n")},
			budget: 32 * mi, from: "/sys/fs/cgroup/memory.max",
		},
		"cgroup v2, no limit": {
			files:  fstest.MapFS{"proc/self/cgroup": file("0::/\n"), "sys/fs/cgroup/memory.max": file("max\n")},
			budget: 36 * mi, from: "default",
		},
		"cgroup v2, the host's path, a parent's limit smaller": {
			files: fstest.MapFS{
				"proc/self/cgroup":                          file("0::/kubepods/pod1/c1\n"),
				"sys/fs/cgroup/kubepods/pod1/c1/memory.max": file("max\n"),
				"sys/fs/cgroup/kubepods/pod1/memory.max":    file("268435456\n"),
				"sys/fs/cgroup/kubepods/memory.max":         file("1073741824\n"),
			},
			budget: 64 * mi, from: "/sys/fs/cgroup/kubepods/pod1/memory.max",
		},
		"cgroup v1, the host's path": {
			files: fstest.MapFS{
				"proc/self/cgroup": file("12:pids:/kubepods/pod1/c1\n4:cpu,memory:/kubepods/pod1/c1\n"),
				"sys/fs/cgroup/memory/kubepods/pod1/c1/memory.limit_in_bytes": file("134217728\n"),
				"sys/fs/cgroup/memory/memory.limit_in_bytes":                  file(unlimitedV1),
			},
			budget: 32 * mi, from: "/sys/fs/cgroup/memory/kubepods/pod1/c1/memory.limit_in_bytes",
		},
		"cgroup v1, only the container's own cgroup mounted": {
			files: fstest.MapFS{
				"proc/self/cgroup":                           file("4:memory:/docker/abc\n"),
				"sys/fs/cgroup/memory/memory.limit_in_bytes": file("536870912\n"),
			},
			budget: 128 * mi, from: "/sys/fs/cgroup/memory/memory.limit_in_bytes",
		},
		"cgroup v1, no limit": {
			files: fstest.MapFS{
				"proc/self/cgroup":                           file("4:memory:/\n"),
				"sys/fs/cgroup/memory/memory.limit_in_bytes": file(unlimitedV1),
			},
			budget: 36 * mi, from: "default",
		},
		"no /proc":          {files: fstest.MapFS{}, budget: 36 * mi, from: "default"},
		"a tiny limit":      {files: fstest.MapFS{"proc/self/cgroup": file("0::/\n"), "sys/fs/cgroup/memory.max": file("2097152\n")}, budget: mi, from: "memory.max"},
		"the flag wins":     {flag: "48Mi", files: fstest.MapFS{"proc/self/cgroup": file("0::/\n"), "sys/fs/cgroup/memory.max": file("134217728\n")}, budget: 48 * mi, from: "--memory-budget"},
		"the flag in bytes": {flag: "50000000", files: fstest.MapFS{}, budget: 50000000, from: "--memory-budget"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := memoryFor(tc.flag, tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if m.budget != tc.budget || m.goMemLimit != tc.budget*3/2 || !strings.Contains(m.from, tc.from) {
				t.Errorf("budget %d, Go limit %d, from %q; want %d, %d, from %q", m.budget, m.goMemLimit, m.from, tc.budget, tc.budget*3/2, tc.from)
			}
		})
	}
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// render --image gives the snapshot CronJob the hook image the chart
// passes, as the hook's own --image does.
func TestRenderImage(t *testing.T) {
	var out bytes.Buffer
	if err := render([]string{"-f", "examples/monocle-snapshots.yaml", "--image", "registry.example/monocle-hook@sha256:abc"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "image: registry.example/monocle-hook@sha256:abc") {
		t.Errorf("the snapshot CronJob does not run the --image:\n%s", out.String())
	}
}
