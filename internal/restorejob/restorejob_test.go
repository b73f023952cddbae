package restorejob

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/internal/instance"
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
		t.Fatalf("%v (run go test ./internal/restorejob -update to write it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s (run go test ./internal/restorejob -update and review the diff):\n%s", path, got)
	}
}

// The printed manifest, as an admin gets it for the defaults.
func TestRestoreJobGolden(t *testing.T) {
	var out, errs bytes.Buffer
	err := Run([]string{"--monocle", "monocle-sample", "--namespace", "team-a", "--snapshot", "monocle-20261130-091500"}, &out, &errs, "v0.2.0")
	if err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	golden(t, "restore-job.yaml", out.Bytes())
	// Snapshots are suspended during the restore and resumed after it, and
	// a snapshot run is among the pods to wait for.
	for _, want := range []string{`{"spec":{"elasticsearch":{"snapshots":{"suspend":true}}}}`, `{"spec":{"elasticsearch":{"snapshots":{"suspend":null}}}}`,
		"component in (api,crawler,update-idents,snapshots)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the procedure does not say %s", want)
		}
	}
	if strings.Index(out.String(), `"suspend":true`) > strings.Index(out.String(), "apply -f THIS-FILE") {
		t.Error("snapshots are suspended after the restore starts")
	}

	// It is one Job that the API server can take, restricted and bounded.
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want the procedure's comments then one Job", len(docs))
	}
	for _, line := range strings.Split(docs[0], "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			t.Errorf("not a comment before the Job: %q", line)
		}
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	switch {
	case !strings.HasPrefix(job.Name, "monocle-sample-restore-") || len(job.Name) != len("monocle-sample-restore-")+10:
		t.Errorf("name %q", job.Name)
	case job.Namespace != "team-a":
		t.Errorf("namespace %q", job.Namespace)
	case c.Image != "ghcr.io/change-metrics/monocle-hook:v0.2.0":
		t.Errorf("image %q", c.Image)
	case strings.Join(c.Args, " ") != "restore --elastic $(MONOCLE_ELASTIC_URL) --repository monocle --location /usr/share/elasticsearch/snapshots/monocle --snapshot monocle-20261130-091500 --timeout 30m0s":
		t.Errorf("args %q", c.Args)
	// The snapshot user's URL, from the Secret the hook makes.
	case len(c.Env) != 1 || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.SecretKeyRef == nil ||
		c.Env[0].ValueFrom.SecretKeyRef.Name != "monocle-sample-elastic" || c.Env[0].ValueFrom.SecretKeyRef.Key != "monocle-snapshots.url":
		t.Errorf("env %+v", c.Env)
	case *job.Spec.BackoffLimit != 0 || *job.Spec.ActiveDeadlineSeconds != 32*60:
		t.Errorf("backoffLimit %d, activeDeadlineSeconds %d", *job.Spec.BackoffLimit, *job.Spec.ActiveDeadlineSeconds)
	case pod.RestartPolicy != corev1.RestartPolicyNever || *pod.AutomountServiceAccountToken:
		t.Errorf("restartPolicy %s, token %t", pod.RestartPolicy, *pod.AutomountServiceAccountToken)
	case !*pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
		*c.SecurityContext.AllowPrivilegeEscalation || c.SecurityContext.Capabilities.Drop[0] != "ALL":
		t.Errorf("not restricted: %+v %+v", pod.SecurityContext, c.SecurityContext)
	case c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero():
		t.Errorf("resources %+v", c.Resources)
	}
	for key := range job.Labels {
		if strings.Contains(key, "controller-uid") {
			t.Errorf("label %s: Metacontroller would adopt, then delete, the Job", key)
		}
	}
	if len(job.OwnerReferences) > 0 {
		t.Errorf("owned by %v", job.OwnerReferences)
	}
}

// One Job per snapshot, its name a valid job-name label value for the
// longest Monocle name.
func TestJobName(t *testing.T) {
	longest := strings.Repeat("m", instance.MaxNameLength)
	a := jobName(Options{Monocle: longest, Repository: "monocle", Snapshot: "monocle-20261130-091500"})
	b := jobName(Options{Monocle: longest, Repository: "monocle", Snapshot: "monocle-20261130-101500"})
	if a == b {
		t.Errorf("two snapshots, one Job name %s", a)
	}
	if a != jobName(Options{Monocle: longest, Repository: "monocle", Snapshot: "monocle-20261130-091500"}) {
		t.Error("the same snapshot, another name")
	}
	if errs := validation.IsDNS1123Label(a); len(errs) > 0 {
		t.Errorf("%s: %v", a, errs)
	}
}

func TestRestoreJobRefuses(t *testing.T) {
	base := []string{"--monocle", "m", "--namespace", "ns", "--snapshot", "monocle-20261130-091500"}
	tests := map[string]struct {
		args    []string
		version string
		wantErr string
	}{
		"no flag":                      {args: nil, version: "v1", wantErr: "missing --monocle, --namespace, --snapshot"},
		"no version and no --image":    {args: base, version: "dev", wantErr: "missing --image"},
		"a Monocle name too long":      {args: append(base, "--monocle", strings.Repeat("m", 39)), version: "v1", wantErr: "is not a Monocle's name"},
		"a Monocle name not a label":   {args: append(base, "--monocle", "M_1"), version: "v1", wantErr: "is not a Monocle's name"},
		"a namespace not a label":      {args: append(base, "--namespace", "a.b"), version: "v1", wantErr: `--namespace "a.b"`},
		"a snapshot name ES refuses":   {args: append(base, "--snapshot", "Snap shot"), version: "v1", wantErr: `snapshot "Snap shot"`},
		"a relative location":          {args: append(base, "--location", "snapshots"), version: "v1", wantErr: `location "snapshots"`},
		"a timeout under a minute":     {args: append(base, "--timeout", "10s"), version: "v1", wantErr: "--timeout 10s: at least 1m"},
		"an image with a space":        {args: append(base, "--image", "a b"), version: "v1", wantErr: `--image "a b"`},
		"a positional argument":        {args: append(base, "now"), version: "v1", wantErr: `unexpected arguments: ["now"]`},
		"--image for a dev build (ok)": {args: append(base, "--image", "localhost/monocle-hook:dev"), version: "dev"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(tc.args, &out, &bytes.Buffer{}, tc.version)
			if tc.wantErr == "" {
				if err != nil || !strings.Contains(out.String(), "image: localhost/monocle-hook:dev") {
					t.Errorf("err = %v, out:\n%s", err, out.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %s", err, tc.wantErr)
			}
			if out.Len() > 0 {
				t.Errorf("printed on error:\n%s", out.String())
			}
		})
	}
}
