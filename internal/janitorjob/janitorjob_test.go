package janitorjob

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/janitorjob -update to write it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s (run go test ./internal/janitorjob -update and review the diff):\n%s", path, got)
	}
}

func objects(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each command, as an admin gets it: the API's image, mounted config,
// Elasticsearch URL (here a Secret's key) and node selector.
func TestJanitorJobGolden(t *testing.T) {
	tests := map[string][]string{
		"update-idents":               {"update-idents", "--monocle", "team", "-f", "testdata/objects.yaml"},
		"update-idents-one-workspace": {"update-idents", "--monocle", "team", "-f", "testdata/objects.yaml", "--workspace", "zuul"},
		"wipe-crawler-data":           {"wipe-crawler-data", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", "gerrit"},
		"set-crawler-commit-date":     {"set-crawler-commit-date", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", "gerrit", "--commit-date", "2023-06-01"},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := Run(args, bytes.NewReader(objects(t)), &out, &errOut); err != nil {
				t.Fatalf("%v\n%s", err, errOut.String())
			}
			golden(t, name+".yaml", out.Bytes())
			_, doc, _ := strings.Cut(out.String(), "\n---\n")
			var job batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(doc), &job); err != nil {
				t.Fatal(err)
			}
			c := job.Spec.Template.Spec.Containers[0]
			if job.Namespace != "metrics" || c.Image != "quay.io/change-metrics/monocle:1.11.2" ||
				job.Spec.Template.Spec.Volumes[0].ConfigMap.Name != "team-config-10892450b7" ||
				c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.SecretKeyRef.Name != "es" ||
				len(c.EnvFrom) > 0 || job.Spec.Template.Spec.NodeSelector["disk"] != "ssd" {
				t.Errorf("the Job does not run as the API does: %s", doc)
			}
			if got := strings.Join(c.Command[:3], " "); got != "monocle janitor "+args[0] {
				t.Errorf("command %q", c.Command)
			}
		})
	}
}

// What the janitor would silently do nothing with, or fail on, is refused
// when the Job is printed, with what is there.
func TestJanitorJobRefuses(t *testing.T) {
	tests := map[string]struct {
		args  []string
		usage bool // a usage error (exit 2)
		says  string
	}{
		"no command":             {args: []string{"--monocle", "team", "-f", "-"}, usage: true, says: "COMMAND is one of"},
		"an unknown command":     {args: []string{"reindex", "--monocle", "team", "-f", "-"}, usage: true, says: "not \"reindex\""},
		"no --monocle":           {args: []string{"update-idents", "-f", "-"}, usage: true, says: "--monocle and -f are required"},
		"wipe without crawler":   {args: []string{"wipe-crawler-data", "--monocle", "team", "-f", "-", "--workspace", "openstack"}, usage: true, says: "needs --crawler"},
		"date without a date":    {args: []string{"set-crawler-commit-date", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", "gerrit"}, usage: true, says: "needs --commit-date"},
		"update-idents, crawler": {args: []string{"update-idents", "--monocle", "team", "-f", "-", "--crawler", "gerrit"}, usage: true, says: "takes no --crawler"},
		"an unknown workspace": {
			args: []string{"wipe-crawler-data", "--monocle", "team", "-f", "-", "--workspace", "nova", "--crawler", "gerrit"},
			says: `no workspace "nova"; its workspaces: "openstack", "zuul"`,
		},
		"an unknown crawler": {
			args: []string{"set-crawler-commit-date", "--monocle", "team", "-f", "-", "--workspace", "zuul", "--crawler", "gerrit", "--commit-date", "2023-06-01"},
			says: `workspace "zuul" has no crawler "gerrit"; its crawlers: none`,
		},
		"a date Monocle cannot read": {
			args: []string{"set-crawler-commit-date", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", "gerrit", "--commit-date", "2023/06/01"},
			says: "is not a date Monocle reads",
		},
		"another Monocle": {
			args: []string{"update-idents", "--monocle", "other", "-f", "-"},
			says: "no Deployment other-api in -f",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Run(tc.args, bytes.NewReader(objects(t)), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tc.says) || errors.Is(err, snapshot.ErrUsage) != tc.usage {
				t.Fatalf("err = %v, want one saying %q (usage error: %v)", err, tc.says, tc.usage)
			}
			if out.Len() > 0 {
				t.Errorf("printed %s", out.String())
			}
		})
	}
}

// A namespace in -f that is not a DNS label is never printed into the
// comments' commands: the render attack, on janitor-job.
func TestJanitorJobRefusesANamespaceThatIsACommand(t *testing.T) {
	objects := strings.ReplaceAll(string(objects(t)), "namespace: metrics", `namespace: "x; echo PWNED; #"`)
	var out, errOut bytes.Buffer
	err := Run([]string{"update-idents", "--monocle", "team", "-f", "-"}, strings.NewReader(objects), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "is not a DNS label") || out.Len() > 0 {
		t.Fatalf("err = %v, printed %q; want a refusal and nothing printed", err, out.String())
	}
}

// The same request is the same Job: applied again, it runs nothing again.
func TestJobName(t *testing.T) {
	a := Options{Monocle: "team", Command: "set-crawler-commit-date", Workspace: "w", Crawler: "c", CommitDate: "2023-06-01"}
	same, b := a, a
	b.CommitDate = "2023-06-02"
	if jobName(a) != jobName(same) || jobName(a) == jobName(b) || len(jobName(a)) > 63 {
		t.Errorf("%s, %s", jobName(a), jobName(b))
	}
}
