// Package elasticproxy is `monocle-hook elastic-proxy`: a reverse proxy on
// the API pod's loopback that adds Elasticsearch's credentials, so that
// the URL Monocle's API is given, and logs at start (src/Monocle/Main.hs:195,
// `logInfo "SystemReady" [... "elastic" .= elasticUrl]`, in pod logs the
// built-in `view` role may read), carries none. It reads the URL with the
// credentials from its environment (a Secret's key: a new password rolls
// the API's pods, the proxy with them), and writes nothing of it to a log
// or an answer.
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
	"strings"
	"time"
)

// Upstream is Elasticsearch as the URL says it: its URL without userinfo,
// and the credentials from it, if any.
type Upstream struct {
	URL            *url.URL
	User, Password string
	HasUserinfo    bool
}

// ErrURL is what ParseUpstream says of a URL it refuses: never the URL,
// which may hold credentials.
var ErrURL = errors.New("MONOCLE_ELASTIC_URL is not an http://[user:password@]host[:port] URL")

// ParseUpstream reads raw as Monocle's getURL does (src/CLI.hs: a value
// without a scheme is http://), refusing any other scheme than http
// (Monocle's client has no TLS), a path, a query or a fragment.
func ParseUpstream(raw string) (Upstream, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.Opaque != "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return Upstream{}, ErrURL
	}
	up := Upstream{URL: &url.URL{Scheme: u.Scheme, Host: u.Host}}
	if u.User != nil {
		up.HasUserinfo = true
		up.User = u.User.Username()
		up.Password, _ = u.User.Password()
	}
	return up, nil
}

// Handler forwards every request to up, with its credentials as basic
// authentication in place of any the client sent. transport nil is a
// transport that ignores the environment's proxies.
func Handler(up Upstream, transport http.RoundTripper, log *slog.Logger) http.Handler {
	if transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		// Monocle's API keeps a pool of its own: as many idle
		// connections as it may use at once, kept.
		t.MaxIdleConnsPerHost = 64
		transport = t
	}
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
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
