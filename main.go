// monocle-hook is Metacontroller's sync hook for Monocle objects: it answers
// the children that run a Monocle (Elasticsearch, the API, the crawler) and
// the Monocle's status.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/change-metrics/monocle-hook/hook"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `monocle-hook: Metacontroller's sync hook for Monocle objects.

Usage:
  monocle-hook [--listen :8080] [--shutdown-timeout 20s]   serve the hook
               [--tls-cert-file F --tls-key-file K]        over HTTPS, reloading F and K when they change
  monocle-hook render -f monocle.yaml                       print a Monocle's children as YAML
  monocle-hook check -f objects.yaml                        list the Monocles this version would not apply in full
                                                            (objects.yaml: kubectl get monocles,configmaps,secrets -A -o yaml)
  monocle-hook snapshot --elastic URL --repository R --location P --keep N   snapshot a Monocle's indices, keep the N newest
  monocle-hook restore --elastic URL --repository R --location P --snapshot S  restore them from snapshot S
  monocle-hook restore-job --monocle N --namespace NS --snapshot S           print a Job that runs restore
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == "check" {
		os.Exit(check(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if code, ok := runSnapshotCommand(os.Args[1:], os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == "render" {
		if err := render(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "monocle-hook render:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := serve(ctx, os.Args[1:], log, nil); err != nil {
		fmt.Fprintln(os.Stderr, "monocle-hook:", err)
		os.Exit(1)
	}
}

// serve answers until ctx is done, then drains: /readyz fails and in-flight
// syncs get up to --shutdown-timeout to finish. started, if not nil, is
// told the address it listens on.
func serve(ctx context.Context, args []string, log *slog.Logger, started func(net.Addr)) error {
	fs := flag.NewFlagSet("monocle-hook", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	listen := fs.String("listen", ":8080", "address to serve the hook, health and metrics on")
	drain := fs.Duration("shutdown-timeout", 20*time.Second, "how long in-flight syncs may take to finish on SIGTERM")
	certFile := fs.String("tls-cert-file", "", "serve HTTPS with this PEM certificate (chain); reloaded when it changes; needs --tls-key-file")
	keyFile := fs.String("tls-key-file", "", "the PEM private key of --tls-cert-file")
	image := fs.String("image", hookImage(), "the hook's own image, which runs the Monocles' snapshot CronJobs (the chart passes its own)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	tlsConf, err := tlsConfig(*certFile, *keyFile, log)
	if err != nil {
		return err
	}

	srv := hook.NewServer(hook.Env{Now: time.Now, Rand: rand.Reader, Image: *image}, log, prometheus.NewRegistry(), version)
	httpServer := &http.Server{
		Addr:              *listen,
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		// Longer than Metacontroller's 10 s hook timeout: a slow answer is
		// its timeout, not a cut connection.
		WriteTimeout: 15 * time.Second,
		IdleTimeout:  90 * time.Second,
		TLSConfig:    tlsConf,
		// The hook logs with slog; the server's own errors (TLS handshakes
		// that fail, mostly) go there too.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			// The key pair comes from TLSConfig.GetCertificate.
			errc <- httpServer.ServeTLS(listener, "", "")
			return
		}
		errc <- httpServer.Serve(listener)
	}()
	log.Info("serving", "address", listener.Addr().String(), "https", tlsConf != nil, "version", version)
	if started != nil {
		started(listener.Addr())
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight syncs", "timeout", drain.String())
	srv.Drain()
	// A fresh context: the signal's one is already done.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

func render(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	file := fs.String("f", "", "the Monocle object, as YAML or JSON (- for standard input)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("-f is required")
	}
	in := stdin
	if *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	monocle, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	out, err := hook.Render(monocle, hook.Env{Now: time.Now, Rand: rand.Reader, Image: hookImage()})
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
