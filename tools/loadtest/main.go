// loadtest compares the built hook with a floor under a closed-loop load
// over loopback, and reports throughput, latency, errors, CPU per request
// and the hook's resident memory, with the hook/floor ratios the issue
// sets targets for.
//
// It starts two child processes, each listening on 127.0.0.1 on a port the
// kernel picks:
//
//   - the hook: the real binary (bin/monocle-hook --listen 127.0.0.1:0), so
//     that its peak resident memory is read from /proc/PID/status (VmHWM);
//   - the floor: this program run as "loadtest floor", a handler that only
//     decodes the same body into map[string]any and encodes it back with
//     encoding/json: what reading and writing that much JSON costs at all.
//
// Then, in rounds, for each concurrency and each target (the order of the
// targets alternates between rounds, so that a drift of the shared machine
// does not favour one), it keeps that many requests in flight for a fixed
// time, each POSTing the same recorded sync request. Figures are per round
// and their median across rounds; the ratios are taken within a round,
// hook against the floor measured right next to it, and their median is
// what the targets are checked against.
//
// It only ever connects to 127.0.0.1. It exits 1 if a request failed or the
// setup did; a missed timing target is reported, not an exit status (use
// -strict for that).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/change-metrics/monocle-hook/internal/floor"
)

// The targets, against the floor (BENCHMARKS.md, "Targets"): the p99 within
// half again the floor's, and at least its throughput.
const (
	targetThroughputRatioC16 = 1.0 // hook throughput at concurrency 16 >= 1.0 x floor's
	targetP99RatioC1         = 1.5 // hook p99 at concurrency 1 <= 1.5 x floor's
	targetRSSBytes           = 40 << 20
	maxBodyBytes             = 4 << 20 // as the hook's
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		if err := serveFloor(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest floor:", err)
			os.Exit(1)
		}
		return
	}
	log.SetFlags(0)
	run := run
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "attack" {
		run, args = runAttacks, args[1:]
	}
	ok, err := run(args)
	if err != nil {
		log.Fatal("loadtest: ", err)
	}
	if !ok {
		os.Exit(1)
	}
}

type config struct {
	hookBin     string
	bodyFile    string
	rounds      int
	conc        []int
	duration    time.Duration
	warmup      time.Duration
	maxRequests int64
	strict      bool
}

func run(args []string) (bool, error) {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	var c config
	var concs string
	fs.StringVar(&c.hookBin, "hook", "bin/monocle-hook", "the built hook binary")
	fs.StringVar(&c.bodyFile, "body", "hook/testdata/metacontroller/sync-v1-observed-children.json", "the sync request to POST")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds; each runs every concurrency against both targets")
	fs.StringVar(&concs, "concurrency", "1,16,64", "requests kept in flight, comma-separated")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "time per target, per concurrency, per round")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "unrecorded load on each target before the first round")
	fs.Int64Var(&c.maxRequests, "max-requests", 200000, "at most this many requests per target, per concurrency, per round")
	fs.BoolVar(&c.strict, "strict", false, "exit 1 when a timing or memory target is missed too")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	for _, s := range strings.Split(concs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 256 {
			return false, fmt.Errorf("-concurrency: %q is not a number from 1 to 256", s)
		}
		c.conc = append(c.conc, n)
	}
	if c.rounds < 1 || c.rounds > 10 || c.duration <= 0 || c.duration > time.Minute || c.warmup < 0 || c.warmup > time.Minute {
		return false, errors.New("-rounds must be 1 to 10, -duration and -warmup at most a minute")
	}
	body, err := os.ReadFile(c.bodyFile)
	if err != nil {
		return false, err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	self, err := os.Executable()
	if err != nil {
		return false, err
	}
	// Every client here is 127.0.0.1: without the hook's share per address
	// (make attack measures it), this measures what a sync costs.
	hook, err := startChild("hook", exec.Command(c.hookBin, "--listen", "127.0.0.1:0", "--max-connections-per-address", "0"), hookAddress)
	if err != nil {
		return false, err
	}
	defer hook.stop()
	if body, err = converged(hook, body); err != nil {
		return false, err
	}
	fl, err := startChild("floor", exec.Command(self, "floor", "--listen", "127.0.0.1:0"), floorAddress)
	if err != nil {
		return false, err
	}
	defer fl.stop()
	targets := []*target{hook, fl}

	loadBefore := readFile("/proc/loadavg")
	fmt.Printf("loadtest %s: %s, GOMAXPROCS %d, %d CPUs, load average %s\n",
		time.Now().UTC().Format(time.RFC3339), runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU(), loadBefore)
	fmt.Printf("body: %s (%d bytes); hook %s (pid %d), floor %s (pid %d)\n",
		c.bodyFile, len(body), hook.url, hook.cmd.Process.Pid, fl.url, fl.cmd.Process.Pid)
	fmt.Printf("%d rounds x concurrency %v x {hook, floor} x %s, closed loop over loopback\n\n", c.rounds, c.conc, c.duration)

	for _, t := range targets {
		if err := t.check(body); err != nil {
			return false, err
		}
		t.sampleRSS()
	}
	if c.warmup > 0 {
		for _, t := range targets {
			t.load(ctx, body, slices.Max(c.conc), c.warmup, c.maxRequests)
		}
	}

	// results[conc][target name] holds one cell per round.
	results := map[int]map[string][]cell{}
	fmt.Printf("%-5s %-6s %5s %9s %9s %9s %8s %10s %9s\n", "round", "target", "conc", "req/s", "p50", "p99", "errors", "cpu/req", "rss")
	for r := 0; r < c.rounds; r++ {
		for _, n := range c.conc {
			order := targets
			if r%2 == 1 {
				order = []*target{fl, hook}
			}
			for _, t := range order {
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				res := t.load(ctx, body, n, c.duration, c.maxRequests)
				if results[n] == nil {
					results[n] = map[string][]cell{}
				}
				results[n][t.name] = append(results[n][t.name], res)
				fmt.Printf("%-5d %-6s %5d %9.0f %9s %9s %8d %10s %8.1fM\n", r+1, t.name, n, res.throughput(),
					ms(res.p50), ms(res.p99), res.errors, us(res.cpuPerRequest()), mib(t.peakRSS.Load()))
			}
		}
	}
	for _, t := range targets {
		t.sampleRSS()
	}

	fmt.Printf("\nmedian of %d rounds (ratios: median of the per-round hook/floor ratios)\n", c.rounds)
	fmt.Printf("%5s | %9s %9s %9s %10s | %9s %9s %9s %10s | %11s %9s %9s %9s\n",
		"conc", "hook r/s", "p50", "p99", "cpu/req", "floor r/s", "p50", "p99", "cpu/req", "thru ratio", "p50 ratio", "p99 ratio", "cpu ratio")
	var errs int64
	var requests int64
	thruRatio := map[int]float64{}
	var p99RatioC1 float64
	for _, n := range c.conc {
		h, f := results[n]["hook"], results[n]["floor"]
		var tr, p50r, p99r, cpur []float64
		for i := range h {
			tr = append(tr, h[i].throughput()/f[i].throughput())
			p50r = append(p50r, float64(h[i].p50)/float64(f[i].p50))
			p99r = append(p99r, float64(h[i].p99)/float64(f[i].p99))
			cpur = append(cpur, h[i].cpuPerRequest().Seconds()/f[i].cpuPerRequest().Seconds())
			errs += h[i].errors + f[i].errors
			requests += h[i].requests + f[i].requests
		}
		thruRatio[n] = median(tr)
		if n == 1 {
			p99RatioC1 = median(p99r)
		}
		fmt.Printf("%5d | %9.0f %9s %9s %10s | %9.0f %9s %9s %10s | %11.2f %9.2f %9.2f %9.2f\n", n,
			medianOf(h, cell.throughput), ms(medianDur(h, func(c cell) time.Duration { return c.p50 })),
			ms(medianDur(h, func(c cell) time.Duration { return c.p99 })), us(medianDur(h, cell.cpuPerRequest)),
			medianOf(f, cell.throughput), ms(medianDur(f, func(c cell) time.Duration { return c.p50 })),
			ms(medianDur(f, func(c cell) time.Duration { return c.p99 })), us(medianDur(f, cell.cpuPerRequest)),
			thruRatio[n], median(p50r), median(p99r), median(cpur))
	}
	hookHWM, hookRSS := hook.procStatus("VmHWM"), hook.peakRSS.Load()
	floorHWM := fl.procStatus("VmHWM")
	fmt.Printf("\nhook peak RSS: VmHWM %.1f MiB (sampled VmRSS max %.1f MiB); floor VmHWM %.1f MiB\n",
		mib(hookHWM), mib(hookRSS), mib(floorHWM))
	fmt.Printf("requests: %d, errors: %d; load average after: %s\n\n", requests, errs, readFile("/proc/loadavg"))

	met := true
	verdict := func(ok bool, format string, args ...any) {
		word := "MET   "
		if !ok {
			word, met = "MISSED", false
		}
		fmt.Printf("%s "+format+"\n", append([]any{word}, args...)...)
	}
	if r, ok := thruRatio[16]; ok {
		verdict(r >= targetThroughputRatioC16, "throughput at concurrency 16: hook/floor %.2f (target >= %.2f)", r, targetThroughputRatioC16)
	}
	if _, ok := thruRatio[1]; ok {
		verdict(p99RatioC1 <= targetP99RatioC1, "p99 at concurrency 1: hook/floor %.2f (target <= %.2f)", p99RatioC1, targetP99RatioC1)
	}
	peak := max(hookHWM, hookRSS)
	verdict(peak > 0 && peak < targetRSSBytes, "hook peak RSS %.1f MiB (target < %d MiB)", mib(peak), targetRSSBytes>>20)
	verdict(errs == 0, "errors: %d (target 0)", errs)
	return errs == 0 && (met || !c.strict), nil
}

// target is one server under test, a child process of this one.
type target struct {
	name   string
	cmd    *exec.Cmd
	url    string
	client *http.Client
	// watcher is the kubelet's and Metacontroller's client during an
	// attack: the probes and the sync after it, from observerAddr, as
	// they come from other addresses than an attacker's in a cluster (the
	// hook shares its connections per address).
	watcher *http.Client
	refLen  int // the length of its first answer: later answers must match it
	peakRSS atomic.Int64
	done    chan struct{}
}

// startChild starts cmd and waits for address to find, in a line of its
// standard error (the hook) or output (the floor), the address it listens
// on. That address must be on 127.0.0.1.
func startChild(name string, cmd *exec.Cmd, address func(string) string) (*target, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s: %w", name, err)
	}
	t := &target{name: name, cmd: cmd, done: make(chan struct{})}
	found := make(chan string, 2)
	var failures atomic.Int64
	scan := func(r io.Reader) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if a := address(line); a != "" {
				found <- a
			}
			// The hook logs one line per sync; only failures are shown.
			if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
				if failures.Add(1) <= 5 {
					fmt.Fprintf(os.Stderr, "%s: %s\n", name, line)
				}
			}
		}
	}
	go scan(stderr)
	go scan(stdout)
	go func() { cmd.Wait(); close(t.done) }()

	var addr string
	select {
	case addr = <-found:
	case <-t.done:
		return nil, fmt.Errorf("the %s exited before listening", name)
	case <-time.After(10 * time.Second):
		t.stop()
		return nil, fmt.Errorf("the %s did not say where it listens within 10s", name)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		t.stop()
		return nil, fmt.Errorf("the %s listens on %q, not on 127.0.0.1", name, addr)
	}
	t.url = "http://" + addr + "/sync"
	t.client = &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			// Never anything but loopback, whatever the URL says.
			DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
				if a != addr {
					return nil, fmt.Errorf("refusing to dial %s", a)
				}
				return (&net.Dialer{}).DialContext(ctx, network, a)
			},
			Proxy:               nil,
			MaxIdleConns:        512,
			MaxIdleConnsPerHost: 512,
			DisableCompression:  true,
		},
	}
	t.watcher = &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
				if a != addr {
					return nil, fmt.Errorf("refusing to dial %s", a)
				}
				return (&net.Dialer{LocalAddr: observerAddr}).DialContext(ctx, network, a)
			},
			Proxy:              nil,
			DisableCompression: true,
		},
	}
	go t.watchRSS()
	return t, nil
}

// observerAddr is the loopback address the probes and the sync after an
// attack come from.
var observerAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}

func hookAddress(line string) string {
	var l struct{ Msg, Address string }
	if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "serving" {
		return l.Address
	}
	return ""
}

func floorAddress(line string) string {
	a, ok := strings.CutPrefix(line, "floor listening on ")
	if !ok {
		return ""
	}
	return a
}

// stop asks the child to finish (the hook drains on SIGTERM) and kills it
// if it has not within 5s.
func (t *target) stop() {
	select {
	case <-t.done:
		return
	default:
	}
	t.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-t.done:
	case <-time.After(5 * time.Second):
		t.cmd.Process.Kill()
		<-t.done
	}
}

// check sends one request and keeps the answer's length: every answer under
// load must be 200 with that length (the hook's answer is the same for the
// same body, but for the time in new conditions, which is fixed-width).
func (t *target) check(body []byte) error {
	code, answer, err := t.post(body)
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	if code != http.StatusOK || !json.Valid(answer) {
		return fmt.Errorf("%s answered %d: %.200s", t.name, code, answer)
	}
	if t.name == "hook" {
		var a struct{ Children []json.RawMessage }
		if err := json.Unmarshal(answer, &a); err != nil || len(a.Children) == 0 {
			return fmt.Errorf("the hook answered no children: %.200s", answer)
		}
	}
	t.refLen = len(answer)
	return nil
}

func (t *target) post(body []byte) (int, []byte, error) { return t.postBy(t.client, body) }

// postBy POSTs body to the hook's /sync with client.
func (t *target) postBy(client *http.Client, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

// cell is one target at one concurrency in one round.
type cell struct {
	requests, errors int64
	elapsed          time.Duration
	p50, p99         time.Duration
	cpu              time.Duration // the server process's user+system time
}

func (c cell) throughput() float64 { return float64(c.requests-c.errors) / c.elapsed.Seconds() }

func (c cell) cpuPerRequest() time.Duration {
	if c.requests == 0 {
		return 0
	}
	return c.cpu / time.Duration(c.requests)
}

// load keeps conc requests in flight for d, or until maxRequests have been
// sent.
func (t *target) load(ctx context.Context, body []byte, conc int, d time.Duration, maxRequests int64) cell {
	var sent, failed atomic.Int64
	lat := make([][]time.Duration, conc)
	var firstErr sync.Once
	cpu0 := t.cpuTime()
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) && sent.Add(1) <= maxRequests {
				t0 := time.Now()
				code, answer, err := t.post(body)
				took := time.Since(t0)
				if err == nil && (code != http.StatusOK || len(answer) != t.refLen) {
					err = fmt.Errorf("answered %d with %d bytes (expected 200 with %d): %.200s", code, len(answer), t.refLen, answer)
				}
				if err != nil {
					failed.Add(1)
					firstErr.Do(func() { fmt.Fprintf(os.Stderr, "%s: %v\n", t.name, err) })
					continue
				}
				lat[w] = append(lat[w], took)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	return cell{
		requests: int64(len(all)) + failed.Load(),
		errors:   failed.Load(),
		elapsed:  elapsed,
		p50:      percentile(all, 0.50),
		p99:      percentile(all, 0.99),
		cpu:      t.cpuTime() - cpu0,
	}
}

// cpuTime is the child's user plus system time, from /proc/PID/stat (in
// clock ticks of 1/100 s, USER_HZ on Linux).
func (t *target) cpuTime() time.Duration {
	stat := readFile(fmt.Sprintf("/proc/%d/stat", t.cmd.Process.Pid))
	// The command name, in parentheses, may hold spaces: count from after it.
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+1:])
	// After ")": state is field 3 of the file, utime 14 and stime 15.
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// procStatus reads a "kB" line of /proc/PID/status, in bytes.
func (t *target) procStatus(key string) int64 {
	for _, line := range strings.Split(readFile(fmt.Sprintf("/proc/%d/status", t.cmd.Process.Pid)), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func (t *target) sampleRSS() {
	if rss := t.procStatus("VmRSS"); rss > t.peakRSS.Load() {
		t.peakRSS.Store(rss)
	}
}

func (t *target) watchRSS() {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-tick.C:
			t.sampleRSS()
		}
	}
}

// serveFloor serves POST /sync with floor.Handler.
func serveFloor(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sync", floor.Handler(maxBodyBytes))
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Println("floor listening on", l.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second, WriteTimeout: 15 * time.Second, IdleTimeout: 90 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// Nearest rank.
	i := int(math.Ceil(float64(len(sorted))*p)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianOf(cells []cell, f func(cell) float64) float64 {
	var v []float64
	for _, c := range cells {
		v = append(v, f(c))
	}
	return median(v)
}

func medianDur(cells []cell, f func(cell) time.Duration) time.Duration {
	return time.Duration(medianOf(cells, func(c cell) float64 { return float64(f(c)) }))
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
func us(d time.Duration) string { return fmt.Sprintf("%.0fus", float64(d)/1e3) }
func mib(b int64) float64       { return float64(b) / (1 << 20) }

// converged is body as Metacontroller sends it once the Monocle's first
// answer is applied: with the Secret N-elastic that answer made observed.
// The recorded requests predate it; without it, each sync would make its
// users' password hashes anew, which a Monocle pays only before that
// Secret exists (BENCHMARKS.md, "Elasticsearch's users").
func converged(hook *target, body []byte) ([]byte, error) {
	code, answer, err := hook.post(body)
	if err != nil || code != 200 {
		return nil, fmt.Errorf("the first sync: %d %v", code, err)
	}
	var a struct {
		Children []map[string]any `json:"children"`
	}
	var req map[string]any
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	children, _ := req["children"].(map[string]any)
	secrets, _ := children["Secret.v1"].(map[string]any)
	if children == nil || secrets == nil {
		return nil, errors.New("the request observes no Secret")
	}
	for _, c := range a.Children {
		md, _ := c["metadata"].(map[string]any)
		if name, _ := md["name"].(string); c["kind"] == "Secret" && strings.HasSuffix(name, "-elastic") {
			// Keyed as the request keys its Secrets (v1: by name, v2:
			// namespace/name), beside N-api.
			for key, s := range secrets {
				sm, _ := s.(map[string]any)
				smd, _ := sm["metadata"].(map[string]any)
				md["namespace"] = smd["namespace"]
				secrets[strings.Replace(key, smd["name"].(string), name, 1)] = c
				break
			}
		}
	}
	return json.Marshal(req)
}
