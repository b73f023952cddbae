package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The snapshot subcommands are dispatched, and exit 1 with a one-line
// reason on failure.
func TestRunSnapshotCommand(t *testing.T) {
	tests := map[string]struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		"snapshot without its flags": {
			args: []string{"snapshot"}, wantCode: 2,
			wantStderr: "monocle-hook snapshot: usage: missing --elastic, --repository, --location, --keep\n",
		},
		"restore against nothing listening": {
			args:       []string{"restore", "--elastic", "http://127.0.0.1:1", "--repository", "monocle", "--location", "/usr/share/elasticsearch/snapshots/monocle", "--snapshot", "s", "--timeout", "5s"},
			wantCode:   1,
			wantStderr: "monocle-hook restore: repository monocle: GET /_snapshot/monocle: dial tcp 127.0.0.1:1: connect: connection refused\n",
		},
		"help is not a failure, on stdout": {args: []string{"snapshot", "-h"}, wantStdout: "Usage: monocle-hook snapshot"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, nil, &stdout, &stderr); code != tc.wantCode {
				t.Errorf("code %d, want %d\nstderr: %s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantStderr, stderr.String())
			}
		})
	}
}

// --image reaches the snapshot CronJobs the served hook answers; without
// it, this build's own image does.
func TestServeImageFlag(t *testing.T) {
	const monocle = `{"parent":{"apiVersion":"monocle.monocle.change-metrics.io/v1alpha1","kind":"Monocle",` +
		`"metadata":{"name":"m","namespace":"ns","uid":"u"},"spec":{"elasticsearch":{"snapshots":{"schedule":"@daily","keep":3}}}}}`
	for args, want := range map[string]string{
		"--image=registry.example.com/monocle-hook@sha256:0123": "registry.example.com/monocle-hook@sha256:0123",
		"": "ghcr.io/change-metrics/monocle-hook:" + version,
	} {
		flags := []string{"--listen=127.0.0.1:0"}
		if args != "" {
			flags = append(flags, args)
		}
		addr := startServe(t, io.Discard, flags...)
		resp, err := http.Post("http://"+addr+"/sync", "application/json", strings.NewReader(monocle))
		if err != nil {
			t.Fatal(err)
		}
		var answer struct{ Children []map[string]any }
		err = json.NewDecoder(resp.Body).Decode(&answer)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range answer.Children {
			if c["kind"] == "CronJob" {
				b, _ := json.Marshal(c)
				found = strings.Contains(string(b), `"image":"`+want+`"`)
			}
		}
		if !found {
			t.Errorf("%q: no CronJob running %s", args, want)
		}
	}
}
