// monocle-hook is Metacontroller's sync hook for Monocle objects: it answers
// the children that run a Monocle (Elasticsearch, the API, the crawler) and
// the Monocle's status.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	commonversion "github.com/prometheus/common/version"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/server"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// version and commit are stamped by the Makefile and the image build with
// -ldflags "-X main.version=... -X main.commit=...": the version is the
// chart's appVersion.
var (
	version = "dev"
	commit  = ""
)

const usage = `monocle-hook: Metacontroller's sync hook for Monocle objects.

Usage:
  monocle-hook [flags]                 serve the hook, its health endpoints and /metrics
  monocle-hook render -f monocle.yaml [--image IMAGE]
                                       print a Monocle's children as YAML (IMAGE: the hook's own, for
                                       the snapshot CronJobs, as the hook's --image)
  monocle-hook check -f objects.yaml   list the Monocles this version would not apply in full, and why
                                       (objects.yaml: kubectl get monocles,configmaps,secrets -A -o yaml)
  monocle-hook snapshot --elastic URL --repository R --location P --keep N
                                       snapshot a Monocle's indices, keep the N newest
  monocle-hook restore --elastic URL --repository R --location P --snapshot S
                                       restore them from snapshot S
  monocle-hook elastic-proxy [--listen 127.0.0.1:9200]
                                       serve Elasticsearch on loopback with the credentials of the URL
                                       in MONOCLE_ELASTIC_URL (the sidecar of a Monocle's API pod)
  monocle-hook test --url URL [--ca-bundle PEM]
                                       send a recorded sync request to the hook at URL and check its
                                       answer (the chart's helm test runs it)
  monocle-hook --version               print the version, the commit and the Go version (or: version)
  monocle-hook --help                  print this (or: help; each subcommand has its --help)

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the subcommand args name, or serves the hook when they name
// none, and gives the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name, rest := "", args
	if len(args) > 0 {
		name, rest = args[0], args[1:]
	}
	exit := func(err error) int { return exitCode(stderr, "monocle-hook "+name, err) }
	// --help answers on stdout: the snapshot commands print their usage on
	// what they are given as stderr.
	usageOut := stderr
	if slices.ContainsFunc(rest, func(a string) bool { return a == "-h" || a == "-help" || a == "--h" || a == "--help" }) {
		usageOut = stdout
	}
	switch name {
	case "help":
		_, err := parseFlags([]string{"--help"}, stdout, stderr)
		return exit(err)
	case "version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	case "restore-job", "janitor-job":
		fmt.Fprintf(stderr, "monocle-hook %s: gone since 0.2.0: run kubectl monocle %s, which creates the Job and follows it (docs/plugin.md)\n", name, strings.TrimSuffix(name, "-job"))
		return 2
	case "render":
		return exit(render(rest, stdin, stdout, stderr))
	case "check":
		return check(rest, stdin, stdout, stderr)
	}
	// SIGTERM (the pod or the Job deleted, the Job's deadline passed) drains
	// the hook, and ends a snapshot's or a restore's requests in flight: the
	// run fails, and says so.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	switch name {
	case "snapshot":
		return exit(snapshot.RunSnapshot(ctx, rest, usageOut, time.Now))
	case "restore":
		return exit(snapshot.RunRestore(ctx, rest, usageOut))
	case "test":
		return exit(testHook(ctx, rest, stdout, stderr))
	case "elastic-proxy":
		return exit(elasticProxy(ctx, rest, stdout, stderr))
	}
	return exitCode(stderr, "monocle-hook", serve(ctx, args, stderr, nil))
}

// exitCode is a command's exit code, once it has said err on stderr unless
// the command said it already: 0 when the command succeeded or answered
// --help, 2 for a usage error, else 1.
func exitCode(stderr io.Writer, command string, err error) int {
	switch {
	case err == nil, errors.Is(err, errExit), errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	// One line of text, whatever the input the error quotes held.
	fmt.Fprintf(stderr, "%s: %s\n", command, printable.Escape(err.Error()))
	if errors.Is(err, snapshot.ErrUsage) {
		return 2
	}
	return 1
}

var (
	// errExit: --help or --version was answered; exit 0.
	errExit = errors.New("done")
	// errUsage: the flags were wrong, and said so with the usage.
	errUsage = errors.New("usage")
)

// parse parses fs's flags: -h and --help print its usage to stdout
// (errExit), a wrong flag the error and the usage to stderr (errUsage).
func parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var out bytes.Buffer
	fs.SetOutput(&out)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		io.Copy(stdout, &out)
		return errExit
	case err != nil:
		// The flag package prints a wrong flag as it was given, control
		// characters and all: said here escaped, then the usage.
		fmt.Fprintln(stderr, printable.Escape(err.Error()))
		fs.SetOutput(stderr)
		fs.Usage()
		return errUsage
	}
	return nil
}

// parseSubcommand parses a subcommand's flags as parse does; arguments
// left over are a usage error too.
func parseSubcommand(fs *flag.FlagSet, args []string, synopsis string, stdout, stderr io.Writer) error {
	fs.Usage = func() { fmt.Fprintf(fs.Output(), "Usage: monocle-hook %s\n\nFlags:\n", synopsis); fs.PrintDefaults() }
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "monocle-hook %s: unexpected arguments: %q\n", fs.Name(), fs.Args())
		return errUsage
	}
	return nil
}

// readInput reads the file -f names, or stdin for -; without -f, it says
// so on stderr and is a usage error.
func readInput(command, file string, stdin io.Reader, stderr io.Writer) ([]byte, error) {
	if file == "" {
		fmt.Fprintf(stderr, "monocle-hook %s: -f is required\n", command)
		return nil, errUsage
	}
	var b []byte
	var err error
	if st, statErr := os.Stat(file); file != "-" && statErr == nil && st.Mode().IsRegular() && st.Size() <= int64(maxInput) {
		// Read into one buffer of its size: io.ReadAll's doublings would
		// leave several times the input as garbage.
		b, err = os.ReadFile(file)
	} else {
		b, err = snapshot.ReadFile(file, stdin, int64(maxInput)+1)
	}
	if err == nil && len(b) > maxInput {
		// Never a cut: a list cut short is Monocles, or the Secrets they
		// read, left out of the answer.
		return nil, fmt.Errorf("the input is over %d MiB: read it from the cluster instead, each Monocle with only what it references: kubectl monocle check -A", maxInput>>20)
	}
	return b, err
}

// maxInput bounds what render and check read: the whole of it is held (its
// objects are decoded one at a time, hook/objects.go).
// A variable for the test that goes past it.
var maxInput = 1 << 30

// options are the serving flags.
type options struct {
	listen            string
	drain             time.Duration
	certFile, keyFile string
	logLevel          slog.Level
	memory            memorySettings
	image             string // the hook's own, for the snapshot CronJobs
	maxConnections    int
	// maxConnectionsPerAddress: of maxConnections, the most one remote
	// address holds.
	maxConnectionsPerAddress int
}

// parseFlags reads the serving flags. --help prints the usage and
// --version the version to stdout, and both return errExit; a wrong flag
// prints the usage to stderr and returns errUsage.
func parseFlags(args []string, stdout, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("monocle-hook", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	fs.StringVar(&o.listen, "listen", ":8080", "address to serve the hook, health and metrics on")
	fs.DurationVar(&o.drain, "shutdown-timeout", 20*time.Second, "how long in-flight syncs may take to finish on SIGTERM")
	fs.StringVar(&o.certFile, "tls-cert-file", "", "serve HTTPS with this PEM certificate (chain); reloaded when it changes; needs --tls-key-file")
	fs.StringVar(&o.keyFile, "tls-key-file", "", "the PEM private key of --tls-cert-file")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "the least level logged: debug (adds one line per customize request), info (one line per sync), warn (failed and refused requests), error")
	budget := fs.String("memory-budget", "", "the heap the /sync and /customize requests in flight may take, as a quantity (e.g. 32Mi); a request that does not fit\n"+
		"waits up to 1s, then is answered 429 with Retry-After. Default: a quarter of the container's memory limit (cgroup v2 memory.max,\n"+
		"or v1 memory.limit_in_bytes), else 32Mi. Unless GOMEMLIMIT is set, the Go runtime's memory limit is set to 1.5 times the budget")
	fs.IntVar(&o.maxConnections, "max-connections", 128, "the most connections held at once (the idle one longest is closed to make room); 16 more are kept for the health endpoints and /metrics")
	fs.IntVar(&o.maxConnectionsPerAddress, "max-connections-per-address", server.DefaultConnectionsPerAddress, "of --max-connections, the most one remote IP holds (its idle one longest is closed to make room for its next,\n"+
		"else that one goes to the health endpoints' 16); 0, or --max-connections or more: no share but the total")
	fs.StringVar(&o.image, "image", hookImage(), "the hook's own image, which runs the Monocles' snapshot CronJobs (the chart passes its own)")
	showVersion := fs.Bool("version", false, "print the version, the commit and the Go version, and exit")
	if err := parse(fs, args, stdout, stderr); err != nil {
		return o, err
	}
	if *showVersion {
		fmt.Fprintln(stdout, versionLine())
		return o, errExit
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if o.maxConnectionsPerAddress < 0 {
		return o, fmt.Errorf("--max-connections-per-address: %d is negative (0: no share but the total)", o.maxConnectionsPerAddress)
	}
	var err error
	if o.memory, err = memoryFor(*budget, os.DirFS("/")); err != nil {
		return o, fmt.Errorf("--memory-budget: %w", err)
	}
	return o, nil
}

// versionLine is what --version prints.
func versionLine() string {
	return fmt.Sprintf("monocle-hook %s (commit %s, %s)", version, buildCommit(), runtime.Version())
}

// buildCommit is the stamped commit, else the one the Go toolchain records
// when it builds in a git checkout.
func buildCommit() string {
	if commit != "" {
		return commit
	}
	rev, dirty := "", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision":
				rev = s.Value[:min(len(s.Value), 12)]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return "unknown"
	}
	return rev + dirty
}

// serve answers until ctx is done, then drains: /readyz fails and in-flight
// syncs get up to --shutdown-timeout to finish. It logs JSON lines to logs.
// started, if not nil, is told the address it listens on.
func serve(ctx context.Context, args []string, logs io.Writer, started func(net.Addr)) error {
	o, err := parseFlags(args, os.Stdout, os.Stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: o.logLevel}))
	tlsConf, err := tlsConfig(o.certFile, o.keyFile, log)
	if err != nil {
		return err
	}
	o.memory.apply()

	// monocle_hook_build_info, as Prometheus' own servers say theirs:
	// version, revision, Go version and platform.
	reg := prometheus.NewRegistry()
	commonversion.Version, commonversion.Revision = version, buildCommit()
	reg.MustRegister(versioncollector.NewCollector("monocle_hook"))
	srv := server.New(hook.Env{Now: time.Now, Rand: rand.Reader, Image: o.image}, log, reg,
		server.Options{MemoryBudget: o.memory.budget})
	tcp, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	listener := server.NewConnLimit(tcp, o.maxConnections, o.maxConnectionsPerAddress)
	httpServer := newHTTPServer(srv.Handler(), tlsConf, log)
	httpServer.ConnState, httpServer.ConnContext = listener.ConnState, listener.ConnContext
	log.Info("serving", "address", listener.Addr().String(), "https", tlsConf != nil, "version", version, "commit", buildCommit(),
		"memoryBudgetBytes", o.memory.budget, "budgetFrom", o.memory.from, "goMemLimitBytes", debug.SetMemoryLimit(-1))
	if started != nil {
		started(listener.Addr())
	}
	drained := make(chan error, 1)
	stop := context.AfterFunc(ctx, func() { drained <- drain(httpServer, srv, o.drain, log) })
	defer stop()
	if tlsConf != nil {
		// The key pair comes from TLSConfig.GetCertificate.
		err = httpServer.ServeTLS(listener, "", "")
	} else {
		err = httpServer.Serve(listener)
	}
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// Serve returns as soon as the drain begins.
	return <-drained
}

// drain lets the in-flight syncs finish, within timeout, once the process
// is told to stop.
func drain(httpServer *http.Server, srv *server.Server, timeout time.Duration, log *slog.Logger) error {
	log.Info("shutting down: finishing in-flight syncs", "timeout", timeout.String())
	srv.Drain()
	// A fresh context: the signal's one is already done.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// newHTTPServer sets every timeout: a client that is slow to send or to
// read holds a connection only so long.
func newHTTPServer(handler http.Handler, tlsConf *tls.Config, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		// Under the write timeout, so that its 408 can still be written;
		// the hook also holds a body to a minimum rate within it.
		ReadTimeout: server.BodyTimeout,
		// Longer than Metacontroller's 10 s hook timeout: a slow answer is
		// its timeout, not a cut connection.
		WriteTimeout: 15 * time.Second,
		IdleTimeout:  90 * time.Second,
		TLSConfig:    tlsConf,
		// The hook logs with slog; the server's own errors (TLS handshakes
		// that fail, mostly) go there too.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

func render(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	file := fs.String("f", "", "the Monocle object, as YAML or JSON (- for standard input)")
	image := fs.String("image", hookImage(), "the hook's own image, which the snapshot CronJobs run (as the hook's --image; the chart passes its own)")
	if err := parseSubcommand(fs, args, "render -f monocle.yaml", stdout, stderr); err != nil {
		return err
	}
	monocle, err := readInput("render", *file, stdin, stderr)
	if err != nil {
		return err
	}
	out, held, err := hook.Render(monocle, hook.Env{Now: time.Now, Rand: rand.Reader, Image: *image})
	if err != nil {
		return err
	}
	if held != nil {
		// What the output leaves out or keeps, and why.
		fmt.Fprintf(stderr, "monocle-hook render: SpecApplied=False, %s: %s\n", held.Reason, printable.Escape(held.Message))
	}
	_, err = stdout.Write(out)
	return err
}

// hookImage is this build's own image, the default of --image: the one the
// snapshot CronJobs run.
func hookImage() string { return instance.ImageRepository + ":" + version }
