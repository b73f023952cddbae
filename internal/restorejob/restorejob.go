// Package restorejob prints the Job that restores a snapshot into a
// Monocle's Elasticsearch, with the steps around it as comments. It is never
// applied by the hook: an admin reads it and applies it once, so no spec
// field left behind can restore anything.
package restorejob

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/template"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// ImageRepository is where the hook's image is published; its tag is the
// hook's version.
const ImageRepository = "ghcr.io/change-metrics/monocle-hook"

// Options of one restore.
type Options struct {
	Monocle    string // the Monocle's name
	Namespace  string
	Snapshot   string
	Repository string
	Location   string
	Image      string // the hook's image, which runs `monocle-hook restore`
	Timeout    time.Duration
}

// Run is `monocle-hook restore-job`: it prints the Job for the flags in
// args. version is the hook's, the default image's tag.
func Run(args []string, stdout, stderr io.Writer, version string) error {
	fs := snapshot.NewFlagSet("restore-job", stderr, "Usage: monocle-hook restore-job --monocle NAME --namespace NS --snapshot SNAPSHOT [--image IMAGE] [...]\n\n"+
		"Prints (never applies) a Job that restores SNAPSHOT into the Monocle's Elasticsearch, and the steps\n"+
		"around it as comments: stop the API and the crawler, apply, check, start them again.\n\n")
	var o Options
	fs.StringVar(&o.Monocle, "monocle", "", "the Monocle's name")
	fs.StringVar(&o.Namespace, "namespace", "", "the Monocle's namespace")
	fs.StringVar(&o.Snapshot, "snapshot", "", "the snapshot to restore (kubectl logs of a snapshot run name it; or GET /_snapshot/REPOSITORY/_all)")
	fs.StringVar(&o.Repository, "repository", snapshot.DefaultRepository, "the snapshot repository")
	fs.StringVar(&o.Location, "location", snapshot.DefaultLocation, "the repository's directory on the Elasticsearch node")
	defaultImage := ""
	if version != "" && version != "dev" {
		defaultImage = ImageRepository + ":" + version
	}
	fs.StringVar(&o.Image, "image", defaultImage, "the hook's image (required for a build without a version)")
	fs.DurationVar(&o.Timeout, "timeout", snapshot.DefaultTimeout, "the most the restore may take")
	if err := snapshot.Parse(fs, args); err != nil {
		return err
	}
	if err := check(o); err != nil {
		return err
	}
	job := makeJob(o)
	return Print(stdout, procedure, job, map[string]any{"o": o, "Job": job.Name})
}

func check(o Options) error {
	var missing []string
	for name, v := range map[string]string{"monocle": o.Monocle, "namespace": o.Namespace, "snapshot": o.Snapshot, "image": o.Image} {
		if v == "" {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	if errs := validation.IsDNS1123Label(o.Monocle); len(errs) > 0 || len(o.Monocle) > instance.MaxNameLength {
		return fmt.Errorf("--monocle %q is not a Monocle's name: a DNS label of at most %d characters", o.Monocle, instance.MaxNameLength)
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("--namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if o.Timeout < time.Minute {
		return fmt.Errorf("--timeout %s: at least 1m", o.Timeout)
	}
	if strings.ContainsAny(o.Image, " \t\n'\"") {
		return fmt.Errorf("--image %q is not an image reference", o.Image)
	}
	return cmp.Or(snapshot.CheckName("snapshot", o.Snapshot), snapshot.CheckName("repository", o.Repository), snapshot.CheckLocation(o.Location))
}

// jobName is the Monocle's name, "-restore-" and a hash of the snapshot's
// name: at most 38+9+10 characters, a valid label value for the job-name
// label the Job controller sets; the same snapshot is the same Job, so
// applying the manifest again restores nothing again.
func jobName(o Options) string {
	sum := sha256.Sum256([]byte(o.Repository + "/" + o.Snapshot))
	return o.Monocle + "-restore-" + hex.EncodeToString(sum[:])[:10]
}

// makeJob is the restore Job: our own binary, `monocle-hook restore`,
// against the Monocle's Elasticsearch (N-elastic:9200, as the snapshot
// user: the hook's Secret N-elastic holds its URL), in a pod that meets the restricted Pod Security Standard like
// the hook's children. One attempt: a failed restore is for the admin to
// read, not to retry.
func makeJob(o Options) *batchv1.Job {
	n := instance.For(o.Monocle)
	container := corev1.Container{
		Name:    "restore",
		Image:   o.Image,
		Command: []string{"/monocle-hook"},
		// The snapshot user's URL, from the Secret N-elastic the hook
		// makes: the kubelet expands it, no field shows it.
		Env: []corev1.EnvVar{elasticusers.URLEnv(n.Elastic, elasticusers.Snapshots)},
		Args: []string{"restore",
			"--elastic", "$(MONOCLE_ELASTIC_URL)",
			"--repository", o.Repository,
			"--location", o.Location,
			"--snapshot", o.Snapshot,
			"--timeout", o.Timeout.String(),
		},
		// It only waits on HTTP answers.
		Resources: instance.Resources("10m", "32Mi", "64Mi"),
	}
	job := NewJob(jobName(o), o.Namespace, n.Selector("restore"), 0, instance.HookJobPod(container))
	job.Annotations = map[string]string{
		instance.Group + "/snapshot":   o.Snapshot,
		instance.Group + "/repository": o.Repository,
	}
	// Past our own --timeout, so that the restore's own error is what ends
	// it, this only if it hangs.
	job.Spec.ActiveDeadlineSeconds = ptr.To(int64((o.Timeout + 2*time.Minute) / time.Second))
	return job
}

// NewJob is a Job for an admin to apply, its pods labelled as it is. No
// controller-uid label and no owner: Metacontroller never adopts it, so
// the Monocle's syncs never delete it.
func NewJob(name, namespace string, labels map[string]string, backoffLimit int32, pod corev1.PodSpec) *batchv1.Job {
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(backoffLimit),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod,
			},
		},
	}
}

// Print writes, all or nothing, the comments (executed on data) and then
// the Job as YAML: what restore-job and janitor-job print. Only the fields
// a new Job has set: not its status (status: {}); a zero
// creationTimestamp is omitzero in apimachinery's ObjectMeta.
func Print(w io.Writer, comments *template.Template, job *batchv1.Job, data any) error {
	doc, err := yaml.Marshal(struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
		Spec            batchv1.JobSpec   `json:"spec"`
	}{job.TypeMeta, job.ObjectMeta, job.Spec})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := comments.Execute(&out, data); err != nil {
		return err
	}
	// Each comment line stays one line of text, whatever a value it
	// shows holds (the objects of -f are a file anyone may have written).
	_, err = fmt.Fprintf(w, "%s---\n%s", printable.Lines(out.String()), doc)
	return err
}

// procedure is printed before the Job, as YAML comments.
var procedure = template.Must(template.New("procedure").Parse(`# Restores snapshot {{.o.Snapshot}} (repository {{.o.Repository}}) into the Elasticsearch of
# Monocle {{.o.Monocle}} in namespace {{.o.Namespace}}, in place: the Monocle indices the snapshot holds
# are closed, replaced by the snapshot's and waited for; Monocle indices it does not hold (a
# workspace added since) are left as they are. Printed by monocle-hook restore-job: only you
# apply it, once. Applied again, it is unchanged and restores nothing; delete it to run it again.
#
# 1. Stop what writes to the indices (the API, the crawler, an update-idents Job) and what reads
#    them (a snapshot run), and wait until the last command lists no pod:
#      kubectl -n {{.o.Namespace}} patch monocle {{.o.Monocle}} --type merge -p '{"spec":{"api":{"replicas":0},"crawler":{"enabled":false}}}'
#    If the Monocle takes snapshots (spec.elasticsearch.snapshots is set), suspend them too: no
#    run starts during the restore, and none deletes the snapshot you restore:
#      kubectl -n {{.o.Namespace}} patch monocle {{.o.Monocle}} --type merge -p '{"spec":{"elasticsearch":{"snapshots":{"suspend":true}}}}'
#      kubectl -n {{.o.Namespace}} get pods -l 'app.kubernetes.io/instance={{.o.Monocle}},app.kubernetes.io/component in (api,crawler,update-idents,snapshots)' --field-selector status.phase=Running
# 2. Restore, follow its log, check it completed (it exits 1 on any failure, saying why):
#      kubectl -n {{.o.Namespace}} apply -f THIS-FILE
#      kubectl -n {{.o.Namespace}} logs -f job/{{.Job}}
#      kubectl -n {{.o.Namespace}} get job {{.Job}}        # COMPLETIONS 1/1
#    A failed restore leaves the indices it closed closed: delete the Job and apply it again,
#    or reopen them (POST /<index>/_open on Elasticsearch) to get back the data from before.
# 3. Start the API and the crawler again (null is the default: 1 replica, crawler on; put back
#    your own values if you had set others), then check the web UI shows the snapshot's data:
#      kubectl -n {{.o.Namespace}} patch monocle {{.o.Monocle}} --type merge -p '{"spec":{"api":{"replicas":null},"crawler":{"enabled":null}}}'
#    and, if you suspended them in step 1, resume the snapshots:
#      kubectl -n {{.o.Namespace}} patch monocle {{.o.Monocle}} --type merge -p '{"spec":{"elasticsearch":{"snapshots":{"suspend":null}}}}'
#    The crawlers resume from where the snapshot left them: what came after is crawled again.
# 4. kubectl -n {{.o.Namespace}} delete job {{.Job}}
`))
