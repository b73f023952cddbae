package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	// maxAnswer bounds every answer read from Elasticsearch. The largest
	// is the list of a repository's snapshots, an entry a snapshot: this
	// leaves room for thousands (an entry's size: BENCHMARKS.md).
	maxAnswer = 16 << 20
	// maxErrorText bounds how much of an error answer an error quotes.
	maxErrorText = 512
	// DefaultCallTimeout bounds each call that is not meant to wait: all
	// but the snapshot's creation, the restore and the wait for recovery,
	// which only the command's own timeout bounds.
	DefaultCallTimeout = 2 * time.Minute
)

// Client speaks Elasticsearch 7.17's REST API, plain JSON over HTTP.
type Client struct {
	base        string // scheme://host[:port][/path], without a trailing '/'
	callTimeout time.Duration
	maxAnswer   int64
}

// NewClient talks to the Elasticsearch at elasticURL (http or https, no
// query) with http.DefaultClient: calls are bounded by their contexts.
func NewClient(elasticURL string) (*Client, error) {
	u, err := url.Parse(elasticURL)
	if err != nil {
		// Without the URL, which may hold credentials.
		return nil, fmt.Errorf("--elastic: %w", unwrapURLError(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		// Not quoted: the URL may hold credentials.
		return nil, errors.New("--elastic must be an http:// or https:// URL with a host and no query")
	}
	return &Client{
		base:        strings.TrimSuffix(u.String(), "/"),
		callTimeout: DefaultCallTimeout,
		maxAnswer:   maxAnswer,
	}, nil
}

// Error is an error answer from Elasticsearch, as its API reference
// documents them: {"error": {"type", "reason", ...}, "status": N}.
type Error struct {
	Method, Path string
	Status       int
	Type, Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Type, e.Reason)
}

// urlPath joins the segments, each escaped but for '*' and ',', legal path
// characters: the patterns and comma-separated lists of the multi-target
// syntax of index and snapshot paths. Neither is ever part of a name:
// Elasticsearch refuses both in index, repository and snapshot names.
func urlPath(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(multiTarget.Replace(url.PathEscape(s)))
	}
	return b.String()
}

var multiTarget = strings.NewReplacer("%2A", "*", "%2C", ",")

// call sends one request and decodes a 2xx answer into out (if not nil).
// wait is false for a call that should answer at once: it then gets the
// client's callTimeout on top of ctx.
func (c *Client) call(ctx context.Context, method, p string, query url.Values, body, out any, wait bool) error {
	if !wait {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.callTimeout)
		defer cancel()
	}
	target := c.base + p
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, p, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// net/http's error names the URL with any password redacted.
		return fmt.Errorf("%s %s: %w", method, p, unwrapURLError(err))
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, c.maxAnswer+1))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, p, unwrapURLError(err))
	}
	if int64(len(answer)) > c.maxAnswer {
		return fmt.Errorf("%s %s: answer over %d bytes", method, p, c.maxAnswer)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errorFrom(method, p, resp.StatusCode, answer)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("%s %s: undecodable answer: %w", method, p, err)
	}
	return nil
}

// unwrapURLError drops *url.Error's URL (the method and path are already
// said) but keeps what went wrong, e.g. context.DeadlineExceeded.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// errorFrom decodes Elasticsearch's error object, or quotes the start of
// whatever else came back (a proxy's page, say).
func errorFrom(method, p string, status int, answer []byte) error {
	e := &Error{Method: method, Path: p, Status: status}
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	var detail struct{ Type, Reason string }
	switch {
	case json.Unmarshal(answer, &body) == nil && json.Unmarshal(body.Error, &detail) == nil && detail.Type != "":
		e.Type, e.Reason = detail.Type, detail.Reason
	case json.Unmarshal(body.Error, &e.Reason) == nil:
		// {"error": "Content-Type header [] is not supported", "status": 406}
	default:
		e.Reason = string(answer)
	}
	if len(e.Reason) > maxErrorText {
		e.Reason = e.Reason[:maxErrorText] + "..."
	}
	if e.Type == "" {
		e.Type = http.StatusText(status)
	}
	return e
}
