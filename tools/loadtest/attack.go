package main

// "loadtest attack" runs the attacks on the built hook, each
// against a fresh hook process on 127.0.0.1 run with the memory budget the
// chart's memory limit gives, and reports each one's peak resident memory
// (VmHWM), the answers, whether the health endpoints answered during it and
// whether a normal sync is answered after it. The probes and that sync come
// from 127.0.0.3, as the kubelet and Metacontroller come from other
// addresses than an attacker's (the hook shares its connections per
// address); the attacks from 127.0.0.1 (one from 127.0.0.2). Every attack
// is bounded in connections and in time.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/change-metrics/monocle-hook/crd"
	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// budgetShareOfLimit is the hook's (memory.go): with no --memory-budget,
// its budget is a quarter of the container's memory limit.
const budgetShareOfLimit = 4

type attack struct {
	name      string
	targetMiB int64
	run       func(ctx context.Context, t *target) (answers map[string]int, err error)
}

func runAttacks(args []string) (bool, error) {
	fs := flag.NewFlagSet("loadtest attack", flag.ContinueOnError)
	hookBin := fs.String("hook", "bin/monocle-hook", "the built hook binary")
	fixture := fs.String("body", "hook/testdata/metacontroller/sync-v1-observed-children.json", "the recorded sync request the attack bodies are made from")
	limitMiB := fs.Int64("limit-mib", 144, "the container memory limit to run the hook as under (the chart's): its budget is a quarter of it")
	only := fs.String("only", "", "run only the attacks whose name contains this")
	strict := fs.Bool("strict", false, "exit 1 when a target is missed too (else only on a failed setup)")
	noBudget := fs.Bool("no-budget-flag", false, "run the hook without --memory-budget (a build from before it, for comparison)")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	normal, err := os.ReadFile(*fixture)
	if err != nil {
		return false, err
	}
	var hookArgs []string
	if !*noBudget {
		hookArgs = append(hookArgs, fmt.Sprintf("--memory-budget=%dMi", *limitMiB/budgetShareOfLimit))
	}

	aliasBomb, err := testbodies.WithSpec(normal, "config", testbodies.AliasBomb(10_000, 2_500))
	if err != nil {
		return false, err
	}
	bigConfig, err := testbodies.WithSpec(normal, "config", testbodies.Config(1<<20))
	if err != nil {
		return false, err
	}
	grown, err := testbodies.Grown(normal, 400_000)
	if err != nil {
		return false, err
	}
	largest, err := testbodies.LargestRequest(crd.YAML, syncInProcess)
	if err != nil {
		return false, err
	}
	// A Monocle stored before the CRD bounded affinity: n empty preferred
	// terms, each a 3-byte {} that would decode to a struct copied into
	// every pod template.
	emptyTerms := func(n int) ([]byte, error) {
		terms := json.RawMessage("[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]")
		return testbodies.WithSpec(normal, "affinity", map[string]any{"nodeAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": terms}})
	}
	terms300k, err := emptyTerms(300_000)
	if err != nil {
		return false, err
	}
	terms80k, err := emptyTerms(80_000)
	if err != nil {
		return false, err
	}
	// Bodies that decode into far more than their bytes: n {} in one list
	// or map of the request's types.
	empties := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	var jobs strings.Builder
	for i := range 300_000 {
		fmt.Fprintf(&jobs, `,"j%d":{}`, i)
	}
	parent := `{"apiVersion":"monocle.monocle.change-metrics.io/v1alpha1","kind":"Monocle","metadata":{"name":"m","namespace":"n"}`
	amplified := []struct{ name, path, body string }{
		{"150,000 {} volumeClaimTemplates in an observed StatefulSet", "/sync",
			`{"parent":` + parent + `},"children":{"StatefulSet.apps/v1":{"m-elastic":{"spec":{"volumeClaimTemplates":` + empties(150_000, "{}") + `}}}}}`},
		{"1.3 million {} containers in an observed Deployment", "/sync",
			`{"parent":` + parent + `},"children":{"Deployment.apps/v1":{"m-api":{"spec":{"template":{"spec":{"containers":` + empties(1_300_000, "{}") + `}}}}}}}`},
		{"300,000 {} observed Jobs", "/sync",
			`{"parent":` + parent + `},"children":{"Job.batch/v1":{` + jobs.String()[1:] + `}}}`},
		{"600,000 {} conditions in a /customize parent", "/customize",
			`{"parent":` + parent + `,"status":{"conditions":` + empties(600_000, "{}") + `}}}`},
	}
	finalizers, err := manyFinalizers(normal, 12_000)
	if err != nil {
		return false, err
	}
	var attacks []attack
	for _, a := range amplified {
		body := []byte(a.body)
		attacks = append(attacks, attack{
			name:      fmt.Sprintf("decode amplification: %s (%d-byte %s body), 1 request", a.name, len(body), a.path),
			targetMiB: 64,
			run: func(ctx context.Context, t *target) (map[string]int, error) {
				return burstTo(ctx, t, strings.TrimSuffix(t.url, "/sync")+a.path, body, 1)
			},
		})
	}
	attacks = append(attacks, []attack{
		bursting(fmt.Sprintf("an observed ConfigMap with 12,000 finalizers owned by Metacontroller's server-side apply, an invalid spec (%d-byte request)", len(finalizers)), 64, finalizers, 1),
		bursting(fmt.Sprintf("a spec stored before the bounds: 300,000 empty affinity terms (%d-byte request), 1 request", len(terms300k)), 64, terms300k, 1),
		bursting(fmt.Sprintf("5 specs stored before the bounds at once: 80,000 empty affinity terms each (%d-byte requests)", len(terms80k)), 100, terms80k, 5),
		bursting(fmt.Sprintf("the largest Monocle the CRD admits, converged (%d-byte request), 1 request", len(largest)), 64, largest, 1),
		bursting("5 of the largest Monocles at once (Metacontroller's 5 workers)", 100, largest, 5),
		bursting(fmt.Sprintf("alias bomb in spec.config (%.1f KB config, 1 request)", float64(len(testbodies.AliasBomb(10_000, 2_500)))/1000), 64, aliasBomb, 1),
		{
			name:      "7,000 connections that each sent one GET /healthz, kept open",
			targetMiB: 64,
			run: func(ctx context.Context, t *target) (map[string]int, error) {
				return idleConnections(ctx, t, 7000, normal)
			},
		},
		{
			name:      "300 connections sending 90 KB of a 100 KB body, then stalling",
			targetMiB: 64,
			run: func(ctx context.Context, t *target) (map[string]int, error) {
				return announced(ctx, t, 300, 100_000, bytes.Repeat([]byte(" "), 90_000), normal)
			},
		},
		{
			name:      "64 connections announcing 4 MiB, sending 10 bytes",
			targetMiB: 64,
			run: func(ctx context.Context, t *target) (map[string]int, error) {
				return announced(ctx, t, 64, 4<<20, []byte(`{"parent":`), normal)
			},
		},
		{
			name:      "300 connections from 127.0.0.2 sending bodies one byte short, again and again; 75 normal syncs from 127.0.0.1",
			targetMiB: 64,
			run: func(ctx context.Context, t *target) (map[string]int, error) {
				return oneByteShort(ctx, t, 300, 75, normal)
			},
		},
		bursting(fmt.Sprintf("32 concurrent 1 MiB configs (%d-byte requests)", len(bigConfig)), 100, bigConfig, 32),
		bursting(fmt.Sprintf("64 concurrent 400 KB requests (%d bytes)", len(grown)), 64, grown, 64),
	}...)

	fmt.Printf("loadtest attack %s: hook %s %s (the budget a %d MiB limit gives)\n\n", time.Now().UTC().Format(time.RFC3339), *hookBin, strings.Join(hookArgs, " "), *limitMiB)
	fmt.Printf("| attack | answers | health during | sync after | peak RSS (VmHWM) | target | of the %d MiB limit |\n|---|---|---|---|---|---|---|\n", *limitMiB)
	allMet := true
	for _, a := range attacks {
		if !strings.Contains(a.name, *only) {
			continue
		}
		row, met, err := runAttack(a, *hookBin, hookArgs, normal, *limitMiB)
		if err != nil {
			return false, fmt.Errorf("%s: %w", a.name, err)
		}
		allMet = allMet && met
		fmt.Println(row)
	}
	return allMet || !*strict, nil
}

// syncInProcess answers a sync request body as /sync does, to build the
// converged request of the largest Monocle.
func syncInProcess(body []byte) ([]byte, error) {
	var req wire.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	resp, err := hook.Sync(&req, hook.Env{Now: time.Now, Rand: rand.Reader})
	if err != nil {
		return nil, err
	}
	return json.Marshal(resp)
}

// runAttack starts a hook, checks that it answers a normal sync, runs the
// attack while probing /healthz, checks the normal sync again and reads
// the peak resident memory.
func runAttack(a attack, hookBin string, hookArgs []string, normal []byte, limitMiB int64) (string, bool, error) {
	hook, err := startChild("hook", exec.Command(hookBin, append([]string{"--listen", "127.0.0.1:0"}, hookArgs...)...), hookAddress)
	if err != nil {
		return "", false, err
	}
	defer hook.stop()
	hook.client.Timeout = 60 * time.Second
	if err := hook.check(normal); err != nil {
		return "", false, err
	}
	before := hook.procStatus("VmHWM")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	probeCtx, stopProbe := context.WithCancel(ctx)
	var probes, probeFailures atomic.Int64
	var probing sync.WaitGroup
	probing.Add(1)
	go func() {
		defer probing.Done()
		for probeCtx.Err() == nil {
			for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
				probes.Add(1)
				if code, err := hook.watch(path, 2*time.Second); err != nil || code != 200 {
					probeFailures.Add(1)
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	start, cpu0 := time.Now(), hook.cpuTime()
	answers, err := a.run(ctx, hook)
	took, cpu := time.Since(start), hook.cpuTime()-cpu0
	stopProbe()
	probing.Wait()
	if err != nil {
		return "", false, err
	}
	code, answer, err := hook.watchSync(normal)
	after := "200"
	if err != nil || code != 200 || len(answer) != hook.refLen {
		after = fmt.Sprintf("FAILED (%d, %v)", code, err)
	}
	peak := hook.procStatus("VmHWM")

	var parts []string
	for _, k := range slices.Sorted(maps.Keys(answers)) {
		parts = append(parts, fmt.Sprintf("%d x %s", answers[k], k))
	}
	health := fmt.Sprintf("%d/%d ok", probes.Load()-probeFailures.Load(), probes.Load())
	met := peak < a.targetMiB<<20 && probeFailures.Load() == 0 && after == "200"
	verdict := "MET"
	if !met {
		verdict = "MISSED"
	}
	return fmt.Sprintf("| %s | %s in %.1f s (hook CPU %.2f s) | %s | %s | %.1f MiB (%.1f before) | < %d MiB: %s | %.0f %% |",
		a.name, strings.Join(parts, ", "), took.Seconds(), cpu.Seconds(), health, after, mib(peak), mib(before), a.targetMiB, verdict,
		100*float64(peak)/float64(limitMiB<<20)), met, nil
}

// manyFinalizers is body with its parent's spec invalid (so that every
// child is answered as last applied) and its observed ConfigMap without a
// last-applied annotation but with n finalizers, each named in
// Metacontroller's server-side apply entry: the path that once tried every
// key for every item.
func manyFinalizers(body []byte, n int) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	req["parent"].(map[string]any)["spec"] = map[string]any{"api": map[string]any{"replicas": -1}}
	for _, cm := range req["children"].(map[string]any)["ConfigMap.v1"].(map[string]any) {
		md := cm.(map[string]any)["metadata"].(map[string]any)
		delete(md["annotations"].(map[string]any), "metacontroller.k8s.io/last-applied-configuration")
		finalizers, set := make([]any, n), map[string]any{}
		for i := range finalizers {
			f := fmt.Sprintf("example.com/finalizer-%d", i)
			finalizers[i] = f
			set["v:"+strconv.Quote(f)] = map[string]any{}
		}
		md["finalizers"] = finalizers
		md["managedFields"] = []any{map[string]any{"manager": "metacontroller", "operation": "Apply", "apiVersion": "v1",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:finalizers": set}}}}
	}
	return json.Marshal(req)
}

// bursting is the attack of n copies of body sent at once.
func bursting(name string, targetMiB int64, body []byte, n int) attack {
	return attack{name: name, targetMiB: targetMiB, run: func(ctx context.Context, t *target) (map[string]int, error) {
		return burst(ctx, t, body, n)
	}}
}

// burst sends n copies of body at once, each on its own connection, and
// counts the answers by status.
func burst(ctx context.Context, t *target, body []byte, n int) (map[string]int, error) {
	return burstTo(ctx, t, t.url, body, n)
}

// burstTo is burst to another URL of the hook.
func burstTo(ctx context.Context, t *target, url string, body []byte, n int) (map[string]int, error) {
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := ""
			code, _, err := t.postFresh(ctx, url, body)
			switch {
			case err != nil:
				key = "failed: " + err.Error()
			default:
				key = fmt.Sprint(code)
			}
			mu.Lock()
			answers[key]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return answers, nil
}

// idleConnections opens n connections one after the other, each sending
// one GET /healthz and reading its answer, and keeps them open; then it
// sends normal syncs for 3 s.
func idleConnections(ctx context.Context, t *target, n int, normal []byte) (map[string]int, error) {
	addr := strings.TrimPrefix(strings.TrimSuffix(t.url, "/sync"), "http://")
	answers := map[string]int{}
	for range n {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			answers["dial failed"]++
			continue
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: hook\r\n\r\n")
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		key := "closed without an answer"
		if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			key = fmt.Sprint(resp.StatusCode)
		}
		answers[key]++
	}
	syncs, failed := normalSyncs(ctx, t, normal)
	answers[fmt.Sprintf("normal syncs meanwhile, %d failed", failed)] = syncs
	return answers, nil
}

// normalSyncs sends a normal sync every 100 ms for 3 s, and counts those
// not answered 200 with the normal answer.
func normalSyncs(ctx context.Context, t *target, normal []byte) (syncs, failed int) {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		syncs++
		if code, answer, err := t.post(normal); err != nil || code != 200 || len(answer) != t.refLen {
			failed++
		}
		time.Sleep(100 * time.Millisecond)
	}
	return syncs, failed
}

// announced opens n connections that each announce contentLength bytes and
// send only first, then waits for the hook to answer each (at its read
// timeout) or for 20 s. Meanwhile it sends normal syncs, one at a time.
func announced(ctx context.Context, t *target, n, contentLength int, first, normal []byte) (map[string]int, error) {
	addr := strings.TrimPrefix(strings.TrimSuffix(t.url, "/sync"), "http://")
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", contentLength)
		if _, err := conn.Write(first); err != nil {
			// The hook closed it: beyond the connections it holds.
			mu.Lock()
			answers["closed before its body was sent"]++
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			key := "no answer within 20s"
			if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				key = fmt.Sprint(resp.StatusCode)
			} else if !errors.Is(err, os.ErrDeadlineExceeded) {
				key = "closed without an answer"
			}
			mu.Lock()
			answers[key]++
			mu.Unlock()
		}()
	}
	// Meanwhile, the hook answers normal syncs.
	syncs, failed := normalSyncs(ctx, t, normal)
	wg.Wait()
	answers[fmt.Sprintf("normal syncs meanwhile, %d failed", failed)] = syncs
	return answers, nil
}

// postFresh POSTs body to /sync on a connection of its own, so that n of
// them are n requests in flight at once.
func (t *target) postFresh(ctx context.Context, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Close = true
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

// postWith POSTs body to /sync on the target's keep-alive client, within
// ctx.
func (t *target) postWith(ctx context.Context, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

// getBy GETs one of the hook's endpoints with client.
func (t *target) getBy(client *http.Client, path string, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(t.url, "/sync")+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// attackerAddr is the loopback address the attacker of oneByteShort sends
// from; the normal syncs come from 127.0.0.1, the hook's own address.
var attackerAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}

// oneByteShort is one other client holding the hook's connections: n
// connections from attackerAddr, each sending a normal sync's headers and
// its body but the last byte, then waiting for the answer (the hook's 408
// at its body rate, or a 503 or a close), then again on a new connection,
// until syncs normal syncs, one every 100 ms from 127.0.0.1 (on the
// target's keep-alive client, as Metacontroller sends them), are answered.
// Bounded: n connections at once, at most 60 s (the caller's 2 minutes
// otherwise).
func oneByteShort(ctx context.Context, t *target, n, syncs int, normal []byte) (map[string]int, error) {
	addr := strings.TrimPrefix(strings.TrimSuffix(t.url, "/sync"), "http://")
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		return nil, fmt.Errorf("the hook listens on %s, not on 127.0.0.1", addr)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	attackCtx, stop := context.WithCancel(ctx)
	dialer := &net.Dialer{LocalAddr: attackerAddr, Timeout: 5 * time.Second}
	headers := fmt.Sprintf("POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(normal))
	var mu sync.Mutex
	attacker := map[string]int{}
	count := func(key string) {
		mu.Lock()
		attacker[key]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attackCtx.Err() == nil {
				conn, err := dialer.DialContext(attackCtx, "tcp", addr)
				if err != nil {
					if attackCtx.Err() == nil {
						count("attacker: dial failed")
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				stopConn := context.AfterFunc(attackCtx, func() { conn.Close() })
				key := "attacker: closed without an answer"
				if _, err := io.WriteString(conn, headers); err != nil {
					key = "attacker: closed before its body was sent"
				} else if _, err := conn.Write(normal[:len(normal)-1]); err != nil {
					key = "attacker: closed before its body was sent"
				} else {
					conn.SetReadDeadline(time.Now().Add(20 * time.Second))
					if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						key = fmt.Sprintf("attacker: %d", resp.StatusCode)
					}
				}
				stopConn()
				conn.Close()
				if attackCtx.Err() == nil {
					count(key)
				}
			}
		}()
	}
	// The attacker's connections first, then the normal syncs.
	time.Sleep(time.Second)
	normalAnswers := map[string]int{}
	for range syncs {
		if ctx.Err() != nil {
			break
		}
		key := ""
		// Metacontroller's hook timeout: 10 s.
		callCtx, done := context.WithTimeout(ctx, 10*time.Second)
		code, answer, err := t.postWith(callCtx, normal)
		done()
		switch {
		case err != nil:
			key = "normal: failed"
		case code == 200 && len(answer) != t.refLen:
			key = "normal: 200 with another answer"
		default:
			key = fmt.Sprintf("normal: %d", code)
		}
		normalAnswers[key]++
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	wg.Wait()
	for k, v := range normalAnswers {
		attacker[k] = v
	}
	return attacker, nil
}

// watch is a probe's GET, from observerAddr.
func (t *target) watch(path string, timeout time.Duration) (int, error) {
	return t.getBy(t.watcher, path, timeout)
}

// watchSync is Metacontroller's sync after an attack, from observerAddr.
func (t *target) watchSync(body []byte) (int, []byte, error) { return t.postBy(t.watcher, body) }
