package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/change-metrics/monocle-hook/internal/elasticproxy"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// elasticProxy serves internal/elasticproxy until SIGTERM: the sidecar of
// a Monocle's API pod, through which the API reaches Elasticsearch with
// credentials its own URL does not carry. The URL with them is its
// MONOCLE_ELASTIC_URL, which the kubelet reads from a Secret's key.
func elasticProxy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("elastic-proxy", flag.ContinueOnError)
	listen := fs.String("listen", instance.ElasticProxyListen, "the loopback address to serve")
	if err := parseSubcommand(fs, args, "elastic-proxy [--listen 127.0.0.1:9200] (Elasticsearch's URL with its credentials in MONOCLE_ELASTIC_URL)", stdout, stderr); err != nil {
		return err
	}
	up, err := elasticproxy.ParseUpstream(os.Getenv("MONOCLE_ELASTIC_URL"))
	if err != nil {
		return err
	}
	l, err := elasticproxy.Listen(*listen)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	srv := elasticproxy.Server(elasticproxy.Handler(up, nil, log))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	log.Info("elastic-proxy: serving", "listen", l.Addr().String(), "elasticsearch", up.URL.Host)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// The API's container has stopped before its sidecar is sent SIGTERM:
	// what is left in flight is a moment's.
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
