package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// recordedSync is the request a real Metacontroller sent for the Monocle
// monocle-sample and its seven children (docs/development.md's curl sends it too).
//
//go:embed examples/sync-request.json
var recordedSync []byte

const testSynopsis = "test --url URL [--ca-bundle PEM] [--timeout D]"

// testHook is `monocle-hook test`, the command of the chart's `helm test`
// Pod (the image has no shell and no client): it sends the recorded sync
// request to the hook at --url, as Metacontroller does, and checks the
// answer: 200 with JSON, every child the request observed answered again
// (a child left out would be deleted), every child in the Monocle's
// namespace, and the status's Ready condition and SpecApplied=True. It retries
// while the hook cannot be reached or is busy (503, 429), until --timeout.
func testHook(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	url := fs.String("url", "", "the hook's base URL, as Metacontroller calls it (e.g. http://monocle-hook.monocle-hook:80)")
	caBundle := fs.String("ca-bundle", "", "for an https URL: the PEM certificates that signed the hook's (the chart's tls.caBundle); else the system's")
	timeout := fs.Duration("timeout", time.Minute, "how long to retry while the hook is unreachable or busy")
	if err := parseSubcommand(fs, args, testSynopsis, stdout, stderr); err != nil {
		return err
	}
	if *url == "" {
		fmt.Fprintln(stderr, "monocle-hook test: --url is required")
		return errUsage
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if *caBundle != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(*caBundle)) {
			return errors.New("--ca-bundle holds no PEM certificate")
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	client := &http.Client{Transport: transport, Timeout: 15 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	endpoint := strings.TrimSuffix(*url, "/") + "/sync"
	start := time.Now()
	var body []byte
	for {
		var err error
		body, err = post(ctx, client, endpoint)
		if err == nil {
			break
		}
		var busy busyError
		if ctx.Err() != nil || (!errors.As(err, &busy) && !isUnreachable(err)) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (retried for %s)", err, *timeout)
		case <-time.After(2 * time.Second):
		}
	}
	summary, err := checkAnswer(recordedSync, body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", endpoint, err)
	}
	fmt.Fprintf(stdout, "monocle-hook test: %s answered the recorded sync in %s: %s\n",
		printable.Escape(endpoint), time.Since(start).Round(time.Millisecond), summary)
	return nil
}

// busyError is an answer worth retrying: 503 (draining, or too many
// connections) or 429 (the memory budget).
type busyError struct{ code int }

func (e busyError) Error() string { return fmt.Sprintf("the hook is busy: %d", e.code) }

// isUnreachable: the hook is not listening, or not resolvable yet.
func isUnreachable(err error) bool {
	var timeout interface{ Timeout() bool }
	return (errors.As(err, &timeout) && timeout.Timeout()) || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "no such host")
}

func post(ctx context.Context, client *http.Client, endpoint string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(recordedSync))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusTooManyRequests:
		return nil, busyError{resp.StatusCode}
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("POST %s: %s: %s", endpoint, resp.Status, printable.Quote(strings.TrimSpace(string(body))))
	}
	return body, nil
}

type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

type syncAnswer struct {
	Status *struct {
		Conditions []struct{ Type, Status, Reason string } `json:"conditions"`
	} `json:"status"`
	Children []object `json:"children"`
}

// checkAnswer checks the hook's answer to request, and sums it up.
func checkAnswer(request, answer []byte) (string, error) {
	var req struct {
		Parent   object                                `json:"parent"`
		Children map[string]map[string]json.RawMessage `json:"children"`
	}
	if err := json.Unmarshal(request, &req); err != nil {
		return "", fmt.Errorf("the recorded request: %w", err)
	}
	var resp syncAnswer
	if err := json.Unmarshal(answer, &resp); err != nil {
		return "", fmt.Errorf("the answer is not a sync response: %w", err)
	}
	ns := req.Parent.Metadata.Namespace
	observed, err := checkChildren(req.Children, resp.Children, ns)
	if err != nil {
		return "", err
	}
	if resp.Status == nil {
		return "", errors.New("the answer has no status")
	}
	conditions := map[string]string{}
	for _, c := range resp.Status.Conditions {
		conditions[c.Type] = c.Status + " (" + c.Reason + ")"
	}
	for _, want := range []string{"Ready", "SpecApplied"} {
		if conditions[want] == "" {
			return "", fmt.Errorf("the answer's status has no %s condition", want)
		}
	}
	// The recorded Monocle is valid and complete: a hook that holds any of
	// it back answers other rules than this binary's.
	if !strings.HasPrefix(conditions["SpecApplied"], "True ") {
		return "", fmt.Errorf("the answer says SpecApplied=%s; the recorded Monocle is applied in full", printable.Escape(conditions["SpecApplied"]))
	}
	return fmt.Sprintf("Monocle %s/%s, %d children (all %d observed kept), Ready=%s, SpecApplied=%s",
		ns, req.Parent.Metadata.Name, len(resp.Children), observed,
		printable.Escape(conditions["Ready"]), printable.Escape(conditions["SpecApplied"])), nil
}

// checkChildren: every answered child is in namespace ns (or none), and
// every observed one (keyed "Kind.version" or "Kind.group/version", then by
// name or namespace/name) is answered again. It gives the observed count.
func checkChildren(observed map[string]map[string]json.RawMessage, answered []object, ns string) (int, error) {
	groupOf := func(apiVersion string) string {
		group, _, grouped := strings.Cut(apiVersion, "/")
		if !grouped {
			return ""
		}
		return group
	}
	keys := map[string]bool{}
	for _, c := range answered {
		if c.Metadata.Namespace != "" && c.Metadata.Namespace != ns {
			return 0, fmt.Errorf("the answer has %s %s in namespace %s, outside the Monocle's (%s)",
				c.Kind, printable.Quote(c.Metadata.Name), printable.Quote(c.Metadata.Namespace), ns)
		}
		keys[c.Kind+"."+groupOf(c.APIVersion)+"/"+c.Metadata.Name] = true
	}
	var missing []string
	n := 0
	for key, byName := range observed {
		kind, version, _ := strings.Cut(key, ".")
		for name := range byName {
			n++
			if _, short, ok := strings.Cut(name, "/"); ok {
				name = short
			}
			if !keys[kind+"."+groupOf(version)+"/"+name] {
				missing = append(missing, kind+" "+name)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return 0, fmt.Errorf("the answer leaves out %d of the %d observed children, which Metacontroller would delete: %s",
			len(missing), n, printable.Escape(strings.Join(missing, ", ")))
	}
	return n, nil
}
