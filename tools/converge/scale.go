package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Issue #52's comparison at scale (`make converge-scale`): Monocles as
// users write them, each naming a Secret of its own (spec.secretRef), in a
// cluster that holds other Secrets and ConfigMaps no Monocle names. With a
// secretRef the customize hook asks for Secrets, so Metacontroller matches
// every Secret event against every parent's rules
// (pkg/controller/common/customize/manager.go, findRelatedParents, v4.17.2);
// the unrelated objects are what a real cluster's Secrets and ConfigMaps
// cost it: its cache holds every object of its child kinds.
//
// For each N, the seed's operator then Metacontroller + the hook, one run
// each on a fresh control plane (their CRDs clash), the same objects around
// them: the seed's CRD has no secretRef, but its cluster holds the same
// Secrets. The machine's load average is read before and after each run:
// on shared cores the figures move with it.

// tokensSecret names Monocle i's own Secret, which its spec.secretRef names.
func tokensSecret(i int) string { return monocleName(i) + "-tokens" }

// makeReferenced creates, before the clock starts, each Monocle's own Secret
// (-secret-refs) and the unrelated Secrets and ConfigMaps (-unrelated), spread
// over the Monocles' namespaces.
func makeReferenced(ctx context.Context, o options, dyn dynamic.Interface) error {
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	object := func(kind, namespace, name, key, value string) *unstructured.Unstructured {
		field := "data"
		if kind == "Secret" {
			field = "stringData"
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": namespace},
			field:      map[string]any{key: value},
		}}
	}
	namespace := func(i int) string { return fmt.Sprintf("%s%d", convergePrefix, i%o.namespaces) }
	if o.secretRefs {
		if err := parallel(ctx, o.clients, o.monocles, func(ctx context.Context, i int) error {
			s := object("Secret", namespace(i), tokensSecret(i), "GITHUB_TOKEN", fmt.Sprintf("token-of-%s", monocleName(i)))
			_, err := dyn.Resource(secrets).Namespace(s.GetNamespace()).Create(ctx, s, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("creating the Monocles' Secrets: %w", err)
		}
	}
	if err := parallel(ctx, o.clients, 2*o.unrelated, func(ctx context.Context, i int) error {
		gvr, kind := secrets, "Secret"
		if i%2 == 1 {
			gvr, kind = configMaps, "ConfigMap"
		}
		u := object(kind, namespace(i/2), fmt.Sprintf("unrelated-%05d", i/2), "value", strings.Repeat("x", 256))
		_, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating the unrelated Secrets and ConfigMaps: %w", err)
	}
	return nil
}

// reconciles reads from a controller-runtime operator's metrics how many
// reconciles it ran, all controllers and results.
func reconciles(ctx context.Context, client *http.Client, url string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		// controller_runtime_reconcile_total{controller="monocle",result="success"} 2013
		if !strings.HasPrefix(sc.Text(), "controller_runtime_reconcile_total{") {
			continue
		}
		fields := strings.Fields(sc.Text())
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", url, sc.Text(), err)
		}
		sum, found = sum+v, true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("%s: no controller_runtime_reconcile_total", url)
	}
	return sum, nil
}

// loadAverage is the machine's 1-minute load average, as uptime prints it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// scaleRow is one run of the comparison.
type scaleRow struct {
	controller  string
	n           int
	res         result
	loadBefore  string
	loadAfter   string
	controllerP string // its process's name in res.hwm and res.cpu
}

func (r scaleRow) seconds() float64 { return r.res.children.Seconds() }

// hookCPU and hookMiB are the hook's, in Metacontroller's rows only: the
// seed's run starts the hook but never calls it.
func (r scaleRow) hookCPU() float64 {
	if r.controller == seedName {
		return 0
	}
	return r.res.cpu["monocle-hook"].Seconds()
}

func (r scaleRow) hookMiB() float64 {
	if r.controller == seedName {
		return 0
	}
	return float64(r.res.hwm["monocle-hook"]) / (1 << 20)
}

// cpu and rssMiB are the controller's with the hook's.
func (r scaleRow) cpu() float64    { return r.res.cpu[r.controllerP].Seconds() + r.hookCPU() }
func (r scaleRow) rssMiB() float64 { return float64(r.res.hwm[r.controllerP])/(1<<20) + r.hookMiB() }

// scale runs the comparison for each size of sizes.
func scale(o options, sizes string, seedCRDs []string) error {
	if o.seed == "" || len(seedCRDs) == 0 || seedCRDs[0] == "" || o.metacontroller == "" {
		return errors.New("-scale needs -seed BIN, -seed-crds FILES and -metacontroller BIN (or METACONTROLLER)")
	}
	if o.assets == "" {
		return errors.New("KUBEBUILDER_ASSETS is not set; run: export KUBEBUILDER_ASSETS=$(tools/assets.sh)")
	}
	for what, path := range map[string]string{"Metacontroller": o.metacontroller, "the seed's operator": o.seed, "the hook (make build)": o.hook} {
		if fi, err := os.Stat(path); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("%s: %s is not an executable file", what, path)
		}
	}
	if o.workdir == "" {
		dir, err := os.MkdirTemp("", "converge-scale-")
		if err != nil {
			return err
		}
		o.workdir = dir
	}
	var ns []int
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-scale %q: %q is not a count of Monocles", sizes, s)
		}
		ns = append(ns, n)
	}
	fmt.Printf("converge -scale: %v Monocles in %d namespaces, secretRefs %v, %d unrelated Secrets and %d ConfigMaps; Metacontroller flags %s, env %s, %d replicas; logs in %s\n",
		ns, o.namespaces, o.secretRefs, o.unrelated, o.unrelated, strings.Join(o.mcFlags, " "), strings.Join(o.mcEnv, " "), o.replicas, o.workdir)
	ctx, stop := signalContext()
	defer stop()
	var rows []scaleRow
	for _, n := range ns {
		seed := o
		seed.monocles, seed.runs, seed.floors = n, 1, false
		seed.metacontroller, seed.crds, seed.replicas, seed.mcFlags, seed.mcEnv, seed.clusterRole = o.seed, seedCRDs, 1, nil, nil, nil
		seed.workdir = filepath.Join(o.workdir, "seed")
		mc := o
		mc.monocles, mc.runs, mc.floors, mc.seed = n, 1, false, ""
		mc.workdir = filepath.Join(o.workdir, "metacontroller")
		for _, run := range []struct {
			o    options
			name string
		}{{seed, seedName}, {mc, "metacontroller"}} {
			row := scaleRow{controller: run.name, n: n, controllerP: run.name, loadBefore: loadAverage()}
			start := time.Now()
			res, err := runOnce(ctx, run.o, 1)
			if err != nil {
				return fmt.Errorf("%s, %d Monocles: %w", run.name, n, err)
			}
			row.res, row.loadAfter = res, loadAverage()
			fmt.Printf("%s, %d Monocles (%s in all, load %s then %s): %s\n", run.name, n, time.Since(start).Round(time.Second), row.loadBefore, row.loadAfter, res)
			rows = append(rows, row)
		}
	}
	printScale(rows)
	return nil
}

func printScale(rows []scaleRow) {
	fmt.Printf("\n| controller | N | children s | every status s | settled s | CPU s: controller, hook, kube-apiserver | VmHWM MiB: controller, hook | syncs per Monocle (converging) | its API requests converging | load average before, after |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Printf("| %s | %d | %.1f | %.1f | %.1f | %.1f, %.1f, %.1f | %.0f, %.0f | %.2f | %v | %s, %s |\n",
			r.controller, r.n, r.res.children.Seconds(), r.res.status.Seconds(), r.res.settled.Seconds(),
			r.res.cpu[r.controllerP].Seconds(), r.hookCPU(), r.res.cpu["kube-apiserver"].Seconds(),
			float64(r.res.hwm[r.controllerP])/(1<<20), r.hookMiB(),
			r.res.syncsConverging/float64(r.n), r.res.mcRequests, r.loadBefore, r.loadAfter)
	}
	byKey := map[string]scaleRow{}
	for _, r := range rows {
		byKey[fmt.Sprintf("%s/%d", r.controller, r.n)] = r
	}
	fmt.Println()
	for i, r := range rows {
		if r.controller != "metacontroller" {
			continue
		}
		if s, ok := byKey[fmt.Sprintf("%s/%d", seedName, r.n)]; ok {
			fmt.Printf("at %d: Metacontroller + hook take %.2fx the seed's time (goal <= 1), hold %.2fx its RSS (goal <= 2), spend %.2fx its CPU\n",
				r.n, r.seconds()/s.seconds(), r.rssMiB()/s.rssMiB(), r.cpu()/s.cpu())
		}
		for _, prev := range rows[:i] {
			if prev.controller == r.controller && prev.n < r.n {
				fmt.Printf("from %d to %d: Metacontroller + hook time %.2fx, CPU %.2fx, kube-apiserver CPU %.2fx (goal <= 2.1x for %.1fx the Monocles)\n",
					prev.n, r.n, r.seconds()/prev.seconds(), r.cpu()/prev.cpu(),
					r.res.cpu["kube-apiserver"].Seconds()/prev.res.cpu["kube-apiserver"].Seconds(), float64(r.n)/float64(prev.n))
			}
		}
	}
}

// signalContext is done on an interrupt: a run then stops its processes
// and control planes, which would outlive this program otherwise.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
