package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// steady is what -steady measures on a converged install, after the quiet
// window: what the Monocles cost while nothing changes, the cost that
// the CompositeController's resyncPeriodSeconds and Metacontroller's
// --cache-flush-interval act on (issue 52).
type steady struct {
	window   time.Duration
	parents  int                      // the Monocles, the warm-up one included: each is resynced
	syncs    float64                  // the hook's /sync requests in the window
	writes   map[string]float64       // the API server's write requests on the Monocles and their children's kinds, by "VERB resource[/subresource]"
	requests map[string]float64       // Metacontroller's own API requests by method (its Lease's renewals included)
	cpu      map[string]time.Duration // CPU time each process spent in the window
}

// syncsPerMonocleMinute is how often each Monocle was synced.
func (s steady) syncsPerMonocleMinute() float64 {
	return s.syncs / float64(s.parents) / s.window.Minutes()
}

func (s steady) String() string {
	return fmt.Sprintf("steady window %s: hook syncs %.0f (%.3f a Monocle a minute, %d Monocles); API server writes on Monocles and children %s; Metacontroller's requests %s; CPU %s",
		s.window, s.syncs, s.syncsPerMonocleMinute(), s.parents, formatCounts(s.writes), formatCounts(s.requests), formatCPU(s.cpu))
}

// formatCounts prints counts in a stable order, none as "none".
func formatCounts(m map[string]float64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// measureSteady waits for o.steady on a converged install and tells what
// it cost. Every write the API server counts on the resources named is
// Metacontroller's: this program writes nothing in the window and
// kube-controller-manager writes only the children's status subresource
// (counted apart, under "/status").
func measureSteady(ctx context.Context, o options, mc *process, cfg *rest.Config, resources []string, procs map[string]int, mcRequests func() (map[string]float64, error), syncs func() (float64, error)) (steady, error) {
	s := steady{window: o.steady, parents: o.monocles + 1}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return s, err
	}
	apiWrites := func() (map[string]float64, error) {
		body, err := disco.RESTClient().Get().AbsPath("/metrics").Stream(ctx)
		if err != nil {
			return nil, err
		}
		defer body.Close()
		return apiserverWrites(body, resources)
	}
	cpuBefore := cpuTimes(procs)
	writesBefore, err := apiWrites()
	if err != nil {
		return s, fmt.Errorf("the API server's metrics: %w", err)
	}
	requestsBefore, err := mcRequests()
	if err != nil {
		return s, err
	}
	syncsBefore, err := syncs()
	if err != nil {
		return s, err
	}
	select {
	case <-time.After(o.steady):
	case <-mc.done:
		return s, fmt.Errorf("metacontroller exited: %v (see %s)", mc.err, mc.logPath)
	case <-ctx.Done():
		return s, ctx.Err()
	}
	s.cpu = cpuSince(procs, cpuBefore)
	writesAfter, err := apiWrites()
	if err != nil {
		return s, fmt.Errorf("the API server's metrics: %w", err)
	}
	requestsAfter, err := mcRequests()
	if err != nil {
		return s, err
	}
	syncsAfter, err := syncs()
	if err != nil {
		return s, err
	}
	s.syncs = syncsAfter - syncsBefore
	s.writes, s.requests = difference(writesBefore, writesAfter), difference(requestsBefore, requestsAfter)
	return s, nil
}

// difference is after - before, by key, leaving out what did not move.
func difference(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// writeVerbs are the verbs of apiserver_request_total that write; a
// server-side apply is counted as APPLY, not PATCH.
var writeVerbs = []string{"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}

// apiserverWrites sums, from kube-apiserver's /metrics, the write requests
// on the resources named, by "VERB resource" and "VERB resource/subresource".
func apiserverWrites(r io.Reader, resources []string) (map[string]float64, error) {
	counts := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="APPLY",version="v1"} 12
		rest, ok := strings.CutPrefix(sc.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		labelText, value, ok := strings.Cut(rest, "} ")
		if !ok {
			return nil, fmt.Errorf("kube-apiserver's metrics: %q", sc.Text())
		}
		labels, err := parseLabels(labelText)
		if err != nil {
			return nil, fmt.Errorf("kube-apiserver's metrics: %q: %w", sc.Text(), err)
		}
		if !slices.Contains(writeVerbs, labels["verb"]) || !slices.Contains(resources, labels["resource"]) || labels["dry_run"] != "" {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("kube-apiserver's metrics: %q: %w", sc.Text(), err)
		}
		key := labels["verb"] + " " + labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			key += "/" + sub
		}
		counts[key] += v
	}
	return counts, sc.Err()
}

// parseLabels reads a Prometheus sample's labels, name="quoted value",...
func parseLabels(s string) (map[string]string, error) {
	labels := map[string]string{}
	for s != "" {
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("no = in %q", s)
		}
		quoted, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return nil, fmt.Errorf("label %s: %w", name, err)
		}
		if labels[name], err = strconv.Unquote(quoted); err != nil {
			return nil, err
		}
		s = strings.TrimPrefix(rest[len(quoted):], ",")
	}
	return labels, nil
}
