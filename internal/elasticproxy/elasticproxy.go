// Package elasticproxy is `monocle-hook elastic-proxy`: a reverse proxy on
// the API pod's loopback that adds Elasticsearch's credentials, so that
// the URL Monocle's API is given, and logs at start (src/Monocle/Main.hs:195,
// `logInfo "SystemReady" [... "elastic" .= elasticUrl]`, in pod logs the
// built-in `view` role may read), carries none. It reads the URL with the
// credentials from a file (a key of a Secret, mounted) on every request:
// a password the hook changes reaches it without a restart, and nothing of
// the file is ever written to a log or an answer.
package elasticproxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"
)

// MaxURLFile is the most of the URL file read: a URL is far shorter.
const MaxURLFile = 4 << 10

// Upstream is Elasticsearch as the file says it: its URL without userinfo,
// and the credentials from it, if any.
type Upstream struct {
	URL            *url.URL
	User, Password string
	HasUserinfo    bool
}

// ReadUpstream reads the URL in file as Monocle's getURL does (src/CLI.hs:
// a value without a scheme is http://), refusing any other scheme than
// http (Monocle's client has no TLS), a path, a query or a fragment. Its
// errors name the file, never what it holds.
func ReadUpstream(file string) (Upstream, error) {
	f, err := os.Open(file)
	if err != nil {
		return Upstream{}, fmt.Errorf("the Elasticsearch URL file %s cannot be read", file)
	}
	defer f.Close()
	buf := make([]byte, MaxURLFile+1)
	n, _ := f.Read(buf)
	if n > MaxURLFile {
		return Upstream{}, fmt.Errorf("the Elasticsearch URL file %s holds more than %d bytes", file, MaxURLFile)
	}
	raw := strings.TrimSpace(string(buf[:n]))
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.Opaque != "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return Upstream{}, fmt.Errorf("the Elasticsearch URL file %s does not hold an http://[user:password@]host[:port] URL", file)
	}
	up := Upstream{URL: &url.URL{Scheme: u.Scheme, Host: u.Host}}
	if u.User != nil {
		up.HasUserinfo = true
		up.User = u.User.Username()
		up.Password, _ = u.User.Password()
	}
	return up, nil
}

type upstreamKey struct{}

// Handler forwards every request to the Elasticsearch of file, with its
// credentials as basic authentication in place of any the client sent;
// when file cannot be read, the client gets 502 and the log one line
// naming the file. transport nil is a transport that ignores the
// environment's proxies.
func Handler(file string, transport http.RoundTripper, log *slog.Logger) http.Handler {
	if transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		// Monocle's API keeps a pool of its own: as many idle
		// connections as it may use at once, kept.
		t.MaxIdleConnsPerHost = 64
		transport = t
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			up := r.In.Context().Value(upstreamKey{}).(Upstream)
			r.SetURL(up.URL)
			r.Out.Header.Del("Authorization")
			if up.HasUserinfo {
				r.Out.SetBasicAuth(up.User, up.Password)
			}
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// The transport's errors name the host and port, never the
			// credentials: the request's URL has none.
			if !errors.Is(err, context.Canceled) {
				log.Warn("elastic-proxy: Elasticsearch did not answer", "method", r.Method, "path", r.URL.Path, "error", err.Error())
			}
			http.Error(w, "elastic-proxy: Elasticsearch did not answer", http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up, err := ReadUpstream(file)
		if err != nil {
			log.Error("elastic-proxy: " + err.Error())
			http.Error(w, "elastic-proxy: "+err.Error(), http.StatusBadGateway)
			return
		}
		proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), upstreamKey{}, up)))
	})
}

// Listen refuses any address but a loopback one: what the proxy serves
// carries the credentials of whoever reaches it.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("--listen %q: only a loopback IP and port (127.0.0.1:9200) is served", addr)
	}
	return net.Listen("tcp", addr)
}

// Server is the proxy's HTTP server: bounded headers and slow clients;
// no bound on a body or an answer's time, which are Elasticsearch's and
// Monocle's (a bulk index, a long search).
func Server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 1 << 20}
}
