package snapshot

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"
)

// DefaultTimeout bounds a whole run of either command.
const DefaultTimeout = 30 * time.Minute

// RunSnapshot is `monocle-hook snapshot`: it takes one snapshot and
// applies retention, logging to stderr. now names the snapshot.
func RunSnapshot(ctx context.Context, args []string, stderr io.Writer, now func() time.Time) error {
	fs := NewFlagSet("snapshot", stderr, "Usage: monocle-hook snapshot --elastic URL --repository NAME --location PATH --keep N [--prefix monocle] [--name PREFIX-YYYYMMDD-HHMMSS] [--timeout 30m]\n\n"+
		"Registers the fs repository if missing, snapshots Monocle's indices ("+Indices+") as PREFIX-YYYYMMDD-HHMMSS (UTC),\n"+
		"waits for it, and deletes those of its snapshots older than the KEEP-th newest successful one. Exits 1 on any failure, 2 on a usage error.\n\n")
	o := Options{Now: now, Log: slog.New(slog.NewTextHandler(stderr, nil))}
	fs.StringVar(&o.Repository, "repository", "", "the snapshot repository's name")
	fs.StringVar(&o.Location, "location", "", "the repository's directory on the Elasticsearch node, under its path.repo (e.g. "+DefaultLocation+")")
	fs.IntVar(&o.Keep, "keep", 0, "how many successful snapshots of ours to keep (at least 1)")
	fs.StringVar(&o.Prefix, "prefix", DefaultPrefix, "the prefix of our snapshots' names; retention deletes only names PREFIX-YYYYMMDD-HHMMSS")
	fs.StringVar(&o.Name, "name", "", "the snapshot's name, PREFIX-YYYYMMDD-HHMMSS (default: of now); one that exists is kept if it succeeded, else deleted and taken again")
	return runAgainst(ctx, fs, args, "the most the whole run may take, the snapshot's wait included", func(ctx context.Context, c *Client) error {
		_, err := Take(ctx, c, o)
		return err
	}, "repository", "location", "keep")
}

// RunRestore is `monocle-hook restore`: it restores Monocle's indices from
// one snapshot, logging to stderr.
func RunRestore(ctx context.Context, args []string, stderr io.Writer) error {
	fs := NewFlagSet("restore", stderr, "Usage: monocle-hook restore --elastic URL --repository NAME --location PATH --snapshot NAME [--timeout 30m]\n\n"+
		"Restores Monocle's indices from a SUCCESS snapshot, in place: closes those that exist, restores, waits until\n"+
		"their primary shards are active. Stop the Monocle's API and crawler first: kubectl monocle restore does the whole procedure.\n\n")
	o := RestoreOptions{Log: slog.New(slog.NewTextHandler(stderr, nil))}
	fs.StringVar(&o.Repository, "repository", "", "the snapshot repository's name (registered if missing)")
	fs.StringVar(&o.Location, "location", "", "the repository's directory on the Elasticsearch node (e.g. "+DefaultLocation+")")
	fs.StringVar(&o.Snapshot, "snapshot", "", "the snapshot to restore")
	return runAgainst(ctx, fs, args, "the most the whole restore may take", func(ctx context.Context, c *Client) error {
		_, err := Restore(ctx, c, o)
		return err
	}, "repository", "location", "snapshot")
}

// runAgainst adds --elastic and --timeout to a command's flags, parses args
// (--elastic and the command's required flags are required), and runs the
// command against that Elasticsearch within --timeout.
func runAgainst(ctx context.Context, fs *flag.FlagSet, args []string, timeoutUsage string, command func(context.Context, *Client) error, required ...string) error {
	elastic := fs.String("elastic", "", "Elasticsearch's URL, e.g. http://NAME-elastic:9200")
	timeout := fs.Duration("timeout", DefaultTimeout, timeoutUsage)
	if err := Parse(fs, args, append([]string{"elastic"}, required...)...); err != nil {
		return err
	}
	client, err := NewClient(*elastic)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	return command(ctx, client)
}

// NewFlagSet is a command's flag set: its -h prints usage, then the
// flags, on stderr; Parse makes its errors ErrUsage.
func NewFlagSet(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

// ErrUsage marks an error in a command's flags or arguments (exit 2).
var ErrUsage = errors.New("usage")

// Parse parses args, refusing positional arguments and leaving out any of
// the required flags (ErrUsage); -h is flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string, required ...string) error {
	// The flag package prints a wrong flag as it was given, control
	// characters and all: its output is kept for -h, and a wrong flag is
	// said once, escaped, by the error returned (after the usage).
	out := fs.Output()
	var said bytes.Buffer
	fs.SetOutput(&said)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			out.Write(said.Bytes())
			return err
		}
		fs.Usage()
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments: %q", ErrUsage, fs.Args())
	}
	missing := slices.Clone(required)
	fs.Visit(func(f *flag.Flag) {
		missing = slices.DeleteFunc(missing, func(name string) bool { return name == f.Name })
	})
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing --%s", ErrUsage, strings.Join(missing, ", --"))
	}
	return nil
}

// ReadFile reads at most limit bytes of the file a command's -f names, or
// of stdin for "-".
func ReadFile(file string, stdin io.Reader, limit int64) ([]byte, error) {
	in := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	return io.ReadAll(io.LimitReader(in, limit))
}
