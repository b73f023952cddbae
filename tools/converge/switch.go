package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// proveSwitch (-prove-switch) runs a running install's switch from
// Metacontroller's default dynamic apply to server-side apply, with the
// real Metacontroller, and says whether it is safe:
//
//  1. Metacontroller with dynamic apply creates the children of N Monocles
//     whose spec sets nodeSelector {disk: ssd, zone: a}.
//  2. It is stopped and started again with --apply-strategy=server-side-apply,
//     on the same objects. The first syncs may rewrite metadata (it removes
//     each InPlace child's last-applied annotation, then applies); the spec
//     and data of every child must stay as they were.
//  3. The Monocles drop the zone key. Safe means every workload's pod
//     template then has nodeSelector {disk: ssd}: a field the hook stops
//     answering is removed, although the old dynamic-apply writes (an
//     Update manager's) may still own it.
//
// It prints what it saw and returns an error only when it could not run.
func proveSwitch(ctx context.Context, o options) error {
	dir := filepath.Join(o.workdir, "switch")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	hookURL, hook, err := startHook(ctx, o, dir)
	if err != nil {
		return err
	}
	defer hook.stop()
	cc, err := compositeController(o.controller, hookURL)
	if err != nil {
		return err
	}
	namespaces := []string{warmupNS}
	for i := range o.namespaces {
		namespaces = append(namespaces, fmt.Sprintf("%s%d", convergePrefix, i))
	}
	ctx, cancel := context.WithCancel(ctx)
	cp, err := startControlPlane(ctx, o, cc, namespaces)
	if err != nil {
		cancel()
		return err
	}
	defer func() {
		cancel()
		cp.stop(0)
	}()
	ccGVR := schema.GroupVersionResource{Group: "metacontroller.k8s.io", Version: "v1alpha1", Resource: "compositecontrollers"}
	if _, err := cp.dyn.Resource(ccGVR).Create(ctx, cc, metav1.CreateOptions{}); err != nil {
		return err
	}
	probe := newMonocle(cp.parentGVR, cp.parentKind, warmupNS, "probe")
	children, _, err := askHook(ctx, &http.Client{Timeout: 10 * time.Second}, hookURL+"/sync", probe)
	if err != nil {
		return err
	}
	tr := newTracker(o.monocles, len(children))
	if err := cp.watch(ctx, tr); err != nil {
		return err
	}
	kubeconfig, err := controllerKubeconfig(ctx, o, cp, dir)
	if err != nil {
		return err
	}
	start := func(name string, extra ...string) (*process, error) {
		return startMetacontroller(ctx, o, dir, name, kubeconfig, extra...)
	}

	// 1. Dynamic apply.
	mc, err := start("metacontroller-dynamic", "--apply-strategy=dynamic-apply")
	if err != nil {
		return err
	}
	warmup := newMonocle(cp.parentGVR, cp.parentKind, warmupNS, "warmup")
	if _, err := cp.dyn.Resource(cp.parentGVR).Namespace(warmupNS).Create(ctx, warmup, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := waitFor(ctx, mc, 3*time.Minute, tr.warmedUp); err != nil {
		return err
	}
	nodeSelector := map[string]any{"disk": "ssd", "zone": "a"}
	if err := parallel(ctx, o.clients, o.monocles, func(ctx context.Context, i int) error {
		m := newMonocle(cp.parentGVR, cp.parentKind, fmt.Sprintf("%s%d", convergePrefix, i%o.namespaces), monocleName(i))
		m.Object["spec"] = map[string]any{"nodeSelector": nodeSelector}
		_, err := cp.dyn.Resource(cp.parentGVR).Namespace(m.GetNamespace()).Create(ctx, m, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	if err := waitFor(ctx, mc, o.timeout, tr.converged); err != nil {
		return err
	}
	if _, err := tr.settle(ctx, mc, o.settle, o.settleMax); err != nil {
		return err
	}
	before, err := listChildren(ctx, cp, o)
	if err != nil {
		return err
	}
	mc.stop()

	// 2. The switch.
	mc, err = start("metacontroller-ssa", "--apply-strategy=server-side-apply")
	if err != nil {
		return err
	}
	defer mc.stop()
	// Its first writes come within the informers' sync and a worker pass.
	time.Sleep(5 * time.Second)
	if _, err := tr.settle(ctx, mc, o.settle, o.settleMax); err != nil {
		return err
	}
	switched, err := listChildren(ctx, cp, o)
	if err != nil {
		return err
	}
	var specChanged, written []string
	writes := map[string]int{}
	for uid, b := range before {
		a := switched[uid]
		if a.body != b.body {
			specChanged = append(specChanged, b.what)
		}
		if a.rv != b.rv {
			written = append(written, b.what)
			writes[b.kind]++
		}
	}
	slices.Sort(specChanged)
	fmt.Printf("switch: %d children of %d Monocles; after the switch, %d written (by kind: %v), spec or data changed in %d\n",
		len(before), o.monocles, len(written), writes, len(specChanged))
	if len(specChanged) > 0 {
		fmt.Printf("switch: spec or data changed: %s\n", strings.Join(specChanged[:min(10, len(specChanged))], ", "))
	}

	// 3. A field the hook stops answering.
	if err := parallel(ctx, o.clients, o.monocles, func(ctx context.Context, i int) error {
		ns := fmt.Sprintf("%s%d", convergePrefix, i%o.namespaces)
		patch := []byte(`{"spec":{"nodeSelector":{"zone":null}}}`)
		_, err := cp.dyn.Resource(cp.parentGVR).Namespace(ns).Patch(ctx, monocleName(i), types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}); err != nil {
		return err
	}
	time.Sleep(5 * time.Second)
	if _, err := tr.settle(ctx, mc, o.settle, o.settleMax); err != nil {
		return err
	}
	after, err := listChildren(ctx, cp, o)
	if err != nil {
		return err
	}
	var kept, removed []string
	for _, c := range after {
		if c.nodeSelector == nil {
			continue // not a workload
		}
		if _, ok := c.nodeSelector["zone"]; ok {
			kept = append(kept, c.what)
		} else {
			removed = append(removed, c.what)
		}
	}
	slices.Sort(kept)
	applied, updated := 0, 0
	for _, c := range after {
		if c.applied {
			applied++
		}
		if c.updated {
			updated++
		}
	}
	fmt.Printf("switch: managedFields of the %d children: %d with Metacontroller's Apply entry, %d still with its Update entry (dynamic apply's writes, not migrated)\n", len(after), applied, updated)
	fmt.Printf("switch: the zone key dropped from the Monocles: removed from %d workloads, kept in %d\n", len(removed), len(kept))
	if len(kept) > 0 {
		fmt.Printf("switch: kept in %s\n", strings.Join(kept[:min(10, len(kept))], ", "))
		fmt.Printf("switch: NOT SAFE: a field the hook stops answering stays after the switch; logs in %s\n", dir)
	} else if len(specChanged) == 0 {
		fmt.Printf("switch: safe: no spec or data moved at the switch, and a dropped field is removed; logs in %s\n", dir)
	}
	return nil
}

// child is a listed child: what its switch may and may not move.
type child struct {
	what, kind, rv string
	body           string         // a hash of everything but metadata and status
	nodeSelector   map[string]any // a workload's pod template's; nil for others
	// Its managedFields entries for Metacontroller: an Apply one (server-side
	// apply) and an Update one (dynamic apply's writes).
	applied, updated bool
}

func listChildren(ctx context.Context, cp *controlPlane, o options) (map[types.UID]child, error) {
	out := map[types.UID]child{}
	for i := range o.namespaces {
		ns := fmt.Sprintf("%s%d", convergePrefix, i)
		for _, gvr := range cp.childGVRs {
			list, err := cp.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			for _, c := range list.Items {
				body := maps.Clone(c.Object)
				delete(body, "metadata")
				delete(body, "status")
				b, _ := json.Marshal(body)
				sum := sha256.Sum256(b)
				ch := child{what: c.GetKind() + " " + ns + "/" + c.GetName(), kind: c.GetKind(), rv: c.GetResourceVersion(), body: hex.EncodeToString(sum[:8])}
				for _, m := range c.GetManagedFields() {
					if m.Manager == "metacontroller" {
						ch.applied = ch.applied || m.Operation == metav1.ManagedFieldsOperationApply
						ch.updated = ch.updated || m.Operation == metav1.ManagedFieldsOperationUpdate
					}
				}
				if c.GetKind() == "Deployment" || c.GetKind() == "StatefulSet" {
					sel, _, _ := unstructured.NestedMap(c.Object, "spec", "template", "spec", "nodeSelector")
					if sel == nil {
						sel = map[string]any{}
					}
					ch.nodeSelector = sel
				}
				out[c.GetUID()] = ch
			}
		}
	}
	return out, nil
}
