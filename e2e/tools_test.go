package e2e

import (
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// toolBuild is a tools/*.sh script that builds tools once into a cache
// folder and prints it. Cold, cosign's and krew's builds take minutes of CPU
// that the tests, waiting on the API server most of the time, leave idle: a
// full run starts them as it begins (startToolBuilds), below the tests'
// priority, and the tests that run them wait for their folder.
type toolBuild struct {
	script string
	once   sync.Once
	done   chan struct{}
	folder string
	err    error
}

var (
	releaseBuild = &toolBuild{script: "../tools/release.sh"} // cosign, cyclonedx-gomod
	krewBuild    = &toolBuild{script: "../tools/krew.sh"}    // kubectl-krew, validate-krew-manifest
)

// start runs the script once, in the background, at nice 10.
func (b *toolBuild) start() {
	b.once.Do(func() {
		b.done = make(chan struct{})
		go func() {
			defer close(b.done)
			out, err := exec.Command("nice", "-n", "10", b.script).Output()
			if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) {
				err = errors.Join(err, errors.New(string(exitErr.Stderr)))
			}
			b.folder, b.err = strings.TrimSpace(string(out)), err
		}()
	})
}

// wait starts the script if no one has, and gives its folder.
func (b *toolBuild) wait(t *testing.T) string {
	t.Helper()
	b.start()
	<-b.done
	if b.err != nil {
		t.Fatalf("%s: %v", b.script, b.err)
	}
	return b.folder
}

// releaseTools is the folder of the cosign and cyclonedx-gomod that `make
// push` runs (tools/release.sh builds them once).
func releaseTools(t *testing.T) string { return releaseBuild.wait(t) }

// krewTools is the folder of the kubectl-krew and validate-krew-manifest
// that tools/krew.sh builds once.
func krewTools(t *testing.T) string { return krewBuild.wait(t) }

// startToolBuilds starts every tool build, for a run of the whole suite,
// and gives the function that waits for them all, so that no build outlives
// the run.
func startToolBuilds() (wait func()) {
	builds := []*toolBuild{releaseBuild, krewBuild}
	for _, b := range builds {
		b.start()
	}
	return func() {
		for _, b := range builds {
			<-b.done
		}
	}
}
