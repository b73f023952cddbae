package snapshot

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// The commands as the CronJob and the restore Job run them: flags in, an
// error (exit 1) for any failing step, a log of what was done.
func TestRunSnapshot(t *testing.T) {
	tests := map[string]struct {
		setup        func(f *fakeES)
		args         []string // after --elastic URL
		wantErr      string
		wantDeadline bool
		wantLog      string
	}{
		"takes one and prunes": {
			setup: func(f *fakeES) {
				withMonocle(f)
				f.seed(DefaultLocation, past("monocle-20261130-081500", "SUCCESS", 1))
			},
			args:    []string{"--repository", "monocle", "--location", DefaultLocation, "--keep", "1"},
			wantLog: "msg=\"snapshot deleted\" snapshot=monocle-20261130-081500 state=SUCCESS keep=1",
		},
		"another prefix": {
			setup:   withMonocle,
			args:    []string{"--repository", "monocle", "--location", DefaultLocation, "--keep", "1", "--prefix", "nightly"},
			wantLog: "msg=\"snapshot taken\" snapshot=nightly-20261130-091500",
		},
		"required flags": {
			setup:   withMonocle,
			args:    []string{"--location", DefaultLocation},
			wantErr: "missing --repository, --keep",
		},
		"positional arguments": {
			setup:   withMonocle,
			args:    []string{"--repository", "monocle", "--location", DefaultLocation, "--keep", "1", "now"},
			wantErr: `unexpected arguments: ["now"]`,
		},
		"a failed snapshot is an error": {
			setup:   func(f *fakeES) { withMonocle(f); f.nextState = "FAILED" },
			args:    []string{"--repository", "monocle", "--location", DefaultLocation, "--keep", "1"},
			wantErr: "is FAILED",
		},
		"--timeout bounds the wait": {
			setup:        func(f *fakeES) { withMonocle(f); f.hang["create snapshot"] = true },
			args:         []string{"--repository", "monocle", "--location", DefaultLocation, "--keep", "1", "--timeout", "300ms"},
			wantDeadline: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFakeES(t)
			tc.setup(f)
			var log bytes.Buffer
			err := RunSnapshot(context.Background(), append([]string{"--elastic", f.server.URL}, tc.args...), &log, func() time.Time { return testNow })
			switch {
			case tc.wantDeadline:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err = %v, want a deadline exceeded", err)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %s", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("%v\n%s", err, log.String())
			}
			if !strings.Contains(log.String(), tc.wantLog) {
				t.Errorf("log lacks %s:\n%s", tc.wantLog, log.String())
			}
		})
	}
}

func TestRunRestore(t *testing.T) {
	f := newFakeES(t)
	withMonocle(f)
	holding(f, "SUCCESS", "monocle.config", "monocle.changes.1.demo")
	var log bytes.Buffer
	err := RunRestore(context.Background(), []string{
		"--elastic", f.server.URL, "--repository", "monocle", "--location", DefaultLocation, "--snapshot", restored, "--timeout", "1m",
	}, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	// Elasticsearch is given its wait a little shorter than --timeout.
	health := "GET /_cluster/health/monocle.changes.1.demo,monocle.config?timeout=5"
	if !slices.ContainsFunc(f.requestLog(), func(r string) bool { return strings.HasPrefix(r, health) }) {
		t.Errorf("no %s... in %q", health, f.requestLog())
	}
	for _, want := range []string{
		`msg="closing the indices to restore" indices="[monocle.changes.1.demo monocle.config]"`,
		`msg="left as they are: Monocle indices the snapshot does not hold" indices=[monocle.changes.1.zuul]`,
		`msg="restored: every primary shard is active" snapshot=` + restored + ` indices=2`,
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, log.String())
		}
	}

	err = RunRestore(context.Background(), []string{"--elastic", f.server.URL, "--repository", "monocle", "--location", DefaultLocation}, &log)
	if !errors.Is(err, ErrUsage) || err.Error() != "usage: missing --snapshot" {
		t.Errorf("err = %v", err)
	}
}

// The URL may hold credentials: no error quotes it.
func TestElasticURLNeverQuoted(t *testing.T) {
	const secret = "s3cr3t-pass"
	for name, url := range map[string]string{
		"not http":    "ftp://user:" + secret + "@host:9200",
		"a query":     "http://user:" + secret + "@host:9200/?x=1",
		"unreachable": "http://user:" + secret + "@127.0.0.1:1",
		"unparsable":  "http://user:" + secret + "@host name:9200",
	} {
		t.Run(name, func(t *testing.T) {
			err := RunSnapshot(context.Background(), []string{"--elastic", url, "--repository", "monocle", "--location", DefaultLocation, "--keep", "1", "--timeout", "2s"}, &bytes.Buffer{}, time.Now)
			if err == nil || strings.Contains(err.Error(), secret) {
				t.Errorf("err = %v", err)
			}
		})
	}
}
