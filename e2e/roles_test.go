package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestAggregatedRoles: with the chart's ClusterRoles and
// kube-controller-manager's ClusterRole aggregation running, as in a
// cluster, the built-in roles bound in a namespace cover Monocles: an
// editor and an admin may create them, a viewer may read them and not
// create them, and no one of them may write their status (Metacontroller
// does). Asked as each user, with `kubectl auth can-i`.
func TestAggregatedRoles(t *testing.T) {
	ctx := context.Background()
	startControllerManager(t, "clusterrole-aggregation")
	ns := createNamespace(t, nil)

	createAggregatedRoles(t, ns)

	// A user bound to each built-in role in ns.
	kubeconfigs := map[string]string{}
	for _, role := range []string{"view", "edit", "admin"} {
		user := ns + "-" + role
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		if err := k8sClient.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
		kubeconfigs[role] = userKubeconfig(t, user)
	}

	// The aggregation controller adds the rules within seconds of its
	// start: wait for the editor's create, then ask everything.
	line := "kubectl auth can-i create monocles -n " + ns
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if answer, _ := canI(t, kubeconfigs["edit"], line); answer == "yes" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s, as an editor of %s: %s is still not yes", ns, line)
		}
	}
	for _, c := range []struct {
		role, verb, resource, want string
	}{
		{"edit", "create", "monocles", "yes"},
		{"edit", "get", "monocles", "yes"},
		{"edit", "delete", "monocles", "yes"},
		{"edit", "update", "monocles --subresource=status", "no"},
		{"admin", "create", "monocles", "yes"},
		{"admin", "deletecollection", "monocles", "yes"},
		{"admin", "patch", "monocles --subresource=status", "no"},
		{"view", "get", "monocles", "yes"},
		{"view", "list", "monocles", "yes"},
		{"view", "get", "monocles --subresource=status", "yes"},
		{"view", "create", "monocles", "no"},
		{"view", "delete", "monocles", "no"},
	} {
		line := "kubectl auth can-i " + c.verb + " " + c.resource + " -n " + ns
		if got, out := canI(t, kubeconfigs[c.role], line); got != c.want {
			t.Errorf("as a %s user: %s: %q, want %s\n%s", c.role, line, got, c.want, out)
		}
	}
	// Only in that namespace: the binding is a RoleBinding.
	if got, _ := canI(t, kubeconfigs["edit"], "kubectl auth can-i create monocles -n default"); got != "no" {
		t.Errorf("an editor of %s may create Monocles in default: %q", ns, got)
	}
}

// createAggregatedRoles creates the chart's ClusterRoles, named after a
// CompositeController of the test's own (they are cluster-scoped), as
// `helm install` or metacontroller/hook.yaml (the same render) makes them;
// they go at the test's end.
func createAggregatedRoles(t *testing.T, ns string) {
	t.Helper()
	for _, o := range renderChart(t, ns, "--set", "compositeController.name="+ns) {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		if err := k8sClient.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), o) })
	}
}

// userKubeconfig is a kubeconfig of a user in no group but
// system:authenticated: what RBAC grants it is all it may do.
func userKubeconfig(t *testing.T, name string) string {
	t.Helper()
	return kubeconfigOf(t, envtest.User{Name: name})
}

// canI runs a `kubectl auth can-i` line (the assets' kubectl) as the
// kubeconfig's user: its answer, yes or no (it exits 1 on no), and all
// it printed.
func canI(t *testing.T, kubeconfig, line string) (answer, out string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
	b, err := cmd.CombinedOutput()
	answer = strings.TrimSpace(string(b))
	if exit, ok := err.(*exec.ExitError); err != nil && !(ok && exit.ExitCode() == 1 && answer == "no") {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	return answer, string(b)
}
