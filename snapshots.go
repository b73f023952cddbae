package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/change-metrics/monocle-hook/internal/janitorjob"
	"github.com/change-metrics/monocle-hook/internal/restorejob"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// runSnapshotCommand runs the subcommands that back up and restore a
// Monocle's Elasticsearch; ok is false for any other name:
//
//	monocle-hook snapshot --elastic URL --repository NAME --location PATH --keep N [--prefix monocle] [--timeout 30m]
//	monocle-hook restore --elastic URL --repository NAME --location PATH --snapshot NAME [--timeout 30m]
//	monocle-hook restore-job --monocle NAME --namespace NS --snapshot NAME [--image IMAGE] [...]
//
// code is the exit code: 1 when any step failed.
func runSnapshotCommand(args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	// SIGTERM (the Job deleted, its deadline passed) ends the requests
	// in flight: the run fails, and says so.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// --help answers on stdout: the commands print their usage on what
	// they are given as stderr.
	usageOut := stderr
	if slices.ContainsFunc(args[1:], func(a string) bool { return a == "-h" || a == "-help" || a == "--h" || a == "--help" }) {
		usageOut = stdout
	}
	var err error
	switch args[0] {
	case "snapshot":
		err = snapshot.RunSnapshot(ctx, args[1:], usageOut, time.Now)
	case "restore":
		err = snapshot.RunRestore(ctx, args[1:], usageOut)
	case "restore-job":
		err = restorejob.Run(args[1:], stdout, usageOut, version)
	case "janitor-job":
		err = janitorjob.Run(args[1:], os.Stdin, stdout, usageOut)
	default:
		return 0, false
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0, true
	case err != nil:
		fmt.Fprintf(stderr, "monocle-hook %s: %v\n", args[0], err)
		if errors.Is(err, snapshot.ErrUsage) {
			return 2, true
		}
		return 1, true
	}
	return 0, true
}

// hookImage is this build's own image, the default of --image: the one the
// snapshot CronJobs run.
func hookImage() string { return restorejob.ImageRepository + ":" + version }
