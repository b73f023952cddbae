package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// oldRelease is the release an upgrade starts from: its hook binary, its
// CompositeController file and its Metacontroller values (built and read
// from its git tag by make converge-upgrade-order).
type oldRelease struct {
	hook, controller string
	values           []string
}

// upgradeSyncGrace is how long the proof waits with the stall in place:
// past monocle-hook check's grace for a Monocle with no status
// (hook.SyncGrace, 2 minutes), so that check can say it.
const upgradeSyncGrace = 2*time.Minute + 15*time.Second

// proveUpgradeOrder (-prove-upgrade-order): docs/upgrade.md's step 2 done
// the other way round. An install of the old release (its hook, its
// CompositeController, Metacontroller with its least-privileged values)
// syncs a Monocle; then the chart is upgraded first: the new hook and
// CompositeController, whose child kinds the old ClusterRole lacks. The
// proof shows that Metacontroller then syncs no Monocle (neither an edited
// one nor a new one), that the hook's sync counter stands still (the alert
// MonocleSyncsStopped's input) and that monocle-hook check exits 1 with
// NotSynced for both; then Metacontroller's new values (its ClusterRole
// only: the chart's StatefulSet does not change, so its pod is not
// restarted) and how long until both Monocles are synced again by the
// same Metacontroller process.
func proveUpgradeOrder(ctx context.Context, o options, old oldRelease) error {
	if !o.asInACluster || o.clusterRole == nil {
		return errors.New("-prove-upgrade-order needs Metacontroller as a ServiceAccount with the new release's least-privileged values (-values ...,chart/files/metacontroller-values-dedicated.yaml)")
	}
	oldValues, err := readValues(old.values)
	if err != nil {
		return err
	}
	if oldValues.ClusterRole.Rules == nil {
		return errors.New("-old-values: no clusterRole.rules: the proof needs the old release's least-privileged values")
	}
	dir := filepath.Join(o.workdir, "upgrade-order")
	if err := os.MkdirAll(filepath.Join(dir, "old"), 0o755); err != nil {
		return err
	}
	oldHookURL, oldHook, err := startHook(ctx, options{hook: old.hook}, filepath.Join(dir, "old"))
	if err != nil {
		return fmt.Errorf("the old hook: %w", err)
	}
	defer oldHook.stop()
	newHookURL, newHook, err := startHook(ctx, o, dir)
	if err != nil {
		return err
	}
	defer newHook.stop()
	oldCC, err := compositeController(old.controller, oldHookURL)
	if err != nil {
		return err
	}
	newCC, err := compositeController(o.controller, newHookURL)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	const ns = "team"
	cp, err := startControlPlane(ctx, o, newCC, []string{ns})
	if err != nil {
		cancel()
		return err
	}
	defer func() {
		cancel()
		cp.stop(0)
	}()
	// Metacontroller as the old release installed it: its flags, and its
	// ServiceAccount bound to the old ClusterRole.
	mcOld := o
	mcOld.clusterRole, mcOld.mcFlags, mcOld.mcEnv = oldValues.ClusterRole.Rules, oldValues.CommandArgs, nil
	for _, e := range oldValues.Env {
		mcOld.mcEnv = append(mcOld.mcEnv, e.Name+"="+e.Value)
	}
	if slices.Contains(mcOld.mcFlags, "--leader-election") {
		mcOld.mcFlags = append(mcOld.mcFlags, "--leader-election-namespace="+metacontrollerNS)
	}
	kubeconfig, err := controllerKubeconfig(ctx, mcOld, cp, dir)
	if err != nil {
		return err
	}
	ccs := cp.dyn.Resource(schema.GroupVersionResource{Group: "metacontroller.k8s.io", Version: "v1alpha1", Resource: "compositecontrollers"})
	if _, err := ccs.Create(ctx, oldCC, metav1.CreateOptions{}); err != nil {
		return err
	}
	mc, err := startMetacontroller(ctx, mcOld, dir, "metacontroller", kubeconfig)
	if err != nil {
		return err
	}
	defer mc.stop()

	monocles := cp.dyn.Resource(cp.parentGVR).Namespace(ns)
	deployments := cp.dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns)
	// synced: the Monocle's status is of generation (or later) and its API's
	// Deployment exists.
	synced := func(ctx context.Context, name string, generation int64) (bool, error) {
		m, err := monocles.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		observed, _, _ := unstructured.NestedInt64(m.Object, "status", "observedGeneration")
		if observed < generation {
			return false, nil
		}
		_, err = deployments.Get(ctx, name+"-api", metav1.GetOptions{})
		return err == nil, nil
	}
	waitSynced := func(timeout time.Duration, generations map[string]int64) (time.Duration, error) {
		start := time.Now()
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			for name, gen := range generations {
				if ok, err := synced(ctx, name, gen); err != nil || !ok {
					return false, nil
				}
			}
			return true, nil
		})
		return time.Since(start), err
	}

	// 1. The old release syncs m1.
	if _, err := monocles.Create(ctx, newMonocle(cp.parentGVR, cp.parentKind, ns, "m1"), metav1.CreateOptions{}); err != nil {
		return err
	}
	took, err := waitSynced(time.Minute, map[string]int64{"m1": 1})
	if err != nil {
		return fmt.Errorf("the old release never synced m1: %w; logs in %s", err, dir)
	}
	fmt.Printf("upgrade-order: the old release (its hook, CompositeController and least-privileged Metacontroller) synced Monocle m1 in %.1f s\n", took.Seconds())

	// 2. The chart first: the new hook and CompositeController; the old
	// hook goes (its Deployment is the chart's).
	cur, err := ccs.Get(ctx, newCC.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	newCC.SetResourceVersion(cur.GetResourceVersion())
	if _, err := ccs.Update(ctx, newCC, metav1.UpdateOptions{}); err != nil {
		return err
	}
	oldHook.stop()
	fmt.Println("upgrade-order: the chart upgraded before Metacontroller's values: the new CompositeController lists NetworkPolicies and PodDisruptionBudgets, the old ClusterRole does not")
	hookClient := &http.Client{Timeout: 10 * time.Second}
	syncsBefore, _, err := hookSyncs(ctx, hookClient, newHookURL+"/metrics")
	if err != nil {
		return err
	}
	// An edit of m1 (generation 2) and a new Monocle m2.
	if _, err := monocles.Patch(ctx, "m1", types.MergePatchType, []byte(`{"spec":{"webappTitle":"Edited during the upgrade"}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	if _, err := monocles.Create(ctx, newMonocle(cp.parentGVR, cp.parentKind, ns, "m2"), metav1.CreateOptions{}); err != nil {
		return err
	}
	stalledAt := time.Now()
	if took, err := waitSynced(upgradeSyncGrace, map[string]int64{"m1": 2}); err == nil {
		return fmt.Errorf("the chart upgraded first, Metacontroller synced m1's edit %.1f s after the chart's upgrade, with the old ClusterRole: docs/upgrade.md's step 2 says it does not; logs in %s", took.Seconds(), dir)
	}
	if ok, _ := synced(ctx, "m2", 1); ok {
		return fmt.Errorf("the chart upgraded first, Metacontroller synced the new m2 with the old ClusterRole: docs/upgrade.md's step 2 says it does not; logs in %s", dir)
	}
	syncsStalled, _, err := hookSyncs(ctx, hookClient, newHookURL+"/metrics")
	if err != nil {
		return err
	}
	mcLog, _ := os.ReadFile(mc.logPath)
	fmt.Printf("upgrade-order: %.0f s later neither m1's edit nor m2 is synced; the new hook's /sync requests: %.0f -> %.0f (MonocleSyncsStopped's input); Metacontroller's log has %d lines naming networkpolicies or poddisruptionbudgets as forbidden\n",
		time.Since(stalledAt).Seconds(), syncsBefore, syncsStalled, forbiddenLines(mcLog))
	if syncsStalled != syncsBefore {
		return fmt.Errorf("the hook was called for /sync %.0f times during the stall", syncsStalled-syncsBefore)
	}
	code, out, err := checkMonocles(ctx, cp, o.hook, ns)
	if err != nil {
		return err
	}
	fmt.Printf("upgrade-order: monocle-hook check exits %d:\n%s", code, indent(out))
	if code != 1 || strings.Count(out, "NotSynced") < 2 {
		return fmt.Errorf("monocle-hook check exited %d without NotSynced for m1 and m2", code)
	}

	// 3. Metacontroller's new values: only its ClusterRole changes.
	admin, err := kubernetes.NewForConfig(cp.env.Config)
	if err != nil {
		return err
	}
	role, err := admin.RbacV1().ClusterRoles().Get(ctx, "metacontroller", metav1.GetOptions{})
	if err != nil {
		return err
	}
	role.Rules = slices.Clone(o.clusterRole)
	if _, err := admin.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		return err
	}
	took, err = waitSynced(5*time.Minute, map[string]int64{"m1": 2, "m2": 1})
	if err != nil {
		return fmt.Errorf("5 minutes after Metacontroller's new ClusterRole, the same Metacontroller process has not synced m1's edit and m2 (a restart of its pod would be needed: docs/upgrade.md must say so); logs in %s", dir)
	}
	fmt.Printf("upgrade-order: Metacontroller's new ClusterRole (its process not restarted): m1's edit and m2 synced %.1f s later\n", took.Seconds())
	if code, out, err = checkMonocles(ctx, cp, o.hook, ns); err != nil {
		return err
	}
	fmt.Printf("upgrade-order: monocle-hook check exits %d:\n%s", code, indent(out))
	if code != 0 {
		return fmt.Errorf("monocle-hook check exited %d once both Monocles were synced", code)
	}
	fmt.Printf("upgrade-order: logs in %s\n", dir)
	return nil
}

// forbiddenLines counts the lines of Metacontroller's log that say a list
// or watch of the new kinds was forbidden.
func forbiddenLines(log []byte) int {
	n := 0
	for line := range bytes.Lines(log) {
		if bytes.Contains(line, []byte("forbidden")) && (bytes.Contains(line, []byte("networkpolicies")) || bytes.Contains(line, []byte("poddisruptionbudgets"))) {
			n++
		}
	}
	return n
}

// checkMonocles runs `monocle-hook check -f -` on namespace ns's Monocles,
// ConfigMaps and Secrets, as docs/upgrade.md pipes them from kubectl get:
// its exit code and output.
func checkMonocles(ctx context.Context, cp *controlPlane, hook, ns string) (int, string, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, gvr := range []schema.GroupVersionResource{cp.parentGVR, {Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "secrets"}} {
		l, err := cp.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, "", err
		}
		for _, item := range l.Items {
			if item.GetAPIVersion() == "" {
				item.SetAPIVersion(l.GetAPIVersion())
			}
			list.Items = append(list.Items, item)
		}
	}
	data, err := list.MarshalJSON()
	if err != nil {
		return 0, "", err
	}
	if data, err = yaml.JSONToYAML(data); err != nil {
		return 0, "", err
	}
	cmd := exec.CommandContext(ctx, hook, "check", "-f", "-")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out), nil
	case err != nil:
		return 0, "", err
	}
	return 0, string(out), nil
}

func indent(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString("  " + line)
	}
	return b.String()
}
