package restorejob

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/internal/instance"
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
		t.Fatalf("%v (run go test ./internal/restorejob -update to write it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s (run go test ./internal/restorejob -update and review the diff):\n%s", path, got)
	}
}

// options are a restore of the defaults, as kubectl monocle restore
// gives them.
func options() Options {
	return Options{Monocle: "monocle-sample", Namespace: "team-a", Snapshot: "monocle-20261130-091500",
		Repository: snapshot.DefaultRepository, Location: snapshot.DefaultLocation,
		Image: "ghcr.io/change-metrics/monocle-hook:v0.2.0", Timeout: snapshot.DefaultTimeout}
}

// The Job, for the defaults.
func TestRestoreJobGolden(t *testing.T) {
	job, err := Build(options())
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "restore-job.yaml", out)

	// It is one Job that the API server can take, restricted and bounded.
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
	a := JobName(longest, "monocle", "monocle-20261130-091500")
	b := JobName(longest, "monocle", "monocle-20261130-101500")
	if a == b {
		t.Errorf("two snapshots, one Job name %s", a)
	}
	if a != JobName(longest, "monocle", "monocle-20261130-091500") {
		t.Error("the same snapshot, another name")
	}
	if errs := validation.IsDNS1123Label(a); len(errs) > 0 {
		t.Errorf("%s: %v", a, errs)
	}
}

func TestRestoreJobRefuses(t *testing.T) {
	tests := map[string]struct {
		edit    func(*Options)
		wantErr string
	}{
		"nothing":                    {edit: func(o *Options) { *o = Options{Timeout: time.Hour} }, wantErr: "missing image, namespace, snapshot, the Monocle's name"},
		"no image":                   {edit: func(o *Options) { o.Image = "" }, wantErr: "missing image"},
		"a Monocle name too long":    {edit: func(o *Options) { o.Monocle = strings.Repeat("m", 39) }, wantErr: "is not a Monocle's name"},
		"a Monocle name not a label": {edit: func(o *Options) { o.Monocle = "M_1" }, wantErr: "is not a Monocle's name"},
		"a namespace not a label":    {edit: func(o *Options) { o.Namespace = "a.b" }, wantErr: `namespace "a.b"`},
		"a snapshot name ES refuses": {edit: func(o *Options) { o.Snapshot = "Snap shot" }, wantErr: `snapshot "Snap shot"`},
		"a relative location":        {edit: func(o *Options) { o.Location = "snapshots" }, wantErr: `location "snapshots"`},
		"a timeout under a minute":   {edit: func(o *Options) { o.Timeout = 10 * time.Second }, wantErr: "--timeout 10s: at least 1m"},
		"an image with a space":      {edit: func(o *Options) { o.Image = "a b" }, wantErr: `image "a b"`},
		"another image (ok)":         {edit: func(o *Options) { o.Image = "localhost/monocle-hook:dev" }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := options()
			tc.edit(&o)
			job, err := Build(o)
			if tc.wantErr == "" {
				if err != nil || job.Spec.Template.Spec.Containers[0].Image != o.Image {
					t.Errorf("err = %v, job:\n%+v", err, job)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || job != nil {
				t.Errorf("err = %v, want %s", err, tc.wantErr)
			}
		})
	}
}
