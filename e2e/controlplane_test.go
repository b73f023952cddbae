package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startControllerManager runs kube-controller-manager from $KUBEBUILDER_ASSETS
// against the envtest apiserver until the calling test ends. envtest starts
// only etcd and kube-apiserver, so nothing garbage-collects ownerReferences,
// creates ReplicaSets for Deployments, etc. unless a test asks for it.
//
// controllers defaults to the garbage collector alone. It returns once the
// process is started: the controllers need a few seconds to sync their
// caches, so tests must poll for the effects they expect.
func startControllerManager(t *testing.T, controllers ...string) {
	t.Helper()
	if len(controllers) == 0 {
		controllers = []string{"garbagecollector"}
	}
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("kube-controller-manager is not in KUBEBUILDER_ASSETS (rerun tools/assets.sh): %v", err)
	}

	// A client-certificate user in system:masters: with
	// --use-service-account-credentials=false every controller uses this
	// identity, so it needs to be allowed everything.
	kubeconfigPath := adminKubeconfig(t, "system:kube-controller-manager")

	args := []string{
		"--kubeconfig=" + kubeconfigPath,
		"--controllers=" + strings.Join(controllers, ","),
		"--use-service-account-credentials=false",
		// One instance per test, no lease to wait for.
		"--leader-elect=false",
		// No HTTPS endpoint: nothing scrapes it, and a fixed port (10257)
		// would clash between test packages running in parallel.
		"--secure-port=0",
		// The key envtest's apiserver verifies tokens with; only the
		// serviceaccount-token controller uses it.
		"--service-account-private-key-file=" + filepath.Join(testEnv.ControlPlane.APIServer.CertDir, "sa-signer.key"),
		// Fast resyncs: tests wait on these controllers.
		"--min-resync-period=10s",
	}
	var out bytes.Buffer // only read after the process has exited
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kube-controller-manager: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	t.Cleanup(func() {
		select {
		case err := <-exited: // died on its own: the test results are suspect
			t.Errorf("kube-controller-manager exited early (%v):\n%s", err, out.String())
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("kube-controller-manager output:\n%s", out.String())
		}
	})
}
