package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// What a cluster has that envtest does not: Metacontroller's identity as its
// chart makes it, and kube-controller-manager.

// controllerKubeconfig is the measured controller's identity: a
// ServiceAccount's as in a cluster, else a system:masters user's.
func controllerKubeconfig(ctx context.Context, o options, cp *controlPlane, dir string) (string, error) {
	if o.asInACluster {
		return serviceAccountKubeconfig(ctx, o, cp, dir)
	}
	return adminKubeconfig(cp.env, dir, "metacontroller")
}

// metacontrollerNS is the namespace of Metacontroller's ServiceAccount and
// of its leader election's Lease, as docs/install.md installs it.
const metacontrollerNS = "metacontroller"

// serviceAccountKubeconfig makes Metacontroller's ServiceAccount, bound to
// the ClusterRole its chart (metacontroller-helm 4.17.2) makes from
// clusterRole.rules (its default: all verbs on all resources), and writes a
// kubeconfig with a token of it from the TokenRequest API: a
// ServiceAccount's requests go through API Priority and Fairness
// (FlowSchema service-accounts, priority level workload-low), where a
// system:masters user's are exempt.
func serviceAccountKubeconfig(ctx context.Context, o options, cp *controlPlane, dir string) (string, error) {
	client, err := kubernetes.NewForConfig(cp.env.Config)
	if err != nil {
		return "", err
	}
	const ns, name = metacontrollerNS, "metacontroller"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	rules := o.clusterRole
	if rules == nil {
		rules = []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}}}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	token, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(24 * 3600))}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("a token for %s/%s: %w", ns, name, err)
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cp.env.Config.Host, CertificateAuthorityData: cp.env.Config.CAData}
	config.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	config.Contexts["default"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: name}
	config.CurrentContext = "default"
	path := filepath.Join(dir, "metacontroller-serviceaccount.kubeconfig")
	return path, clientcmd.WriteToFile(*config, path)
}

// startControllerManager runs kube-controller-manager's default controllers
// (Deployments make ReplicaSets and Pods, StatefulSets Pods and claims, the
// garbage collector, ...), which write the children's status as in a
// cluster. No node runs a Pod: they stay Pending.
func startControllerManager(cp *controlPlane, dir string) (*process, error) {
	kubeconfig, err := adminKubeconfig(cp.env, dir, "system:kube-controller-manager")
	if err != nil {
		return nil, err
	}
	p, err := startProcess(filepath.Join(dir, "kube-controller-manager.log"), filepath.Join(cp.env.BinaryAssetsDirectory, "kube-controller-manager"), nil,
		"--kubeconfig="+kubeconfig,
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--secure-port=0",
		"--service-account-private-key-file="+filepath.Join(cp.env.ControlPlane.APIServer.CertDir, "sa-signer.key"),
	)
	if err != nil {
		return nil, err
	}
	// Its caches sync in a few seconds; nothing waits on it before then.
	time.Sleep(time.Second)
	select {
	case <-p.done:
		out, _ := os.ReadFile(p.logPath)
		return nil, fmt.Errorf("kube-controller-manager exited: %v\n%s", p.err, out)
	default:
	}
	return p, nil
}

// summarizeSizing prints what sizing runs measure: Metacontroller's memory,
// heap, CPU and log, and that nothing but status was written afterwards.
func summarizeSizing(o options, flags string, results []result) {
	med := func(f func(result) float64) float64 { return median(results, f) }
	mib := func(name string) float64 {
		return med(func(r result) float64 { return float64(r.hwm[name]) / (1 << 20) })
	}
	cpu := func(name string) float64 {
		return med(func(r result) float64 { return r.cpu[name].Seconds() })
	}
	rewrites, statusWrites := 0, 0
	for _, r := range results {
		rewrites = max(rewrites, r.rewrittenChildren+r.rewrittenParents)
		statusWrites = max(statusWrites, r.statusWrites)
	}
	// The leader at the end: the standby, once the leader was killed.
	lead := o.controllerName()
	if o.killLeader {
		lead += "-standby"
	}
	var runs []string
	for _, r := range results {
		runs = append(runs, fmt.Sprintf("%.0f", float64(r.hwm[lead])/(1<<20)))
	}
	maxOf := func(f func(result) int) int {
		m := 0
		for _, r := range results {
			m = max(m, f(r))
		}
		return m
	}
	fmt.Printf("\nmedian of %d runs, %d Monocles in %d namespaces, as in a cluster %v, %s %s, %d replicas:\n", len(results), o.monocles, o.namespaces, o.asInACluster, o.controllerName(), flags, o.replicas)
	fmt.Printf("| controller | N | children s | status s | its VmHWM MiB (runs) | its heap in use MiB | hook VmHWM MiB | CPU s: controller, hook, kube-apiserver | log KiB converging, quiet %s | content rewrites (quiet) | status-only writes (quiet) | children written after their create | forbidden lines |\n", o.quiet)
	fmt.Printf("| `%s` | %d | %.1f | %.1f | %.0f (%s) | %.0f | %.0f | %.1f, %.1f, %.1f | %.0f, %.1f | %d | %d | %d | %d |\n",
		flags, o.monocles,
		med(func(r result) float64 { return r.children.Seconds() }), med(func(r result) float64 { return r.status.Seconds() }),
		mib(lead), strings.Join(runs, ", "), med(func(r result) float64 { return r.mcHeap / (1 << 20) }), mib("monocle-hook"),
		cpu(lead), cpu("monocle-hook"), cpu("kube-apiserver"),
		med(func(r result) float64 { return float64(r.mcLogConverging) / 1024 }), med(func(r result) float64 { return float64(r.mcLogQuiet) / 1024 }),
		rewrites, statusWrites, maxOf(func(r result) int { return r.childRewrites }), maxOf(func(r result) int { return r.forbidden }))
	if o.replicas > 1 && !o.killLeader {
		fmt.Printf("  the standby: VmHWM %.0f MiB, CPU %.1f s\n", mib(o.controllerName()+"-standby"), cpu(o.controllerName()+"-standby"))
	}
	if o.killLeader {
		fmt.Printf("  the leader killed at %.1f s (%.0f Monocles with all their children), VmHWM %.0f MiB and CPU %.1f s then; the standby led %.1f s later (the row's controller from then)\n",
			med(func(r result) float64 { return r.takeover.at.Seconds() }), med(func(r result) float64 { return float64(r.takeover.children) }),
			mib(o.controllerName()+"-killed"), med(func(r result) float64 { return r.killedCPU.Seconds() }),
			med(func(r result) float64 { return r.takeover.after.Seconds() }))
	}
}
