// Package e2e runs integration tests against a real etcd and kube-apiserver
// started by controller-runtime's envtest from $KUBEBUILDER_ASSETS
// (build it with `export KUBEBUILDER_ASSETS=$(tools/assets.sh)`).
package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Shared by every test of the package: one control plane per `go test` run.
var (
	testEnv   *envtest.Environment
	cfg       *rest.Config  // admin (system:masters) config for the apiserver
	k8sClient client.Client // controller-runtime client built from cfg
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// controller-runtime complains after 30s if no logger was set.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))

	// Fail, not skip: a skipped suite looks green, and the Makefile always
	// sets this variable.
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		fmt.Fprintln(os.Stderr, "e2e: KUBEBUILDER_ASSETS is not set; run: export KUBEBUILDER_ASSETS=$(tools/assets.sh)")
		return 1
	}

	testEnv = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		// The Monocle CRD and Metacontroller's own (v4.17.2), installed and
		// Established before any test runs.
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              []string{"../crd", "testdata/metacontroller-crds-v1.yaml"},
			ErrorIfPathMissing: true,
		},
		// envtest's 20 s default is too short for a cold kube-apiserver on a
		// loaded 2-core machine (seen failing five times at load 17).
		ControlPlaneStartTimeout: 2 * time.Minute,
	}
	// A whole run (no -run, no -list) builds the tools it will need
	// alongside. m.Run parses the testing flags, later: parsed here to read
	// them.
	flag.Parse()
	if flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.list").Value.String() == "" {
		defer startToolBuilds()()
	}

	start := time.Now()
	var err error
	cfg, err = testEnv.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting envtest from %s: %v\n", assets, err)
		_ = testEnv.Stop() // etcd may be up even if the apiserver is not
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: control plane up in %s\n", time.Since(start).Round(time.Millisecond))
	defer func() {
		if err := testEnv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: stopping envtest: %v\n", err)
		}
	}()

	k8sClient, err = client.New(cfg, client.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: creating client: %v\n", err)
		return 1
	}
	return m.Run()
}
