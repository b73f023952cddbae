package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// proveJanitor (-prove-janitor): the Job `kubectl monocle janitor` makes
// carries an owner reference to its Monocle that is not a controller's,
// and no controller-uid label. Metacontroller claims a child whose
// controller is the parent, or adopts one with no controller that matches
// the parent's selector (controller-uid, generateSelector), and deletes
// what it claims but the hook does not answer
// (pkg/third_party/kubernetes/controller_ref_manager.go). Here the real
// Metacontroller syncs a Monocle while such a Job exists, and the Job must
// be left as it was; then the Monocle is deleted, and the garbage
// collector must delete the Job with it.
func proveJanitor(ctx context.Context, o options) error {
	if !o.asInACluster {
		return errors.New("-prove-janitor runs as in a cluster only: the garbage collector is kube-controller-manager's")
	}
	dir := filepath.Join(o.workdir, "janitor")
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
	ctx, cancel := context.WithCancel(ctx)
	const ns, name = "team", "m"
	cp, err := startControlPlane(ctx, o, cc, []string{ns})
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
	if _, _, err := askHook(ctx, &http.Client{Timeout: 10 * time.Second}, hookURL+"/sync", newMonocle(cp.parentGVR, cp.parentKind, ns, name)); err != nil {
		return err
	}
	kubeconfig, err := controllerKubeconfig(ctx, o, cp, dir)
	if err != nil {
		return err
	}
	kcm, err := startControllerManager(cp, dir)
	if err != nil {
		return err
	}
	defer kcm.stop()
	mc, err := startMetacontroller(ctx, o, dir, "metacontroller", kubeconfig)
	if err != nil {
		return err
	}
	defer mc.stop()

	monocle, err := cp.dyn.Resource(cp.parentGVR).Namespace(ns).Create(ctx, newMonocle(cp.parentGVR, cp.parentKind, ns, name), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	deployments := cp.dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := deployments.Get(ctx, name+"-api", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("no Deployment %s-api made by Metacontroller: %w", name, err)
	}

	jobs := cp.dyn.Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}).Namespace(ns)
	job, err := jobs.Create(ctx, janitorJob(ns, name, cp.parentGVR.GroupVersion().String(), cp.parentKind, monocle.GetUID()), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("janitor: Job %s created, owned by Monocle %s (not as controller), no controller-uid label\n", job.GetName(), name)
	// Syncs: the Monocle edited three times (each a sync of it and its
	// children), then Metacontroller's own resyncs within the window.
	for i := range 3 {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"converge/poke":"%d"}}}`, i)
		if _, err := cp.dyn.Resource(cp.parentGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return err
		}
		time.Sleep(3 * time.Second)
	}
	time.Sleep(escapeWindow)
	after, err := jobs.Get(ctx, job.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("the janitor Job %s was deleted by Metacontroller; logs in %s", job.GetName(), dir)
	case err != nil:
		return err
	case metav1.GetControllerOf(after) != nil || len(after.GetOwnerReferences()) != 1 || after.GetLabels()["controller-uid"] != "":
		return fmt.Errorf("the janitor Job was changed by Metacontroller: owners %v, labels %v; logs in %s", after.GetOwnerReferences(), after.GetLabels(), dir)
	}
	log, _ := os.ReadFile(mc.logPath)
	mentions := strings.Count(string(log), job.GetName())
	fmt.Printf("janitor: after 3 edits of the Monocle and %s, the Job is as it was (resourceVersion %s -> %s: the Job controller's status only); Metacontroller's log names it %d times\n",
		escapeWindow, job.GetResourceVersion(), after.GetResourceVersion(), mentions)
	if after.GetGeneration() != job.GetGeneration() {
		return fmt.Errorf("the janitor Job's spec changed (generation %d -> %d)", job.GetGeneration(), after.GetGeneration())
	}

	background := metav1.DeletePropagationBackground
	if err := cp.dyn.Resource(cp.parentGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		return err
	}
	start := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := jobs.Get(ctx, job.GetName(), metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		return fmt.Errorf("the janitor Job outlived its Monocle by 2 minutes: %w", err)
	}
	fmt.Printf("janitor: Monocle %s deleted; the garbage collector deleted its janitor Job %.1f s later; logs in %s\n", name, time.Since(start).Seconds(), dir)
	return nil
}

// janitorJob is a Job as kubectl monocle janitor makes it, as far as
// Metacontroller and the garbage collector read it: its labels, its owner
// (the Monocle, not as controller), its TTL.
func janitorJob(ns, monocle, apiVersion, kind string, uid types.UID) *unstructured.Unstructured {
	labels := map[string]any{"app.kubernetes.io/name": "monocle", "app.kubernetes.io/instance": monocle, "app.kubernetes.io/component": "janitor"}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": monocle + "-janitor-0123456789", "namespace": ns, "labels": labels,
			"ownerReferences": []any{map[string]any{"apiVersion": apiVersion, "kind": kind, "name": monocle, "uid": string(uid)}}},
		"spec": map[string]any{
			"backoffLimit": int64(1), "ttlSecondsAfterFinished": int64(3600),
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{
					"name": "janitor", "image": "quay.io/change-metrics/monocle:1.11.2",
					"command": []any{"monocle", "janitor", "update-idents", "--elastic", "$(MONOCLE_ELASTIC_URL)", "--config", "/etc/monocle/config.yaml"},
				}}},
			},
		},
	}}
}
