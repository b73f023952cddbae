package main

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/change-metrics/monocle-hook/hook/server"
)

// The hook's memory, from the container's limit L (the chart's is 144 MiB):
// the requests in flight share a budget of L/4 (server.Budget charges each
// its estimated peak heap), and the Go runtime's memory limit is 1.5 times
// the budget, 3L/8. Without that limit the GC lets the heap grow to twice
// the live heap before it collects, so a live heap at the budget would take
// the heap to L/2 and more; with it the GC collects sooner, and as the live
// heap stays under it, the GC never runs without end. The rest of L is for
// what the budget does not count: the binary's resident pages, the
// connections, the pool of read buffers and the estimate's own error.
// BENCHMARKS.md ("Under attack") has the peaks these shares give.
const (
	budgetShareOfLimit = 4 // the budget is the container's limit / 4
	minBudget          = 1 << 20
)

// memorySettings are the budget and the Go memory limit, and where the
// budget came from (for the log).
type memorySettings struct {
	budget     int64
	goMemLimit int64
	from       string
}

// memoryFor reads --memory-budget, or derives it from the memory limit of
// the cgroup the process runs in (read in fsys, the root file system).
func memoryFor(flagValue string, fsys fs.FS) (memorySettings, error) {
	var m memorySettings
	if flagValue != "" {
		q, err := resource.ParseQuantity(flagValue)
		if err != nil {
			return m, fmt.Errorf("%q is not a quantity such as 32Mi", flagValue)
		}
		if q.Value() < minBudget {
			return m, fmt.Errorf("%s is under the least budget, 1Mi", flagValue)
		}
		m.budget, m.from = q.Value(), "--memory-budget"
	} else if limit, file := cgroupMemoryLimit(fsys); limit > 0 {
		m.budget, m.from = max(limit/budgetShareOfLimit, minBudget), "a quarter of the memory limit in /"+file
	} else {
		m.budget, m.from = server.DefaultMemoryBudget, "the default (no cgroup memory limit)"
	}
	m.goMemLimit = m.budget + m.budget/2
	return m, nil
}

// apply sets the Go runtime's memory limit, unless GOMEMLIMIT says
// otherwise: an operator who sets it has the last word.
func (m memorySettings) apply() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(m.goMemLimit)
	}
}

// cgroupMemoryLimit is the smallest memory limit set on the process' cgroup
// or its ancestors, and the file that sets it; 0 if none. /proc/self/cgroup
// names the cgroup: "0::/path" under cgroup v2, "N:memory[,...]:/path" for
// v1's memory controller. A container with its own cgroup namespace sees
// "/" and its limit at the mount's root; one without sees the host's path,
// which may not be mounted: the root's file is read too.
func cgroupMemoryLimit(fsys fs.FS) (int64, string) {
	self, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return 0, ""
	}
	var best int64
	var bestFile string
	for _, line := range strings.Split(string(self), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root, file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			root, file = "sys/fs/cgroup", "memory.max"
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			root, file = "sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		for dir := path.Clean("/" + parts[2]); ; dir = path.Dir(dir) {
			name := path.Join(root, dir, file)
			if limit := readLimit(fsys, name); limit > 0 && (best == 0 || limit < best) {
				best, bestFile = limit, name
			}
			if dir == "/" {
				break
			}
		}
	}
	return best, bestFile
}

// readLimit reads a cgroup memory limit; "max" (v2) and v1's page-rounded
// maximum mean none.
func readLimit(fsys fs.FS, name string) int64 {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v <= 0 || v >= math.MaxInt64/2 {
		return 0
	}
	return v
}
