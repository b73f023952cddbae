package elasticproxy

import (
	"bytes"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/fakerealm"
)

const password = "s3cretPassw0rdOfTheMonocleUser"

// fakeElastic answers as a node with security on: 401 without the
// monocle user's credentials (internal/fakerealm checks them as the file
// realm does), else 200 with the user and the path it was asked.
func fakeElastic(t testing.TB) *httptest.Server {
	t.Helper()
	hash, err := elasticusers.Hash([]byte(password), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	realm, err := fakerealm.New("monocle:"+hash+"\n", elasticusers.UsersRoles(), elasticusers.Roles)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, status := realm.Authenticate(r)
		w.WriteHeader(status)
		body, _ := io.ReadAll(r.Body)
		io.WriteString(w, user+" "+r.Method+" "+r.URL.RequestURI()+" "+string(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// proxyTo serves Handler for the URL raw, with what the proxy logs; the
// parse error when it refuses raw.
func proxyTo(t testing.TB, raw string) (proxy *httptest.Server, logs *bytes.Buffer, err error) {
	t.Helper()
	up, err := ParseUpstream(raw)
	if err != nil {
		return nil, nil, err
	}
	logs = &bytes.Buffer{}
	proxy = httptest.NewServer(Handler(up, nil, slog.New(slog.NewTextHandler(logs, nil))))
	t.Cleanup(proxy.Close)
	return proxy, logs, nil
}

func get(t *testing.T, method, url, body string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestProxyAddsTheCredentials(t *testing.T) {
	es := fakeElastic(t)
	host := strings.TrimPrefix(es.URL, "http://")
	tests := map[string]struct {
		url    string
		header http.Header
		status int // 0: the URL is refused
		says   string
	}{
		"the URL with credentials":             {url: "http://monocle:" + password + "@" + host, status: 200, says: "monocle POST /monocle.changes.1.w/_search?q=1 {}"},
		"a trailing newline and slash":         {url: "http://monocle:" + password + "@" + host + "/\n", status: 200, says: "monocle POST"},
		"no scheme, as Monocle's getURL reads": {url: "monocle:" + password + "@" + host, status: 200, says: "monocle POST"},
		"the client's own credentials replaced": {url: "http://monocle:" + password + "@" + host,
			header: http.Header{"Authorization": {"Basic ZWxhc3RpYzpjaGFuZ2VtZQ=="}}, status: 200, says: "monocle POST"},
		"the client's credentials dropped without any in the URL": {url: "http://" + host,
			header: http.Header{"Authorization": {"Basic bW9ub2NsZTpzM2NyZXRQYXNzdzByZE9mVGhlTW9ub2NsZVVzZXI="}}, status: 401},
		"a wrong password":  {url: "http://monocle:nope@" + host, status: 401},
		"none":              {url: ""},
		"https":             {url: "https://monocle:" + password + "@" + host},
		"a path":            {url: "http://monocle:" + password + "@" + host + "/prefix"},
		"a query":           {url: "http://monocle:" + password + "@" + host + "?x=1"},
		"an unparsable URL": {url: "http://monocle:" + password + "@" + host + ":x:y"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			proxy, logs, err := proxyTo(t, tc.url)
			if tc.status == 0 {
				if err == nil || strings.Contains(err.Error(), password) {
					t.Errorf("ParseUpstream: %v, want ErrURL", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			status, body := get(t, "POST", proxy.URL+"/monocle.changes.1.w/_search?q=1", "{}", tc.header)
			if status != tc.status || !strings.Contains(body, tc.says) {
				t.Errorf("%d %q, want %d saying %q", status, body, tc.status, tc.says)
			}
			if strings.Contains(body+logs.String(), password) {
				t.Errorf("the password reached the answer or the log: %q %q", body, logs)
			}
		})
	}
}

// Elasticsearch down: 502, and a log line that names its address, not the
// credentials.
func TestProxyWithElasticsearchDown(t *testing.T) {
	es := fakeElastic(t)
	host := strings.TrimPrefix(es.URL, "http://")
	es.Close()
	proxy, logs, err := proxyTo(t, "http://monocle:"+password+"@"+host)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := get(t, "GET", proxy.URL+"/", "", nil); status != 502 {
		t.Fatalf("%d, want 502", status)
	}
	if !strings.Contains(logs.String(), host) || strings.Contains(logs.String(), password) {
		t.Errorf("log %q: want the address, never the password", logs)
	}
}

func TestListenOnlyOnLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.1.2.3:9200", "localhost:0", "[::]:0"} {
		if l, err := Listen(addr); err == nil {
			l.Close()
			t.Errorf("Listen(%q) served", addr)
		}
	}
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

// BenchmarkProxy is a small search's round trip over loopback to the
// fake Elasticsearch, directly and through the proxy (BENCHMARKS.md).
func BenchmarkProxy(b *testing.B) {
	es := fakeElastic(b)
	host := strings.TrimPrefix(es.URL, "http://")
	proxy, _, err := proxyTo(b, "http://monocle:"+password+"@"+host)
	if err != nil {
		b.Fatal(err)
	}
	for name, url := range map[string]string{"direct": es.URL, "proxied": proxy.URL} {
		b.Run(name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
			body := `{"query":{"match_all":{}}}`
			for b.Loop() {
				req, _ := http.NewRequest("POST", url+"/monocle.changes.1.w/_search", strings.NewReader(body))
				req.SetBasicAuth("monocle", password) // the direct client's, as Monocle sends them today
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%d", resp.StatusCode)
				}
			}
		})
	}
}
