// converge measures how long the real Metacontroller, calling this hook,
// takes to create the children of N Monocles in M namespaces, next to the
// time the same objects take when created directly (the floor), on the real
// etcd + kube-apiserver the e2e tests run. `make converge` runs it; see
// BENCHMARKS.md for the figures and what they mean.
//
// Every run starts the hook (bin/monocle-hook, listening on 127.0.0.1) and
// two fresh control planes in turn (envtest, from KUBEBUILDER_ASSETS), each
// with the Monocle CRD and Metacontroller's CRDs, and watches on every
// namespace, as a controller has. The first gets the CompositeController of
// metacontroller/compositecontroller.yaml, its hook URLs pointed at the
// local hook, and:
//
//  1. Metacontroller starts, with -mc-flags followed by the few this program
//     sets, which win: the kubeconfig of the local API server, loopback-only
//     metrics and health addresses, no pprof (-mc-pprof: on loopback). A warm-up Monocle is applied
//     and awaited: caches synced, the hook answering.
//  2. Convergence. N Monocles are created in M namespaces by -clients
//     parallel clients with no rate limit; the watches time the moment
//     every Monocle has all its children and the moment every Monocle's
//     status is written (status.observedGeneration = metadata.generation).
//     A listing then checks that every Monocle has every child.
//  3. Settling: the hook's status reports the children it observes, so a
//     Monocle's status may be written once more after its children exist.
//     Settled is the last write to a Monocle or child before -settle passes
//     with none (cut at -settle-max: a hot loop never settles).
//  4. The quiet window. The resourceVersions of every child and Monocle are
//     listed, and listed again -quiet later: any change is a rewrite.
//     Metacontroller's in-place updates are counted from its log ("Updating",
//     logged at info level for each InPlace update), until settled and in
//     the window; the hook's syncs from its metrics.
//     With -steady D, a steady window of D follows (steady.go): the hook's
//     syncs, the API server's writes and the CPU of a converged install.
//  5. Peak memory (VmHWM) of the hook, Metacontroller, kube-apiserver and
//     etcd; the CPU time each (and this program) spent from the first
//     Monocle's create until every status was written.
//
// Two more control planes, each as fresh as the first was, get a warm-up
// Monocle written as step 7 writes one (as step 1 had one), then a floor:
//
//  6. The floor: for N Monocles in M namespaces (the Monocles themselves
//     are not created), the hook is asked for the children of a new
//     Monocle; each gets what Metacontroller adds when it creates a child
//     (namespace, controller-uid label, last-applied annotation, controller
//     ownerReference). Then the same -clients parallel clients create them
//     all: what the API server takes to store the same objects, with no
//     controller in the way. And the CPU time it took, next to step 5's:
//     on a machine of few cores, a controller's own CPU is taken from the
//     API server's.
//  7. The job's floor, the whole job with no controller: the same -clients
//     parallel clients each take a Monocle in turn, create it, create its
//     children as step 6 does (owned by the UID it was given), and write
//     the status the hook answered, once: every write Metacontroller's path
//     makes at the least (the Monocle is the user's, the rest
//     Metacontroller's), with no watch-driven sync between them. Step 2's
//     "every status written" next to it is Metacontroller's own cost; step
//     6's floor leaves out the Monocles and their statuses.
//
// As in a cluster (-as-in-a-cluster, the default): Metacontroller runs as a
// ServiceAccount (its chart's ClusterRole, all verbs on all resources),
// with a token from the TokenRequest API, so API Priority and Fairness
// queues its requests as any ServiceAccount's (the service-accounts
// FlowSchema); and kube-controller-manager runs its default controllers,
// which make ReplicaSets, Pods and claims and write the children's status.
// Those status writes are not rewrites: the quiet window counts content
// writes (anything but status, resourceVersion, generation and
// managedFields). With -as-in-a-cluster=false, Metacontroller is a
// system:masters user (exempt from APF, as the floor's clients are) and no
// kube-controller-manager runs: the setting of BENCHMARKS.md's first
// Metacontroller tables, kept so that they can be rerun.
//
// -floors=false skips steps 6 and 7 (sizing runs: Metacontroller's memory
// and CPU, not its time against the floor). -mc-env adds environment
// variables to Metacontroller's (GOMEMLIMIT=200MiB).
//
// Only 127.0.0.1 is ever contacted. The exit status is 1 when a run could
// not be set up or did not converge within -timeout; a missed target is
// reported, not an exit status.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"
)

// The target, checked on the medians: the floor, the same children created
// directly, is what the API server itself takes, so Metacontroller's time is
// judged against it.
const (
	targetFloorRatio = 1.1 // children in place within 1.1 x the floor
)

type options struct {
	metacontroller string
	mcFlags        []string
	hook           string
	assets         string
	crds           []string
	controller     string
	monocles       int
	namespaces     int
	runs           int
	clients        int
	quiet          time.Duration
	settle         time.Duration
	settleMax      time.Duration
	timeout        time.Duration
	workdir        string
	asInACluster   bool                // a ServiceAccount's token, and kube-controller-manager
	floors         bool                // steps 6 and 7
	mcEnv          []string            // Metacontroller's extra environment
	seed           string              // the seed's operator, measured instead of Metacontroller (seed.go)
	replicas       int                 // Metacontroller's, under leader election from 2 (replicas.go)
	killLeader     bool                // kill the leader once half the Monocles have their children
	clusterRole    []rbacv1.PolicyRule // Metacontroller's; nil: its chart's default, everything
	secretRefs     bool                // each Monocle names a Secret of its own (spec.secretRef), made before it (scale.go)
	unrelated      int                 // Secrets and ConfigMaps, this many of each, that no Monocle names (scale.go)
	mcPprof        bool                // Metacontroller serves pprof on a loopback address, printed
	steady         time.Duration       // after the quiet window, the steady window's length (steady.go); 0: none
}

// controllerName is the process measured: Metacontroller, or the seed's
// operator in its place.
func (o options) controllerName() string {
	if o.seed != "" {
		return seedName
	}
	return "metacontroller"
}

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "converge:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	var o options
	var mcFlags, crds string
	flag.StringVar(&o.metacontroller, "metacontroller", os.Getenv("METACONTROLLER"), "the Metacontroller v4.17.2 binary (built from its source; see docs/development.md)")
	flag.StringVar(&mcFlags, "mc-flags", "", "Metacontroller's flags, space-separated (e.g. \"--client-go-qps=200 --client-go-burst=400 --workers=20\"); empty: its defaults")
	flag.StringVar(&o.hook, "hook", "bin/monocle-hook", "the hook binary (make build)")
	flag.StringVar(&o.assets, "assets", os.Getenv("KUBEBUILDER_ASSETS"), "the folder with etcd and kube-apiserver (tools/assets.sh)")
	flag.StringVar(&crds, "crds", "crd/monocle.yaml,e2e/testdata/metacontroller-crds-v1.yaml", "CRD files to install, comma-separated")
	flag.StringVar(&o.controller, "controller", "metacontroller/compositecontroller.yaml", "the CompositeController (its hook URLs are replaced by the local hook's)")
	flag.IntVar(&o.monocles, "monocles", 50, "N: Monocles to create")
	flag.IntVar(&o.namespaces, "namespaces", 10, "M: namespaces to spread them over")
	flag.IntVar(&o.runs, "runs", 3, "runs, each on a fresh control plane; figures are their medians")
	flag.IntVar(&o.clients, "clients", 10, "parallel clients that create the floor's objects and the Monocles")
	flag.DurationVar(&o.settle, "settle", 5*time.Second, "convergence has settled once no Monocle or child has been written for this long")
	flag.DurationVar(&o.settleMax, "settle-max", 2*time.Minute, "stop waiting for writes to settle after this long (a hot loop), and start the quiet window")
	flag.DurationVar(&o.quiet, "quiet", 30*time.Second, "the quiet window after settling, in which no object should be written")
	flag.DurationVar(&o.steady, "steady", 0, "after the quiet window, measure a steady window this long: the hook's syncs, the API server's writes on Monocles and children, CPU (steady.go); 0: none")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up on a run that has not converged after this long")
	flag.StringVar(&o.workdir, "workdir", "", "where the processes' logs go (default: a new temporary folder)")
	flag.BoolVar(&o.asInACluster, "as-in-a-cluster", true, "Metacontroller as a ServiceAccount (APF applies) and kube-controller-manager running; false: a system:masters user, no controller manager")
	flag.BoolVar(&o.floors, "floors", true, "measure the floors (steps 6 and 7); false for sizing runs")
	var mcEnv string
	var switchOnly, escapeOnly, janitorOnly, upgradeOrderOnly bool
	var old oldRelease
	var oldValues string
	flag.StringVar(&o.seed, "seed", "", "the seed's controller-runtime operator (change-metrics/monocle-operator, built outside the repo), measured in Metacontroller's place with its own CRD (-crds)")
	flag.BoolVar(&switchOnly, "prove-switch", false, "instead of measuring: switch a running install from dynamic apply to server-side apply, and say whether it is safe (switch.go)")
	flag.BoolVar(&escapeOnly, "prove-escape", false, "instead of measuring: prove whether a tenant who edits a Monocle's children makes Metacontroller write outside its namespace, under both apply strategies; exit 1 if it does (escape.go)")
	flag.BoolVar(&upgradeOrderOnly, "prove-upgrade-order", false, "instead of measuring: upgrade the chart before Metacontroller's values, from the old release (-old-hook, -old-controller, -old-values) to this one, and show that no Monocle is synced, that monocle-hook check says NotSynced, and how long after the new values Monocles are synced again; exit 1 if any of it is not so (upgradeorder.go)")
	flag.StringVar(&old.hook, "old-hook", "", "with -prove-upgrade-order: the old release's hook binary")
	flag.StringVar(&old.controller, "old-controller", "", "with -prove-upgrade-order: the old release's CompositeController file")
	flag.StringVar(&oldValues, "old-values", "", "with -prove-upgrade-order: the old release's Metacontroller values files, comma-separated")
	flag.BoolVar(&janitorOnly, "prove-janitor", false, "instead of measuring: prove that Metacontroller leaves alone the Job kubectl monocle janitor makes (owned by the Monocle, not as controller) and that it goes with its Monocle; exit 1 if not (janitor.go)")
	flag.StringVar(&mcEnv, "mc-env", "", "Metacontroller's extra environment, space-separated (e.g. \"GOMEMLIMIT=200MiB\")")
	var values string
	flag.StringVar(&values, "values", "", "values files of Metacontroller's chart, comma-separated and layered as helm -f does: Metacontroller runs with their commandArgs, env, clusterRole.rules and replicas (-mc-flags and -mc-env add to them)")
	flag.BoolVar(&o.secretRefs, "secret-refs", false, "each Monocle names a Secret of its namespace in spec.secretRef (the hook's CRD only), created before the clock starts")
	flag.BoolVar(&o.mcPprof, "mc-pprof", false, "Metacontroller serves pprof on a free loopback address each replica prints (to profile where its CPU goes)")
	flag.IntVar(&o.unrelated, "unrelated", 0, "Secrets and ConfigMaps (this many of each) in the Monocles' namespaces that no Monocle names, created before the clock starts")
	var scaleSizes, seedCRDs string
	flag.StringVar(&scaleSizes, "scale", "", "instead of one measurement: for each N of this comma-separated list, the seed's operator (-seed, -seed-crds) then Metacontroller, one run each on a fresh control plane, compared (scale.go)")
	flag.StringVar(&seedCRDs, "seed-crds", "", "with -scale: the CRD files of the seed's run, comma-separated (its config/crd/bases file and Metacontroller's)")
	flag.BoolVar(&o.killLeader, "kill-leader", false, "with 2 replicas or more: kill the leader (SIGKILL) once half the Monocles have their children")
	flag.Parse()
	o.replicas = 1
	if values != "" {
		v, err := readValues(strings.Split(values, ","))
		if err != nil {
			return err
		}
		o.mcFlags, o.clusterRole, o.replicas = v.CommandArgs, v.ClusterRole.Rules, max(v.Replicas, 1)
		for _, e := range v.Env {
			o.mcEnv = append(o.mcEnv, e.Name+"="+e.Value)
		}
	}
	o.mcFlags = append(o.mcFlags, strings.Fields(mcFlags)...)
	o.mcEnv = append(o.mcEnv, strings.Fields(mcEnv)...)
	if o.killLeader && (o.replicas < 2 || !slices.Contains(o.mcFlags, "--leader-election")) {
		return errors.New("-kill-leader needs 2 replicas or more under --leader-election (-values)")
	}
	o.crds = strings.Split(crds, ",")

	// envtest and controller-runtime log through this; they say little.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	if scaleSizes != "" {
		return scale(o, scaleSizes, strings.Split(seedCRDs, ","))
	}
	// Never a silent pass: no Metacontroller, no benchmark.
	if o.seed != "" {
		o.metacontroller = o.seed
	}
	if o.metacontroller == "" {
		return errors.New("no Metacontroller binary: set METACONTROLLER=/path/to/metacontroller (v4.17.2, built from its source as docs/development.md says)")
	}
	for what, path := range map[string]string{"Metacontroller": o.metacontroller, "the hook (make build)": o.hook} {
		if fi, err := os.Stat(path); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("%s: %s is not an executable file", what, path)
		}
	}
	if o.assets == "" {
		return errors.New("KUBEBUILDER_ASSETS is not set; run: export KUBEBUILDER_ASSETS=$(tools/assets.sh)")
	}
	if o.monocles < 1 || o.namespaces < 1 || o.runs < 1 || o.clients < 1 {
		return errors.New("-monocles, -namespaces, -runs and -clients must be at least 1")
	}
	if o.workdir == "" {
		dir, err := os.MkdirTemp("", "converge-")
		if err != nil {
			return err
		}
		o.workdir = dir
	}

	flags := strings.Join(o.mcFlags, " ")
	if flags == "" {
		flags = "(defaults)"
	}
	if len(o.mcEnv) > 0 {
		flags = strings.Join(o.mcEnv, " ") + " " + flags
	}
	if upgradeOrderOnly {
		if old.hook == "" || old.controller == "" || oldValues == "" {
			return errors.New("-prove-upgrade-order needs -old-hook, -old-controller and -old-values (make converge-upgrade-order builds them from the old release's tag)")
		}
		old.values = strings.Split(oldValues, ",")
	}
	if escapeOnly || janitorOnly || upgradeOrderOnly {
		// One Monocle (per strategy): -monocles, -namespaces and -runs do not apply.
		fmt.Printf("converge: -prove-escape, -prove-janitor or -prove-upgrade-order, Metacontroller flags %s; logs in %s\n", flags, o.workdir)
	} else {
		fmt.Printf("converge: %d Monocles in %d namespaces, %d runs, Metacontroller flags %s, %d replicas, as in a cluster %v, load average %s; logs in %s\n",
			o.monocles, o.namespaces, o.runs, flags, o.replicas, o.asInACluster, loadAverage(), o.workdir)
	}
	// Interrupted, a run stops its processes and control planes: envtest's
	// etcd and kube-apiserver would outlive this program otherwise.
	ctx, stop := signalContext()
	defer stop()
	if switchOnly {
		return proveSwitch(ctx, o)
	}
	if escapeOnly {
		return proveEscape(ctx, o)
	}
	if janitorOnly {
		return proveJanitor(ctx, o)
	}
	if upgradeOrderOnly {
		return proveUpgradeOrder(ctx, o, old)
	}
	var results []result
	for i := 1; i <= o.runs; i++ {
		r, err := runOnce(ctx, o, i)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		fmt.Printf("run %d: %s\n", i, r)
		results = append(results, r)
	}
	if o.floors {
		summarize(o, flags, results)
	} else {
		summarizeSizing(o, flags, results)
	}
	return nil
}

// result is what one run measured.
type result struct {
	perMonocle        int           // children the hook answers for a new Monocle
	floorObjects      int           // objects the floor created
	clients           int           // ... with this many parallel clients
	floor             time.Duration // the floor's objects, created directly
	children          time.Duration // from the first Monocle's create to its last child
	status            time.Duration // ... to the last status written
	settled           time.Duration // ... to the last write to a Monocle or child before the quiet window
	updatesConverging int           // Metacontroller's in-place updates while converging
	updatesQuiet      int           // ... in the quiet window
	rewrittenChildren int           // children whose resourceVersion moved in the quiet window
	rewrittenParents  int           // Monocles whose resourceVersion moved in the quiet window
	syncsConverging   float64       // the hook's sync requests until settled
	syncsQuiet        float64       // ... in the quiet window
	hookSeconds       float64       // the hook's time answering them until settled (its histogram's sum)
	mcErrors          int           // Metacontroller's error log lines
	hwm               map[string]int64
	cpu               map[string]time.Duration // CPU time from the first Monocle's create to every status written
	floorCPU          map[string]time.Duration // CPU time creating the floor's objects
	jobFloor          time.Duration            // the Monocles, their children and their statuses, written directly
	jobFloorCPU       map[string]time.Duration // CPU time writing them
	mcRequests        map[string]float64       // Metacontroller's API requests by method until every status was written
	mcHeap            float64                  // Metacontroller's go_memstats_heap_inuse_bytes after the quiet window
	mcLogConverging   int64                    // bytes Metacontroller logged until settled
	mcLogQuiet        int64                    // ... in the quiet window
	statusWrites      int                      // children whose resourceVersion moved in the quiet window, content unchanged
	childRewrites     int                      // content writes to children after their create, to the end of the quiet window
	takeover          takeover                 // the leader's kill, with -kill-leader
	killedCPU         time.Duration            // the killed leader's CPU time from the first Monocle's create
	forbidden         int                      // Metacontroller's log lines saying a request was forbidden
}

// total is the CPU time of every process measured.
func total(cpu map[string]time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range cpu {
		sum += d
	}
	return sum
}

func (r result) String() string {
	return fmt.Sprintf("floor %.1f s (%d objects, %d clients); Metacontroller: children %.1f s (%.2fx floor), status %.1f s, settled %.1f s; "+
		"in-place updates %d converging, %d quiet; rewritten in the quiet window: %d children, %d Monocles; "+
		"hook syncs %.0f (%.2f s) converging, %.0f quiet; Metacontroller's API requests converging %v; Metacontroller errors logged %d; VmHWM %s; CPU converging %s; CPU of the floor %s; "+
		"job floor %.1f s (status %.2fx it), its CPU %s; Metacontroller's heap in use %.0f MiB, its log %d KiB converging and %d KiB quiet; status-only writes in the quiet window %d; children written after their create %d; forbidden log lines %d; the leader killed at %.1f s (%d Monocles with their children), a standby led %.1f s later",
		r.floor.Seconds(), r.floorObjects, r.clients, r.children.Seconds(), r.children.Seconds()/r.floor.Seconds(), r.status.Seconds(), r.settled.Seconds(),
		r.updatesConverging, r.updatesQuiet, r.rewrittenChildren, r.rewrittenParents,
		r.syncsConverging, r.hookSeconds, r.syncsQuiet, r.mcRequests, r.mcErrors, formatMiB(r.hwm), formatCPU(r.cpu), formatCPU(r.floorCPU),
		r.jobFloor.Seconds(), r.status.Seconds()/r.jobFloor.Seconds(), formatCPU(r.jobFloorCPU),
		r.mcHeap/(1<<20), r.mcLogConverging>>10, r.mcLogQuiet>>10, r.statusWrites, r.childRewrites, r.forbidden, r.takeover.at.Seconds(), r.takeover.children, r.takeover.after.Seconds())
}

var processNames = []string{"monocle-hook", "metacontroller", "metacontroller-standby", "metacontroller-killed", seedName, "kube-apiserver", "etcd", "kube-controller-manager"}

// self names this program's own CPU time: its clients and its watches.
const self = "converge"

func formatMiB(m map[string]int64) string {
	var parts []string
	for _, name := range processNames {
		parts = append(parts, fmt.Sprintf("%s %.0f MiB", name, float64(m[name])/(1<<20)))
	}
	return strings.Join(parts, ", ")
}

func formatCPU(m map[string]time.Duration) string {
	parts := []string{fmt.Sprintf("%.1f s", total(m).Seconds())}
	for _, name := range append(processNames, self) {
		if d, ok := m[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f", name, d.Seconds()))
		}
	}
	return strings.Join(parts, " ")
}

// processes maps the names of this program, of its child processes
// (envtest's etcd and kube-apiserver among them) and of extra to their PIDs.
func processes(extra map[string]int) map[string]int {
	procs := map[string]int{self: os.Getpid()}
	for name, pid := range childrenByName() {
		if slices.Contains(processNames, name) {
			procs[name] = pid
		}
	}
	maps.Copy(procs, extra)
	return procs
}

// cpuSince is the CPU time each process spent since before.
func cpuSince(procs map[string]int, before map[string]time.Duration) map[string]time.Duration {
	after := cpuTimes(procs)
	spent := map[string]time.Duration{}
	for name := range procs {
		if a, ok := after[name]; ok { // not killed
			spent[name] = a - before[name]
		}
	}
	return spent
}

// A run's names: the Monocles under test, the floor's namespaces, the
// warm-up Monocle.
const (
	convergePrefix = "conv-"
	floorPrefix    = "floor-"
	warmupNS       = "warmup"
)

func monocleName(i int) string { return fmt.Sprintf("m%04d", i) }

func runOnce(ctx context.Context, o options, run int) (res result, err error) {
	dir := filepath.Join(o.workdir, fmt.Sprintf("n%d-run%d", o.monocles, run))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}

	// The hook, for both control planes.
	hookAddr, err := freeLoopbackAddress()
	if err != nil {
		return res, err
	}
	hook, err := startProcess(filepath.Join(dir, "hook.log"), o.hook, nil, "--listen", hookAddr)
	if err != nil {
		return res, err
	}
	defer hook.stop()
	if err := waitHealthy(ctx, hook, "http://"+hookAddr+"/healthz"); err != nil {
		return res, fmt.Errorf("the hook: %w", err)
	}
	hookURL := "http://" + hookAddr

	if err := converge(ctx, o, run, dir, hook, hookURL, &res); err != nil {
		return res, err
	}
	if !o.floors {
		return res, nil
	}
	if res.floor, res.floorCPU, err = writeDirectly(ctx, o, run, hookURL, false); err != nil {
		return res, fmt.Errorf("the floor: %w", err)
	}
	res.floorObjects, res.clients = o.monocles*res.perMonocle, o.clients
	if res.jobFloor, res.jobFloorCPU, err = writeDirectly(ctx, o, run, hookURL, true); err != nil {
		return res, fmt.Errorf("the job's floor: %w", err)
	}
	return res, nil
}

// controlPlane is a fresh etcd + kube-apiserver with the CRDs installed.
type controlPlane struct {
	env    *envtest.Environment
	dyn    *dynamic.DynamicClient
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// The Monocle resource, from the CompositeController, and its kind.
	parentGVR  schema.GroupVersionResource
	parentKind string
	childGVRs  []schema.GroupVersionResource
}

// startControlPlane starts a control plane as e2e/main_test.go does, and
// makes the namespaces named.
func startControlPlane(ctx context.Context, o options, cc *unstructured.Unstructured, namespaces []string) (*controlPlane, error) {
	env := &envtest.Environment{
		BinaryAssetsDirectory: o.assets,
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: o.crds, ErrorIfPathMissing: true},
		// envtest's 20 s is short for an API server holding thousands of
		// objects on a busy machine.
		ControlPlaneStopTimeout: time.Minute,
	}
	// envtest's default Service range is a /24: 254 ClusterIPs, fewer than
	// the Services of 200 Monocles (two each).
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	cp := &controlPlane{env: env}
	// Our clients have no client-side rate limit: the floor is the API
	// server's, not client-go's.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	if cp.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		cp.stop(0)
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		cp.stop(0)
		return nil, err
	}
	cp.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	if cp.parentGVR, cp.parentKind, cp.childGVRs, err = resourcesOf(cc, cp.mapper); err != nil {
		cp.stop(0)
		return nil, err
	}
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for _, ns := range namespaces {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := cp.dyn.Resource(nsGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			cp.stop(0)
			return nil, err
		}
	}
	return cp, nil
}

// stop stops the control plane. The measurement is done by then: a slow
// stop is only reported.
func (cp *controlPlane) stop(run int) {
	if err := cp.env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "converge: run %d: stopping the control plane: %v\n", run, err)
	}
}

// watch follows, until ctx is done, the Monocles and the children in every
// namespace, telling tr.
func (cp *controlPlane) watch(ctx context.Context, tr *tracker) error {
	informers := dynamicinformer.NewDynamicSharedInformerFactory(cp.dyn, 0)
	for _, gvr := range cp.childGVRs {
		if _, err := informers.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { tr.childSeen(gvr.Resource, obj) },
			UpdateFunc: tr.childWritten,
			DeleteFunc: tr.written,
		}); err != nil {
			return err
		}
	}
	if _, err := informers.ForResource(cp.parentGVR).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    tr.parentSeen,
		UpdateFunc: func(_, obj any) { tr.parentSeen(obj) },
	}); err != nil {
		return err
	}
	informers.Start(ctx.Done())
	for gvr, ok := range informers.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("watching %s never synced", gvr)
		}
	}
	return nil
}

// converge runs steps 1 to 5 on a control plane of its own.
func converge(ctx context.Context, o options, run int, dir string, hook *process, hookURL string, res *result) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cc, err := compositeController(o.controller, hookURL)
	if err != nil {
		return err
	}
	namespaces := []string{warmupNS}
	for i := range o.namespaces {
		namespaces = append(namespaces, fmt.Sprintf("%s%d", convergePrefix, i))
	}
	cp, err := startControlPlane(ctx, o, cc, namespaces)
	if err != nil {
		return err
	}
	// The watches end first: the API server waits for them on its way out.
	defer func() {
		cancel()
		cp.stop(run)
	}()
	dyn := cp.dyn

	// The CompositeController, calling the local hook.
	hookClient := &http.Client{Timeout: 10 * time.Second}
	if o.seed == "" {
		ccGVR := schema.GroupVersionResource{Group: "metacontroller.k8s.io", Version: "v1alpha1", Resource: "compositecontrollers"}
		if _, err := dyn.Resource(ccGVR).Create(ctx, cc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating the CompositeController: %w", err)
		}
		// How many children a Monocle has: what the hook answers for a new one.
		probe := newMonocle(cp.parentGVR, cp.parentKind, warmupNS, "probe")
		children, _, err := askHook(ctx, hookClient, hookURL+"/sync", probe)
		if err != nil {
			return err
		}
		res.perMonocle = len(children)
	} else {
		res.perMonocle = seedChildren
	}

	// Watches on every namespace, from now to the end.
	tr := newTracker(o.monocles, res.perMonocle)
	if o.seed != "" {
		tr.statusWritten = seedStatusWritten
	}
	if err := cp.watch(ctx, tr); err != nil {
		return err
	}

	// 1. Metacontroller, on loopback only, and a warm-up Monocle.
	kubeconfig, err := controllerKubeconfig(ctx, o, cp, dir)
	if err != nil {
		return err
	}
	extra := map[string]int{"monocle-hook": hook.cmd.Process.Pid}
	if o.asInACluster {
		kcm, err := startControllerManager(cp, dir)
		if err != nil {
			return err
		}
		defer kcm.stop()
		extra["kube-controller-manager"] = kcm.cmd.Process.Pid
	}
	// After -mc-flags, so that these win (the last of a repeated flag
	// does): the chart's --health-probe-bind-address=:8081 would listen on
	// every interface.
	args := func(metricsAddr, healthAddr string) []string {
		if o.seed != "" {
			return append(slices.Clone(o.mcFlags), "--kubeconfig="+kubeconfig, "--metrics-bind-address="+metricsAddr, "--health-probe-bind-address="+healthAddr)
		}
		pprof := "0"
		if o.mcPprof {
			if addr, err := freeLoopbackAddress(); err == nil {
				pprof = addr
				fmt.Printf("converge: a Metacontroller's pprof: http://%s/debug/pprof/ (metrics http://%s/metrics)\n", addr, metricsAddr)
			}
		}
		args := append(slices.Clone(o.mcFlags),
			"--kubeconfig="+kubeconfig,
			"--metrics-address="+metricsAddr,
			"--health-probe-bind-address="+healthAddr,
			"--pprof-address="+pprof,
		)
		// In a Pod, controller-runtime finds its namespace in the
		// ServiceAccount's mount; here it must be told.
		if slices.Contains(o.mcFlags, "--leader-election") {
			args = append(args, "--leader-election-namespace="+metacontrollerNS)
		}
		return args
	}
	mcs, err := startMetacontrollers(ctx, o, dir, args)
	if err != nil {
		return err
	}
	defer mcs.stop()
	mc := mcs.watchdog
	leader, err := mcs.waitLeader(ctx, hookClient, time.Minute)
	if err != nil {
		return err
	}
	if err := makeReferenced(ctx, o, dyn); err != nil {
		return err
	}
	warmup := newMonocle(cp.parentGVR, cp.parentKind, warmupNS, "warmup")
	if o.seed != "" {
		warmup.Object["spec"] = seedSpec()
	}
	if _, err := dyn.Resource(cp.parentGVR).Namespace(warmupNS).Create(ctx, warmup, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := waitFor(ctx, mc, 3*time.Minute, tr.warmedUp); err != nil {
		return fmt.Errorf("the warm-up Monocle never got its %d children and status: %w", res.perMonocle, err)
	}

	// 2. Convergence.
	for _, r := range mcs.replicas {
		name := o.controllerName()
		if r != leader {
			name += "-standby"
		}
		extra[name] = r.cmd.Process.Pid
	}
	procs := processes(extra)
	cpuBefore := cpuTimes(procs)
	requestsBefore, err := mcs.requests(ctx, hookClient)
	if err != nil {
		return err
	}
	syncsBefore, secondsBefore, err := hookSyncs(ctx, hookClient, hookURL+"/metrics")
	if err != nil {
		return err
	}
	if o.seed != "" { // no hook: its syncs are the seed's reconciles
		if syncsBefore, err = reconciles(ctx, hookClient, leader.metrics); err != nil {
			return err
		}
	}
	updatesBefore, _, _, _, err := countLogs(mcs.logs())
	if err != nil {
		return err
	}
	logBefore := fileSizes(mcs.logs())
	start := time.Now()
	kill := make(chan error, 1)
	if o.killLeader {
		go func() {
			var err error
			res.takeover, err = mcs.killLeader(ctx, hookClient, tr, start, func(r *replica) {
				name := o.controllerName()
				res.hwm = map[string]int64{name + "-killed": procStatusBytes(r.cmd.Process.Pid, "VmHWM")}
				res.killedCPU = cpuTimes(map[string]int{name: r.cmd.Process.Pid})[name] - cpuBefore[name]
				r.lastRequests, _ = clientRequests(ctx, hookClient, r.metrics)
			})
			kill <- err
		}()
	} else {
		close(kill)
	}
	if err := parallel(ctx, o.clients, o.monocles, func(ctx context.Context, i int) error {
		m := newMonocle(cp.parentGVR, cp.parentKind, fmt.Sprintf("%s%d", convergePrefix, i%o.namespaces), monocleName(i))
		switch {
		case o.seed != "":
			m.Object["spec"] = seedSpec()
		case o.secretRefs:
			m.Object["spec"] = map[string]any{"secretRef": map[string]any{"name": tokensSecret(i)}}
		}
		_, err := dyn.Resource(cp.parentGVR).Namespace(m.GetNamespace()).Create(ctx, m, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating the Monocles: %w", err)
	}
	if err := waitFor(ctx, mc, o.timeout, tr.converged); err != nil {
		children, statuses := tr.progress()
		return fmt.Errorf("after %s, %d of %d Monocles have all their children and %d their status: %w",
			time.Since(start).Round(time.Second), children, o.monocles, statuses, err)
	}
	if err := <-kill; err != nil {
		return fmt.Errorf("killing the leader: %w", err)
	}
	res.children, res.status = tr.childrenDone.Sub(start), tr.statusDone.Sub(start)
	res.cpu = cpuSince(procs, cpuBefore)
	if leader, err = mcs.waitLeader(ctx, hookClient, time.Minute); err != nil {
		return err
	}
	metricsURL := leader.metrics
	requestsAfter, err := mcs.requests(ctx, hookClient)
	if err != nil {
		return err
	}
	res.mcRequests = map[string]float64{}
	for method, n := range requestsAfter {
		res.mcRequests[method] = n - requestsBefore[method]
	}

	// 3. Settling: once every child is there and every status written,
	// Metacontroller syncs each Monocle again (its own status write and
	// its children's creation are events), and the hook's status then
	// reports the children it observes: one more status write per Monocle
	// at most, expected. Settled is the last write before -settle passes
	// without any; a loop that keeps writing never settles and is cut at
	// -settle-max, and its writes then show in the quiet window.
	settled, err := tr.settle(ctx, mc, o.settle, o.settleMax)
	if err != nil {
		return err
	}
	res.settled = settled.Sub(start)
	syncsSettled, secondsSettled, err := hookSyncs(ctx, hookClient, hookURL+"/metrics")
	if err != nil {
		return err
	}
	updatesSettled, _, _, _, err := countLogs(mcs.logs())
	if err != nil {
		return err
	}
	if o.seed != "" {
		if syncsSettled, err = reconciles(ctx, hookClient, metricsURL); err != nil {
			return err
		}
	}
	res.syncsConverging = syncsSettled - syncsBefore
	res.hookSeconds = secondsSettled - secondsBefore
	res.updatesConverging = updatesSettled - updatesBefore
	logSettled := fileSizes(mcs.logs())
	res.mcLogConverging = logSettled - logBefore

	// The listing: every Monocle has every child, as the watches said.
	before, err := snapshot(ctx, dyn, o, cp.parentGVR, cp.childGVRs, res.perMonocle)
	if err != nil {
		return err
	}

	// 4. The quiet window.
	select {
	case <-time.After(o.quiet):
	case <-mc.done:
		return fmt.Errorf("metacontroller exited: %v (see %s)", mc.err, mc.logPath)
	case <-ctx.Done():
		return ctx.Err()
	}
	after, err := snapshot(ctx, dyn, o, cp.parentGVR, cp.childGVRs, res.perMonocle)
	if err != nil {
		return err
	}
	rewritten := append(changed(before.parents, after.parents), changed(before.children, after.children)...)
	res.rewrittenParents = len(changed(before.parents, after.parents))
	res.rewrittenChildren = len(rewritten) - res.rewrittenParents
	res.statusWrites = statusOnly(before.children, after.children)
	res.mcLogQuiet = fileSizes(mcs.logs()) - logSettled
	if res.mcHeap, err = metricValue(ctx, hookClient, metricsURL, "go_memstats_heap_inuse_bytes"); err != nil {
		return err
	}
	if len(rewritten) > 0 {
		fmt.Printf("converge: run %d: written in the quiet window: %s\n", run, strings.Join(rewritten[:min(len(rewritten), 10)], ", "))
	}
	syncsQuiet, _, err := hookSyncs(ctx, hookClient, hookURL+"/metrics")
	if err != nil {
		return err
	}
	if o.seed != "" {
		if syncsQuiet, err = reconciles(ctx, hookClient, metricsURL); err != nil {
			return err
		}
	}
	res.syncsQuiet = syncsQuiet - syncsSettled
	updatesQuiet, _, errorLines, forbidden, err := countLogs(mcs.logs())
	if err != nil {
		return err
	}
	res.updatesQuiet = updatesQuiet - updatesSettled
	res.mcErrors, res.forbidden = errorLines, forbidden
	res.childRewrites = tr.rewrites()

	if o.steady > 0 {
		resources := []string{cp.parentGVR.Resource}
		for _, gvr := range cp.childGVRs {
			resources = append(resources, gvr.Resource)
		}
		syncs := func() (float64, error) {
			n, _, err := hookSyncs(ctx, hookClient, hookURL+"/metrics")
			return n, err
		}
		requests := func() (map[string]float64, error) { return mcs.requests(ctx, hookClient) }
		fmt.Printf("converge: run %d: the steady window, %s, load average %s\n", run, o.steady, loadAverage())
		s, err := measureSteady(ctx, o, mc, cp.env.Config, resources, procs, requests, syncs)
		if err != nil {
			return fmt.Errorf("the steady window: %w", err)
		}
		fmt.Printf("converge: run %d: %s\n", run, s)
	}

	// 5. Peak memory, before anything stops.
	if res.hwm == nil {
		res.hwm = map[string]int64{}
	}
	for name, pid := range procs {
		res.hwm[name] = procStatusBytes(pid, "VmHWM")
	}
	return nil
}

// writeDirectly runs step 6 (withMonocles false) or 7 on a control plane
// of its own, as fresh as the one Metacontroller met: the API server's cost
// of a create grows with what it holds (kube-apiserver 1.37 lists every
// ClusterIP it allocated on each Service create), so sharing one would
// favour whichever ran first. Metacontroller's run had a warm-up Monocle;
// so has this one, written the same way before the clock starts (the first
// writes of a kind pay for its handler: at 50 Monocles that is seconds).
// The hook's answers are asked for before the clock too: what is timed is
// the API server's work alone.
func writeDirectly(ctx context.Context, o options, run int, hookURL string, withMonocles bool) (time.Duration, map[string]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cc, err := compositeController(o.controller, hookURL)
	if err != nil {
		return 0, nil, err
	}
	namespaces := []string{warmupNS}
	for i := range o.namespaces {
		namespaces = append(namespaces, fmt.Sprintf("%s%d", floorPrefix, i))
	}
	cp, err := startControlPlane(ctx, o, cc, namespaces)
	if err != nil {
		return 0, nil, err
	}
	defer func() {
		cancel()
		cp.stop(run)
	}()
	// The same watches as Metacontroller met.
	if err := cp.watch(ctx, newTracker(o.monocles, 0)); err != nil {
		return 0, nil, err
	}

	// A Monocle's writes: itself, its children as Metacontroller creates
	// them, its status.
	type job struct {
		parent   *unstructured.Unstructured
		answered []map[string]any             // the hook's children
		children []*unstructured.Unstructured // ... as Metacontroller creates them
		gvrs     []schema.GroupVersionResource
		status   map[string]any
	}
	hookClient := &http.Client{Timeout: 10 * time.Second}
	newJob := func(namespace, name string, i int) (job, error) {
		parent := newMonocle(cp.parentGVR, cp.parentKind, namespace, name)
		parent.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)))
		parent.SetGeneration(1)
		children, status, err := askHook(ctx, hookClient, hookURL+"/sync", parent)
		if err != nil {
			return job{}, err
		}
		if status == nil {
			return job{}, errors.New("the hook answered no status")
		}
		j := job{parent: parent, answered: children, status: status}
		for _, child := range children {
			obj := asMetacontrollerCreates(runtime.DeepCopyJSON(child), parent)
			m, err := cp.mapper.RESTMapping(obj.GroupVersionKind().GroupKind(), obj.GroupVersionKind().Version)
			if err != nil {
				return job{}, err
			}
			j.children, j.gvrs = append(j.children, obj), append(j.gvrs, m.Resource)
		}
		return j, nil
	}
	createChild := func(ctx context.Context, j job, k int) error {
		_, err := cp.dyn.Resource(j.gvrs[k]).Namespace(j.children[k].GetNamespace()).Create(ctx, j.children[k], metav1.CreateOptions{})
		return err
	}
	// Step 7: the Monocle first, its children owned by the UID the API
	// server gave it, then its status.
	writeAll := func(ctx context.Context, j job) error {
		parents := cp.dyn.Resource(cp.parentGVR).Namespace(j.parent.GetNamespace())
		j.parent.SetUID("")
		j.parent.SetGeneration(0)
		created, err := parents.Create(ctx, j.parent, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		for k, child := range j.answered {
			j.children[k] = asMetacontrollerCreates(runtime.DeepCopyJSON(child), created)
			if err := createChild(ctx, j, k); err != nil {
				return err
			}
		}
		created.Object["status"] = j.status
		_, err = parents.UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	}

	warmup, err := newJob(warmupNS, "warmup", -1)
	if err != nil {
		return 0, nil, err
	}
	if err := writeAll(ctx, warmup); err != nil {
		return 0, nil, fmt.Errorf("the warm-up Monocle: %w", err)
	}
	jobs := make([]job, o.monocles)
	type childOf struct{ job, k int }
	var children []childOf
	for i := range jobs {
		if jobs[i], err = newJob(fmt.Sprintf("%s%d", floorPrefix, i%o.namespaces), monocleName(i), i); err != nil {
			return 0, nil, err
		}
		for k := range jobs[i].children {
			children = append(children, childOf{i, k})
		}
	}

	procs := processes(nil)
	cpuBefore := cpuTimes(procs)
	start := time.Now()
	if withMonocles {
		err = parallel(ctx, o.clients, len(jobs), func(ctx context.Context, i int) error { return writeAll(ctx, jobs[i]) })
	} else {
		err = parallel(ctx, o.clients, len(children), func(ctx context.Context, i int) error {
			return createChild(ctx, jobs[children[i].job], children[i].k)
		})
	}
	if err != nil {
		return 0, nil, err
	}
	return time.Since(start), cpuSince(procs, cpuBefore), nil
}

// freeLoopbackAddress returns 127.0.0.1:port for a port free right now.
func freeLoopbackAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// adminKubeconfig writes a kubeconfig for a system:masters user of env's
// API server, which listens on 127.0.0.1.
func adminKubeconfig(env *envtest.Environment, dir, name string) (string, error) {
	user, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	return path, os.WriteFile(path, kc, 0o600)
}

// compositeController reads the CompositeController and points its
// webhooks at base (http://127.0.0.1:port) instead of the in-cluster
// Service, keeping their paths and timeouts.
func compositeController(path, base string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cc := &unstructured.Unstructured{Object: obj}
	hooks, _, err := unstructured.NestedMap(obj, "spec", "hooks")
	if err != nil || len(hooks) == 0 {
		return nil, fmt.Errorf("%s: no spec.hooks", path)
	}
	for name := range hooks {
		webhook, _, _ := unstructured.NestedMap(hooks, name, "webhook")
		hookPath, _, _ := unstructured.NestedString(webhook, "path")
		if hookPath == "" {
			return nil, fmt.Errorf("%s: hook %s has no webhook path", path, name)
		}
		delete(webhook, "service")
		delete(webhook, "path")
		webhook["url"] = base + hookPath
		if err := unstructured.SetNestedMap(obj, webhook, "spec", "hooks", name, "webhook"); err != nil {
			return nil, err
		}
	}
	return cc, nil
}

// resourcesOf reads the parent's and children's resources from the
// CompositeController.
func resourcesOf(cc *unstructured.Unstructured, mapper *restmapper.DeferredDiscoveryRESTMapper) (schema.GroupVersionResource, string, []schema.GroupVersionResource, error) {
	gvrOf := func(m map[string]any) (schema.GroupVersionResource, error) {
		apiVersion, _, _ := unstructured.NestedString(m, "apiVersion")
		resource, _, _ := unstructured.NestedString(m, "resource")
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil || resource == "" {
			return schema.GroupVersionResource{}, fmt.Errorf("the CompositeController names a resource without apiVersion or resource: %v", m)
		}
		return gv.WithResource(resource), nil
	}
	parentSpec, _, _ := unstructured.NestedMap(cc.Object, "spec", "parentResource")
	parent, err := gvrOf(parentSpec)
	if err != nil {
		return parent, "", nil, err
	}
	kind, err := mapper.KindFor(parent)
	if err != nil {
		return parent, "", nil, err
	}
	childSpecs, _, _ := unstructured.NestedSlice(cc.Object, "spec", "childResources")
	var children []schema.GroupVersionResource
	for _, c := range childSpecs {
		m, _ := c.(map[string]any)
		gvr, err := gvrOf(m)
		if err != nil {
			return parent, "", nil, err
		}
		children = append(children, gvr)
	}
	return parent, kind.Kind, children, nil
}

// newMonocle is a default Monocle: the hook's defaults for every field.
func newMonocle(gvr schema.GroupVersionResource, kind, namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(),
		"kind":       kind,
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       map[string]any{},
	}}
}

// askHook POSTs a sync request for parent, as a new Monocle with no
// children, and returns the children and the status answered.
func askHook(ctx context.Context, client *http.Client, url string, parent *unstructured.Unstructured) ([]map[string]any, map[string]any, error) {
	body, err := json.Marshal(map[string]any{"parent": parent.Object})
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("the hook answered %s: %s", resp.Status, answer)
	}
	var decoded struct {
		Children []map[string]any `json:"children"`
		Status   map[string]any   `json:"status"`
	}
	if err := json.Unmarshal(answer, &decoded); err != nil {
		return nil, nil, err
	}
	if len(decoded.Children) == 0 {
		return nil, nil, errors.New("the hook answered no children")
	}
	return decoded.Children, decoded.Status, nil
}

// asMetacontrollerCreates is child as Metacontroller v4.17.2 creates it
// for parent (pkg/controller/composite/controller.go, then
// pkg/controller/common/manage_children.go): the parent's namespace, the
// controller-uid label of generateSelector, the last-applied annotation
// holding the object as it was then, and the controller ownerReference.
func asMetacontrollerCreates(child map[string]any, parent *unstructured.Unstructured) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: child}
	obj.SetNamespace(parent.GetNamespace())
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["controller-uid"] = string(parent.GetUID())
	obj.SetLabels(labels)
	lastApplied, _ := json.Marshal(obj.Object)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["metacontroller.k8s.io/last-applied-configuration"] = string(lastApplied)
	obj.SetAnnotations(annotations)
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: parent.GetAPIVersion(), Kind: parent.GetKind(), Name: parent.GetName(), UID: parent.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
	return obj
}

// parallel runs do(0..n-1) on `workers` goroutines, stopping at the first
// error.
func parallel(ctx context.Context, workers, n int, do func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := do(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// tracker follows, through watch events, which children each Monocle under
// test has and whether its status was written.
type tracker struct {
	monocles, perMonocle int
	// statusWritten tells a Monocle whose status is written for its
	// generation; nil: status.observedGeneration, as the hook writes it.
	statusWritten func(*unstructured.Unstructured) bool

	mu                         sync.Mutex
	children                   map[string]map[string]bool // Monocle namespace/name -> resource/name of its children
	complete                   int                        // Monocles with all their children
	withStatus                 map[string]bool
	childrenDone, statusDone   time.Time
	lastWrite                  time.Time // of a Monocle or child under test
	warmupChildren             int
	warmupStatus               bool
	childRewrites              int // content writes to children after their create
	convergedCh, warmedUpCh    chan struct{}
	convergedOnce, warmedUpOne sync.Once
}

func newTracker(monocles, perMonocle int) *tracker {
	return &tracker{
		monocles: monocles, perMonocle: perMonocle,
		children: map[string]map[string]bool{}, withStatus: map[string]bool{},
		convergedCh: make(chan struct{}), warmedUpCh: make(chan struct{}),
	}
}

func (t *tracker) converged() <-chan struct{} { return t.convergedCh }
func (t *tracker) warmedUp() <-chan struct{}  { return t.warmedUpCh }

func (t *tracker) progress() (children, statuses int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.complete, len(t.withStatus)
}

// childSeen counts a new child of a Monocle, named by its controller
// ownerReference.
func (t *tracker) childSeen(resource string, obj any) {
	now := time.Now()
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	owner := metav1.GetControllerOfNoCopy(u)
	if owner == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ns := u.GetNamespace()
	switch {
	case ns == warmupNS:
		t.warmupChildren++
	case strings.HasPrefix(ns, convergePrefix):
		parent := ns + "/" + owner.Name
		if t.children[parent] == nil {
			t.children[parent] = map[string]bool{}
		}
		t.lastWrite = now
		key := resource + "/" + u.GetName()
		if t.children[parent][key] {
			return
		}
		t.children[parent][key] = true
		if len(t.children[parent]) == t.perMonocle {
			t.complete++
		}
	}
	t.check(now)
}

// parentSeen notes a Monocle whose status Metacontroller has written for
// its current generation.
func (t *tracker) parentSeen(obj any) {
	now := time.Now()
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	t.written(obj)
	if t.statusWritten != nil {
		if !t.statusWritten(u) {
			return
		}
	} else if observed, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); !found || observed != u.GetGeneration() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ns := u.GetNamespace(); {
	case ns == warmupNS:
		t.warmupStatus = true
	case strings.HasPrefix(ns, convergePrefix):
		t.withStatus[ns+"/"+u.GetName()] = true
	}
	t.check(now)
}

// written notes a write to a Monocle or child under test.
func (t *tracker) written(obj any) {
	now := time.Now()
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !strings.HasPrefix(u.GetNamespace(), convergePrefix) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastWrite = now
}

// childWritten notes a write to a child, and counts it as a rewrite when
// its content moved (contentOf: not its status, not what only the API
// server and the workload controllers write).
func (t *tracker) childWritten(old, obj any) {
	t.written(obj)
	before, ok1 := old.(*unstructured.Unstructured)
	after, ok2 := obj.(*unstructured.Unstructured)
	if !ok1 || !ok2 || !strings.HasPrefix(after.GetNamespace(), convergePrefix) || contentOf(before) == contentOf(after) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.childRewrites++
}

func (t *tracker) rewrites() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.childRewrites
}

// settle waits until nothing under test has been written for quiet, or
// until max has passed, and returns the time of the last write.
func (t *tracker) settle(ctx context.Context, mc *process, quiet, max time.Duration) (time.Time, error) {
	deadline := time.Now().Add(max)
	for {
		t.mu.Lock()
		last := t.lastWrite
		t.mu.Unlock()
		if time.Since(last) >= quiet || time.Now().After(deadline) {
			return last, nil
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-mc.done:
			return last, fmt.Errorf("metacontroller exited: %v (see %s)", mc.err, mc.logPath)
		case <-ctx.Done():
			return last, ctx.Err()
		}
	}
}

// check closes the channels whose condition now holds; t.mu is held.
func (t *tracker) check(now time.Time) {
	if t.warmupChildren >= t.perMonocle && t.warmupStatus {
		t.warmedUpOne.Do(func() { close(t.warmedUpCh) })
	}
	if t.childrenDone.IsZero() && t.complete == t.monocles {
		t.childrenDone = now
	}
	if t.statusDone.IsZero() && len(t.withStatus) == t.monocles {
		t.statusDone = now
	}
	if !t.childrenDone.IsZero() && !t.statusDone.IsZero() {
		t.convergedOnce.Do(func() { close(t.convergedCh) })
	}
}

// waitFor waits for ready, failing if Metacontroller exits or timeout
// passes.
func waitFor(ctx context.Context, mc *process, timeout time.Duration, ready func() <-chan struct{}) error {
	select {
	case <-ready():
		return nil
	case <-mc.done:
		return fmt.Errorf("metacontroller exited: %v (see %s)", mc.err, mc.logPath)
	case <-time.After(timeout):
		return fmt.Errorf("timed out after %s (see %s)", timeout, mc.logPath)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// objects maps UIDs to what was listed.
type objects map[types.UID]listed

// listed is an object as listed: content is a hash of it without what
// another writer than Metacontroller may move (status, written by the
// workload controllers) and what every write moves (resourceVersion,
// generation, managedFields).
type listed struct{ resourceVersion, content, what string }

func contentOf(o *unstructured.Unstructured) string {
	c := o.DeepCopy()
	delete(c.Object, "status")
	unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(c.Object, "metadata", "generation")
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	// The Deployment controller's own annotation, written once it first
	// handles a Deployment: late at 1,000 Monocles.
	unstructured.RemoveNestedField(c.Object, "metadata", "annotations", "deployment.kubernetes.io/revision")
	if len(c.GetAnnotations()) == 0 {
		unstructured.RemoveNestedField(c.Object, "metadata", "annotations") // added for it alone
	}
	b, _ := json.Marshal(c.Object)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

type state struct{ parents, children objects }

// snapshot lists the Monocles under test and their children, and checks
// that every Monocle has every child.
func snapshot(ctx context.Context, dyn dynamic.Interface, o options, parentGVR schema.GroupVersionResource, childGVRs []schema.GroupVersionResource, perMonocle int) (state, error) {
	s := state{parents: objects{}, children: objects{}}
	perParent := map[string]int{}
	for i := range o.namespaces {
		ns := fmt.Sprintf("%s%d", convergePrefix, i)
		list, err := dyn.Resource(parentGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return s, err
		}
		for _, p := range list.Items {
			s.parents[p.GetUID()] = listed{p.GetResourceVersion(), contentOf(&p), "Monocle " + ns + "/" + p.GetName()}
		}
		for _, gvr := range childGVRs {
			list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return s, err
			}
			for _, c := range list.Items {
				s.children[c.GetUID()] = listed{c.GetResourceVersion(), contentOf(&c), c.GetKind() + " " + ns + "/" + c.GetName()}
				if owner := metav1.GetControllerOfNoCopy(&c); owner != nil {
					perParent[ns+"/"+owner.Name]++
				}
			}
		}
	}
	if len(s.parents) != o.monocles {
		return s, fmt.Errorf("listed %d Monocles, not %d", len(s.parents), o.monocles)
	}
	for i := range o.monocles {
		key := fmt.Sprintf("%s%d/%s", convergePrefix, i%o.namespaces, monocleName(i))
		if perParent[key] != perMonocle {
			return s, fmt.Errorf("listing: Monocle %s has %d children, not %d", key, perParent[key], perMonocle)
		}
	}
	return s, nil
}

// changed names the objects of before that are gone or have another
// content in after (a Monocle: another resourceVersion: its status is the
// hook's), and those new in after.
func changed(before, after objects) []string {
	var names []string
	for uid, b := range before {
		a, ok := after[uid]
		if !ok || a.content != b.content || strings.HasPrefix(b.what, "Monocle ") && a.resourceVersion != b.resourceVersion {
			names = append(names, b.what)
		}
	}
	for uid, a := range after {
		if _, ok := before[uid]; !ok {
			names = append(names, a.what+" (new)")
		}
	}
	slices.Sort(names)
	return names
}

// statusOnly counts the objects written with their content unchanged:
// status writes (kube-controller-manager's).
func statusOnly(before, after objects) int {
	n := 0
	for uid, b := range before {
		if a, ok := after[uid]; ok && a.content == b.content && a.resourceVersion != b.resourceVersion {
			n++
		}
	}
	return n
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// metricValue reads one unlabelled sample from a Prometheus text page.
func metricValue(ctx context.Context, client *http.Client, url, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no %s", url, name)
}

// countLogs counts Metacontroller's in-place updates, creates and error
// lines so far in its JSON logs (zap's production encoder, its default).
func countLogs(paths []string) (updates, creates, errorLines, forbidden int, err error) {
	for _, path := range paths {
		u, c, e, f, err := countLog(path)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		updates, creates, errorLines, forbidden = updates+u, creates+c, errorLines+e, forbidden+f
	}
	return updates, creates, errorLines, forbidden, nil
}

func fileSizes(paths []string) int64 {
	var sum int64
	for _, path := range paths {
		sum += fileSize(path)
	}
	return sum
}

// countLog counts, in one log, what countLogs sums. forbidden are the lines
// saying the API server refused a request for want of a permission: an
// RBAC error.
func countLog(path string) (updates, creates, errorLines, forbidden int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		// The API server's words, in Metacontroller's JSON lines and in
		// client-go's klog lines alike.
		if bytes.Contains(sc.Bytes(), []byte("is forbidden: User")) {
			forbidden++
		}
		var line struct{ Level, Msg string }
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch {
		case line.Msg == "Updating":
			updates++
		case line.Msg == "Creating":
			creates++
		}
		if line.Level == "error" {
			errorLines++
		}
	}
	return updates, creates, errorLines, forbidden, sc.Err()
}

// hookSyncs reads from the hook's metrics how many sync requests it
// answered, and in how many seconds in all.
func hookSyncs(ctx context.Context, client *http.Client, url string) (count, seconds float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		var sum *float64
		// /sync only: Metacontroller also calls /customize, once per
		// Monocle it has not seen.
		switch {
		case !strings.Contains(line, `handler="sync"`):
			continue
		case strings.HasPrefix(line, "monocle_hook_sync_requests_total{"):
			sum = &count
		case strings.HasPrefix(line, "monocle_hook_sync_duration_seconds_sum{"):
			sum = &seconds
		default:
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("the hook's metrics: %q: %w", line, err)
		}
		*sum += v
	}
	return count, seconds, sc.Err()
}

// clientRequests reads from Metacontroller's metrics how many requests
// its client-go sent to the API server, by method.
func clientRequests(ctx context.Context, client *http.Client, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	counts := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		// rest_client_requests_total{code="201",host="127.0.0.1:41000",method="POST"} 350
		labels, ok := strings.CutPrefix(sc.Text(), "rest_client_requests_total{")
		if !ok {
			continue
		}
		_, after, ok := strings.Cut(labels, `method="`)
		if !ok {
			continue
		}
		method, _, _ := strings.Cut(after, `"`)
		fields := strings.Fields(labels)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return nil, fmt.Errorf("metacontroller's metrics: %q: %w", sc.Text(), err)
		}
		counts[method] += v
	}
	return counts, sc.Err()
}

// process is a child process whose output goes to a log file.
type process struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // set before done is closed
}

func startProcess(logPath, bin string, env []string, args ...string) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Only what the process needs: no KUBECONFIG or proxy of the caller's
	// can send it anywhere but the flags' loopback addresses.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	// Dies with this program, even on SIGKILL.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	p := &process{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM and kills the process if it has not exited within 10s.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitHealthy polls url until it answers 200, for up to a minute.
func waitHealthy(ctx context.Context, p *process, url string) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited: %v (see %s)", p.err, p.logPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer 200 within a minute (see %s)", url, p.logPath)
}

// childrenByName maps the command names of this program's child
// processes (envtest's etcd and kube-apiserver among them) to their PIDs.
func childrenByName() map[string]int {
	pids := map[string]int{}
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, task := range tasks {
		data, _ := os.ReadFile(task)
		for _, field := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				continue
			}
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			pids[strings.TrimSpace(string(comm))] = pid
		}
	}
	return pids
}

// procStatusBytes reads a "kB" line of /proc/PID/status, in bytes.
func procStatusBytes(pid int, key string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			fields := strings.Fields(rest)
			if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cpuTimes reads each process's user + system CPU time from
// /proc/PID/stat (in clock ticks of 1/100 s, Linux's USER_HZ).
func cpuTimes(procs map[string]int) map[string]time.Duration {
	times := map[string]time.Duration{}
	for name, pid := range procs {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command name, which may hold spaces: state is
		// the first, utime the 12th, stime the 13th.
		i := bytes.LastIndexByte(data, ')')
		fields := strings.Fields(string(data[i+1:]))
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		times[name] = time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return times
}

// median is the median of f over the runs.
func median(results []result, f func(result) float64) float64 {
	v := make([]float64, len(results))
	for i, r := range results {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// summarize prints the medians of the runs, the targets, and a row for
// BENCHMARKS.md's table.
func summarize(o options, flags string, results []result) {
	med := func(f func(result) float64) float64 { return median(results, f) }
	maxOf := func(f func(result) int) int {
		m := 0
		for _, r := range results {
			m = max(m, f(r))
		}
		return m
	}
	floor := med(func(r result) float64 { return r.floor.Seconds() })
	children := med(func(r result) float64 { return r.children.Seconds() })
	status := med(func(r result) float64 { return r.status.Seconds() })
	settled := med(func(r result) float64 { return r.settled.Seconds() })
	ratio := children / floor
	// Within a run, Metacontroller and the floor are a minute apart; on a
	// shared machine the load drifts less in a minute than across runs.
	runRatio := med(func(r result) float64 { return r.children.Seconds() / r.floor.Seconds() })
	perMonocleMS := children / float64(o.monocles) * 1000
	rewrites := maxOf(func(r result) int { return r.rewrittenChildren + r.rewrittenParents })
	updatesQuiet := maxOf(func(r result) int { return r.updatesQuiet })
	updatesConverging := maxOf(func(r result) int { return r.updatesConverging })
	hookMiB := med(func(r result) float64 { return float64(r.hwm["monocle-hook"]) / (1 << 20) })
	mcMiB := med(func(r result) float64 { return float64(r.hwm["metacontroller"]) / (1 << 20) })
	mcCPU := med(func(r result) float64 { return r.cpu["metacontroller"].Seconds() })
	hookCPU := med(func(r result) float64 { return r.cpu["monocle-hook"].Seconds() })
	apiCPU := med(func(r result) float64 { return r.cpu["kube-apiserver"].Seconds() })
	cpuTotal := med(func(r result) float64 { return total(r.cpu).Seconds() })
	floorCPUTotal := med(func(r result) float64 { return total(r.floorCPU).Seconds() })
	jobFloor := med(func(r result) float64 { return r.jobFloor.Seconds() })
	jobRatio := med(func(r result) float64 { return r.status.Seconds() / r.jobFloor.Seconds() })
	jobFloorCPU := med(func(r result) float64 { return total(r.jobFloorCPU).Seconds() })
	syncs := med(func(r result) float64 { return r.syncsConverging })
	hookSeconds := med(func(r result) float64 { return r.hookSeconds })

	fmt.Printf("\nmedian of %d runs, %d Monocles (%d children each) in %d namespaces, Metacontroller %s:\n",
		len(results), o.monocles, results[0].perMonocle, o.namespaces, flags)
	fmt.Printf("  floor (%d objects created directly by %d clients): %.1f s\n", o.monocles*results[0].perMonocle, o.clients, floor)
	fmt.Printf("  every child in place: %.1f s = %.2fx the floor (target <= %.1fx; median of the runs' own ratios %.2fx), %.1f ms per Monocle\n",
		children, ratio, targetFloorRatio, runRatio, perMonocleMS)
	fmt.Printf("  every status written: %.1f s; last write before the quiet window (settled): %.1f s\n", status, settled)
	fmt.Printf("  the job's floor (the Monocles, their children and one status write each, directly): %.1f s, CPU %.1f s; every status written = %.2fx it (median of the runs' own ratios %.2fx)\n",
		jobFloor, jobFloorCPU, status/jobFloor, jobRatio)
	fmt.Printf("  in-place updates (most in a run): %d converging, %d in the %s quiet window; objects rewritten in it: %d\n",
		updatesConverging, updatesQuiet, o.quiet, rewrites)
	fmt.Printf("  the hook answered %.0f syncs in %.2f s in all until settled\n", syncs, hookSeconds)
	methods := map[string]bool{}
	for _, r := range results {
		for m := range r.mcRequests {
			methods[m] = true
		}
	}
	var requests []string
	for _, m := range slices.Sorted(maps.Keys(methods)) {
		requests = append(requests, fmt.Sprintf("%s %.0f", m, med(func(r result) float64 { return r.mcRequests[m] })))
	}
	fmt.Printf("  Metacontroller's API requests until every status was written: %s\n", strings.Join(requests, ", "))
	fmt.Printf("  VmHWM: hook %.0f MiB, Metacontroller %.0f MiB\n", hookMiB, mcMiB)
	fmt.Printf("  CPU until every status was written: %.1f s in all (hook %.1f s, Metacontroller %.1f s, kube-apiserver %.1f s, ...); the floor's: %.1f s (%.2fx)\n",
		cpuTotal, hookCPU, mcCPU, apiCPU, floorCPUTotal, cpuTotal/floorCPUTotal)
	fmt.Printf("\n| Metacontroller flags | N | floor s | children s | x floor | runs' x floor | ms / Monocle | status s | settled s | in-place updates | rewrites (quiet) | hook MiB | Metacontroller MiB | CPU x floor | job floor s | status x job floor | CPU x job floor |\n")
	fmt.Printf("| `%s` | %d | %.1f | %.1f | %.2f | %.2f | %.1f | %.1f | %.1f | %d | %d | %.0f | %.0f | %.2f | %.1f | %.2f | %.2f |\n",
		flags, o.monocles, floor, children, ratio, runRatio, perMonocleMS, status, settled, updatesConverging+updatesQuiet, rewrites, hookMiB, mcMiB, cpuTotal/floorCPUTotal,
		jobFloor, jobRatio, cpuTotal/jobFloorCPU)
}
