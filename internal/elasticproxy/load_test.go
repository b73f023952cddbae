package elasticproxy

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var binary = flag.String("binary", "", "the built monocle-hook, whose elastic-proxy TestProxyUnderLoad measures (BENCHMARKS.md)")

// TestProxyUnderLoad measures the built `monocle-hook elastic-proxy` as
// the API pod runs it: a bounded load (16 clients, 20,000 small searches,
// all on 127.0.0.1) against the fake Elasticsearch, directly and through
// the proxy; it logs each way's latency percentiles and the proxy's
// resident memory (VmHWM, VmRSS), and asserts only that every request was
// answered 200. Run: go build -o bin/monocle-hook . &&
// go test ./internal/elasticproxy -run TestProxyUnderLoad -v -args -binary "$PWD/bin/monocle-hook"
func TestProxyUnderLoad(t *testing.T) {
	if *binary == "" {
		t.Skip("-binary is not set: a measurement, run as BENCHMARKS.md says")
	}
	es := fakeElastic(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(*binary, "elastic-proxy", "--listen", addr)
	cmd.Env = []string{"MONOCLE_ELASTIC_URL=http://monocle:" + password + "@" + strings.TrimPrefix(es.URL, "http://")}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the proxy did not listen")
		}
	}
	for _, way := range []struct{ name, url string }{{"direct", es.URL}, {"proxied", "http://" + addr}} {
		p50, p99 := load(t, way.url, 16, 20000)
		t.Logf("%s: p50 %v, p99 %v", way.name, p50, p99)
	}
	hwm, rss := procStatus(t, cmd.Process.Pid, "VmHWM:"), procStatus(t, cmd.Process.Pid, "VmRSS:")
	t.Logf("the proxy: VmHWM %s, VmRSS %s", hwm, rss)
}

// load sends n requests from clients goroutines and gives the latency's
// 50th and 99th percentiles.
func load(t *testing.T, url string, clients, n int) (p50, p99 time.Duration) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 10 * time.Second}
	latencies := make([]time.Duration, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += clients {
				req, _ := http.NewRequest("POST", url+"/monocle.changes.1.w/_search", strings.NewReader(`{"query":{"match_all":{}}}`))
				req.SetBasicAuth("monocle", password)
				start := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("%s: %d", url, resp.StatusCode)
					}
				}
				latencies[i] = time.Since(start)
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	slices.Sort(latencies)
	return latencies[n/2], latencies[n*99/100]
}

func procStatus(t *testing.T, pid int, field string) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return ""
}
