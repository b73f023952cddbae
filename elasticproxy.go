package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/change-metrics/monocle-hook/internal/elasticproxy"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// elasticProxy serves internal/elasticproxy until SIGTERM: the sidecar of
// a Monocle's API pod, through which the API reaches Elasticsearch with
// credentials its own URL does not carry.
func elasticProxy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("elastic-proxy", flag.ContinueOnError)
	listen := fs.String("listen", fmt.Sprintf("127.0.0.1:%d", instance.ElasticPort), "the loopback address to serve")
	file := fs.String("url-file", "", "the file holding Elasticsearch's URL with its credentials (a mounted Secret key), read on every request")
	if err := parseSubcommand(fs, args, "elastic-proxy --url-file FILE [--listen 127.0.0.1:9200]", stdout, stderr); err != nil {
		return err
	}
	if *file == "" {
		fmt.Fprintln(stderr, "monocle-hook elastic-proxy: --url-file is required")
		return errUsage
	}
	l, err := elasticproxy.Listen(*listen)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	srv := elasticproxy.Server(elasticproxy.Handler(*file, nil, log))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	log.Info("elastic-proxy: serving", "listen", l.Addr().String(), "url-file", *file)
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
