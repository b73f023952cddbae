package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// check prints every Monocle in the -f file that this version would not
// apply in full, and why: run it on the cluster's Monocles before an
// upgrade. It exits 0 when there is none, 1 when there is, 2 on an error.
func check(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	file := fs.String("f", "", "kubectl get monocles,configmaps,secrets -A -o yaml, or - for standard input")
	if err := parseSubcommand(fs, args, "check -f objects.yaml", stdout, stderr); err != nil {
		return exitCode(stderr, "monocle-hook check", err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "monocle-hook check:", printable.Escape(err.Error()))
		return 2
	}
	objects, err := readInput("check", *file, stdin, stderr)
	switch {
	case errors.Is(err, errUsage):
		return 2
	case err != nil:
		return fail(err)
	}
	rep, err := hook.Check(objects, hook.Env{Now: time.Now, Rand: rand.Reader, Image: hookImage()})
	if err != nil {
		return fail(err)
	}
	if rep.Checked == 0 {
		// A gate that passes on nothing passes a failed kubectl get.
		return fail(errors.New("no Monocle in the input: give it the output of `kubectl get monocles,configmaps,secrets -A -o yaml`"))
	}
	rep.Print(stdout)
	if len(rep.Refusals) > 0 {
		return 1
	}
	return 0
}
