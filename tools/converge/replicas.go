package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// Metacontroller as its chart runs it from our values files: its flags,
// environment, ClusterRole and replicas under leader election; and the
// leader killed mid-install.

// chartValues is what converge takes from values files of Metacontroller's
// chart (metacontroller-helm 4.17.2).
type chartValues struct {
	CommandArgs []string `json:"commandArgs"`
	Env         []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
	ClusterRole struct {
		Rules []rbacv1.PolicyRule `json:"rules"`
	} `json:"clusterRole"`
	Replicas int `json:"replicas"`
}

// readValues reads values files as `helm -f a -f b` layers them for the
// keys converge takes: a later file's key replaces an earlier one's (each is
// a list, or a map holding one list, which Helm replaces too).
func readValues(paths []string) (chartValues, error) {
	layered := map[string]json.RawMessage{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return chartValues{}, err
		}
		var layer map[string]json.RawMessage
		if err := yaml.Unmarshal(b, &layer); err != nil {
			return chartValues{}, fmt.Errorf("%s: %w", path, err)
		}
		for k, v := range layer {
			layered[k] = v
		}
	}
	b, err := json.Marshal(layered)
	if err != nil {
		return chartValues{}, err
	}
	var v chartValues
	if err := json.Unmarshal(b, &v); err != nil {
		return chartValues{}, fmt.Errorf("%s: %w", strings.Join(paths, ", "), err)
	}
	for _, e := range v.Env {
		if e.Value == "" {
			return chartValues{}, fmt.Errorf("env %s: only plain values are run here", e.Name)
		}
	}
	return v, nil
}

// replica is one Metacontroller process.
type replica struct {
	*process
	metrics string // its /metrics URL
	killed  bool   // on purpose, by killLeader
	// lastRequests are its client's requests by method just before it was
	// killed.
	lastRequests map[string]float64
}

// metacontrollers are the replicas of the measured controller. watchdog's
// done closes when one of them exits that was not killed on purpose: every
// wait of a run gives up then.
type metacontrollers struct {
	replicas []*replica
	watchdog *process
	mu       sync.Mutex
}

// startMetacontrollers starts o.replicas replicas with args, each with its
// own log, metrics and health addresses, and waits for each to be healthy.
func startMetacontrollers(ctx context.Context, o options, dir string, args func(metrics, health string) []string) (*metacontrollers, error) {
	g := &metacontrollers{watchdog: &process{logPath: dir, done: make(chan struct{})}}
	var once sync.Once
	for i := range max(o.replicas, 1) {
		metricsAddr, err := freeLoopbackAddress()
		if err != nil {
			g.stop()
			return nil, err
		}
		healthAddr, err := freeLoopbackAddress()
		if err != nil {
			g.stop()
			return nil, err
		}
		name := o.controllerName()
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		p, err := startProcess(filepath.Join(dir, name+".log"), o.metacontroller, o.mcEnv, args(metricsAddr, healthAddr)...)
		if err != nil {
			g.stop()
			return nil, err
		}
		r := &replica{process: p, metrics: "http://" + metricsAddr + "/metrics"}
		g.replicas = append(g.replicas, r)
		go func() {
			<-p.done
			g.mu.Lock()
			killed := r.killed
			g.mu.Unlock()
			if !killed {
				once.Do(func() {
					g.watchdog.err, g.watchdog.logPath = p.err, p.logPath
					close(g.watchdog.done)
				})
			}
		}()
		if err := waitHealthy(ctx, p, "http://"+healthAddr+"/healthz"); err != nil {
			g.stop()
			return nil, fmt.Errorf("starting %s: %w", name, err)
		}
	}
	return g, nil
}

func (g *metacontrollers) stop() {
	for _, r := range g.live() {
		r.stop()
	}
}

// live are the replicas not killed.
func (g *metacontrollers) live() []*replica {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(g.replicas), func(r *replica) bool { return r.killed })
}

// logs are every replica's log files, the killed ones' included.
func (g *metacontrollers) logs() []string {
	var paths []string
	for _, r := range g.replicas {
		paths = append(paths, r.logPath)
	}
	return paths
}

// leader is the replica whose leader election metric says it leads; with
// one replica and no election, that one.
func (g *metacontrollers) leader(ctx context.Context, client *http.Client) (*replica, error) {
	live := g.live()
	if len(g.replicas) == 1 {
		return live[0], nil
	}
	for _, r := range live {
		leads, err := leads(ctx, client, r.metrics)
		if err != nil {
			return nil, err
		}
		if leads {
			return r, nil
		}
	}
	return nil, nil
}

// waitLeader polls until a replica leads, for up to timeout.
func (g *metacontrollers) waitLeader(ctx context.Context, client *http.Client, timeout time.Duration) (*replica, error) {
	deadline := time.Now().Add(timeout)
	for {
		r, err := g.leader(ctx, client)
		if err != nil || r != nil {
			return r, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no replica took the lead within %s (see %s)", timeout, strings.Join(g.logs(), ", "))
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-g.watchdog.done:
			return nil, fmt.Errorf("metacontroller exited: %v (see %s)", g.watchdog.err, g.watchdog.logPath)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// leads reads controller-runtime's leader_election_master_status from a
// replica's metrics: 1 while it holds the lease.
func leads(ctx context.Context, client *http.Client, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "leader_election_master_status{") {
			return strings.HasSuffix(line, " 1"), nil
		}
	}
	return false, sc.Err()
}

// takeover is what a leader's kill measured.
type takeover struct {
	at       time.Duration // since the first Monocle's create
	children int           // Monocles with all their children then
	after    time.Duration // until a standby led
}

// killLeader kills the leader with SIGKILL (its node lost: no lease
// released) once half the Monocles have all their children, and waits for
// a standby to lead. Just before the kill, dying reads what only a live
// process can tell.
func (g *metacontrollers) killLeader(ctx context.Context, client *http.Client, tr *tracker, start time.Time, dying func(*replica)) (takeover, error) {
	for {
		if children, _ := tr.progress(); children >= tr.monocles/2 {
			break
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-g.watchdog.done:
			return takeover{}, fmt.Errorf("metacontroller exited: %v (see %s)", g.watchdog.err, g.watchdog.logPath)
		case <-ctx.Done():
			return takeover{}, ctx.Err()
		}
	}
	leader, err := g.leader(ctx, client)
	if err != nil || leader == nil {
		return takeover{}, fmt.Errorf("no leader to kill: %v", err)
	}
	var t takeover
	t.children, _ = tr.progress()
	dying(leader)
	g.mu.Lock()
	leader.killed = true
	g.mu.Unlock()
	if err := leader.cmd.Process.Kill(); err != nil {
		return t, err
	}
	killed := time.Now()
	t.at = killed.Sub(start)
	<-leader.done
	// controller-runtime's lease lasts 15 s: a standby takes it once expired.
	if _, err := g.waitLeader(ctx, client, time.Minute); err != nil {
		return t, err
	}
	t.after = time.Since(killed)
	return t, nil
}

// requests sums clientRequests over the live replicas and what the killed
// ones had sent when they died.
func (g *metacontrollers) requests(ctx context.Context, client *http.Client) (map[string]float64, error) {
	sum := map[string]float64{}
	for _, r := range g.replicas {
		counts := r.lastRequests
		if !r.killed {
			var err error
			if counts, err = clientRequests(ctx, client, r.metrics); err != nil {
				return nil, err
			}
		}
		for method, n := range counts {
			sum[method] += n
		}
	}
	return sum, nil
}
