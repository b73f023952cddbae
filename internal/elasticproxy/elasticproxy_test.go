package elasticproxy

import (
	"bytes"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// proxyTo serves Handler on the URL file it returns, with what the proxy
// logs.
func proxyTo(t testing.TB, content string) (proxy *httptest.Server, file string, logs *bytes.Buffer) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "url")
	if content != "" {
		if err := os.WriteFile(file, []byte(content), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	logs = &bytes.Buffer{}
	proxy = httptest.NewServer(Handler(file, nil, slog.New(slog.NewTextHandler(logs, nil))))
	t.Cleanup(proxy.Close)
	return proxy, file, logs
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
		file   string
		header http.Header
		status int
		says   string
	}{
		"the URL with credentials":             {file: "http://monocle:" + password + "@" + host, status: 200, says: "monocle POST /monocle.changes.1.w/_search?q=1 {}"},
		"a trailing newline and slash":         {file: "http://monocle:" + password + "@" + host + "/\n", status: 200, says: "monocle POST"},
		"no scheme, as Monocle's getURL reads": {file: "monocle:" + password + "@" + host, status: 200, says: "monocle POST"},
		"the client's own credentials replaced": {file: "http://monocle:" + password + "@" + host,
			header: http.Header{"Authorization": {"Basic ZWxhc3RpYzpjaGFuZ2VtZQ=="}}, status: 200, says: "monocle POST"},
		"the client's credentials dropped without any in the file": {file: "http://" + host,
			header: http.Header{"Authorization": {"Basic bW9ub2NsZTpzM2NyZXRQYXNzdzByZE9mVGhlTW9ub2NsZVVzZXI="}}, status: 401},
		"a wrong password":     {file: "http://monocle:nope@" + host, status: 401},
		"no file":              {file: "", status: 502, says: "cannot be read"},
		"https":                {file: "https://monocle:" + password + "@" + host, status: 502, says: "does not hold an http://"},
		"a path":               {file: "http://monocle:" + password + "@" + host + "/prefix", status: 502, says: "does not hold an http://"},
		"a query":              {file: "http://monocle:" + password + "@" + host + "?x=1", status: 502, says: "does not hold an http://"},
		"an unparsable URL":    {file: "http://monocle:" + password + "@" + host + ":x:y", status: 502, says: "does not hold an http://"},
		"a file over the size": {file: "http://monocle:" + password + "@" + host + strings.Repeat(" ", MaxURLFile), status: 502, says: "more than"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			proxy, _, logs := proxyTo(t, tc.file)
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

// A password the hook changes reaches the proxy with the Secret's file,
// without a restart.
func TestProxyRereadsTheFile(t *testing.T) {
	es := fakeElastic(t)
	host := strings.TrimPrefix(es.URL, "http://")
	proxy, file, _ := proxyTo(t, "http://monocle:old@"+host)
	if status, _ := get(t, "GET", proxy.URL+"/", "", nil); status != 401 {
		t.Fatalf("with the old password: %d, want 401", status)
	}
	if err := os.WriteFile(file, []byte("http://monocle:"+password+"@"+host), 0o400); err != nil {
		t.Fatal(err)
	}
	if status, body := get(t, "GET", proxy.URL+"/", "", nil); status != 200 {
		t.Fatalf("with the new password: %d %q, want 200", status, body)
	}
}

// Elasticsearch down: 502, and a log line that names its address, not the
// credentials.
func TestProxyWithElasticsearchDown(t *testing.T) {
	es := fakeElastic(t)
	host := strings.TrimPrefix(es.URL, "http://")
	es.Close()
	proxy, _, logs := proxyTo(t, "http://monocle:"+password+"@"+host)
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
	proxy, _, _ := proxyTo(b, "http://monocle:"+password+"@"+host)
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
