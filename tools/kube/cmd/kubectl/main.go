// Command kubectl is k8s.io/kubernetes/cmd/kubectl, rebuilt so its version
// matches the v1.37.2 apiserver (the machine's /usr/bin/kubectl is 1.32).
package main

import (
	"os"

	_ "k8s.io/client-go/plugin/pkg/client/auth" // client auth plugins, as upstream
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	// Set -v before the command is built, as upstream does, so klog works
	// while kubectl loads plugins and .kuberc.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
