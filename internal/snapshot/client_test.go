package snapshot

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Every answer is read with a size limit and every call that should answer
// at once has a timeout, whatever the server at the other end does.
func TestCallIsBounded(t *testing.T) {
	tests := map[string]struct {
		handler      http.HandlerFunc
		wantErr      string
		wantDeadline bool
	}{
		"an answer over the limit": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(`{"x": "` + strings.Repeat("a", 2000) + `"}`))
			},
			wantErr: "GET /_snapshot/monocle: answer over 1024 bytes",
		},
		"headers, then a body that never ends": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(`{"monocle": `))
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			},
			wantDeadline: true,
		},
		"no answer at all": {
			handler:      func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			wantDeadline: true,
		},
		"not JSON": {
			handler: func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) },
			wantErr: "GET /_snapshot/monocle: undecodable answer",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			server := httptest.NewServer(tc.handler)
			defer server.Close()
			c, err := NewClient(server.URL)
			if err != nil {
				t.Fatal(err)
			}
			c.maxAnswer = 1024
			c.callTimeout = 200 * time.Millisecond
			var out map[string]any
			err = c.call(context.Background(), http.MethodGet, "/_snapshot/monocle", nil, nil, &out, false)
			switch {
			case tc.wantDeadline:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err = %v, want a deadline exceeded", err)
				}
			case err == nil || !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("err = %v, want %s", err, tc.wantErr)
			}
		})
	}
}

func TestErrorFrom(t *testing.T) {
	tests := map[string]struct {
		status int
		answer string
		want   string
	}{
		"Elasticsearch's error object": {
			status: 404,
			answer: `{"error":{"root_cause":[{"type":"repository_missing_exception","reason":"[monocle] missing"}],"type":"repository_missing_exception","reason":"[monocle] missing"},"status":404}`,
			want:   "GET /x: 404 repository_missing_exception: [monocle] missing",
		},
		"an error as a string": {
			status: 406,
			answer: `{"error":"Content-Type header [text/plain] is not supported","status":406}`,
			want:   "GET /x: 406 Not Acceptable: Content-Type header [text/plain] is not supported",
		},
		"a proxy's page, cut": {
			status: 502,
			answer: "<html>" + strings.Repeat("x", 600),
			want:   "GET /x: 502 Bad Gateway: <html>" + strings.Repeat("x", 506) + "...",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := errorFrom("GET", "/x", tc.status, []byte(tc.answer)).Error(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestNewClient(t *testing.T) {
	tests := map[string]struct {
		url, wantBase string
	}{
		"a Service":                   {url: "http://monocle-elastic:9200", wantBase: "http://monocle-elastic:9200"},
		"a trailing slash":            {url: "http://monocle-elastic:9200/", wantBase: "http://monocle-elastic:9200"},
		"behind a proxy, at a path":   {url: "https://proxy/es/", wantBase: "https://proxy/es"},
		"no scheme":                   {url: "monocle-elastic:9200"},
		"a query":                     {url: "http://monocle-elastic:9200/?pretty"},
		"no host":                     {url: "http:///x"},
		"another scheme":              {url: "file:///etc/passwd"},
		"a fragment":                  {url: "http://h/#x"},
		"an unparsable one (a space)": {url: "http://h :9200"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := NewClient(tc.url)
			switch {
			case tc.wantBase == "" && err == nil:
				t.Errorf("accepted, base %s", c.base)
			case tc.wantBase != "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantBase != "" && c.base != tc.wantBase:
				t.Errorf("base %s, want %s", c.base, tc.wantBase)
			}
		})
	}
}
