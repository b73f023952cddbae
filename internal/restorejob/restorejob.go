// Package restorejob builds the Job that restores a snapshot into a
// Monocle's Elasticsearch: what `kubectl monocle restore` creates, once it
// has stopped what writes to the indices. The hook never makes it, so no
// spec field left behind can restore anything.
package restorejob

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

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

// Build is the Job that restores o.Snapshot, once o is checked.
func Build(o Options) (*batchv1.Job, error) {
	if err := check(o); err != nil {
		return nil, err
	}
	return makeJob(o), nil
}

func check(o Options) error {
	var missing []string
	for name, v := range map[string]string{"the Monocle's name": o.Monocle, "namespace": o.Namespace, "snapshot": o.Snapshot, "image": o.Image} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	if errs := validation.IsDNS1123Label(o.Monocle); len(errs) > 0 || len(o.Monocle) > instance.MaxNameLength {
		return fmt.Errorf("%q is not a Monocle's name: a DNS label of at most %d characters", o.Monocle, instance.MaxNameLength)
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if o.Timeout < time.Minute {
		return fmt.Errorf("--timeout %s: at least 1m", o.Timeout)
	}
	if strings.ContainsAny(o.Image, " \t\n'\"") {
		return fmt.Errorf("image %q is not an image reference", o.Image)
	}
	return cmp.Or(snapshot.CheckName("snapshot", o.Snapshot), snapshot.CheckName("repository", o.Repository), snapshot.CheckLocation(o.Location))
}

// JobName is the Monocle's name, "-restore-" and a hash of the
// repository's and snapshot's names: at most 38+9+10 characters, a valid
// label value for the job-name label the Job controller sets; the same
// snapshot is the same Job, so it never runs twice at once.
func JobName(monocle, repository, snapshot string) string {
	sum := sha256.Sum256([]byte(repository + "/" + snapshot))
	return monocle + "-restore-" + hex.EncodeToString(sum[:])[:10]
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
	job := NewJob(JobName(o.Monocle, o.Repository, o.Snapshot), o.Namespace, n.Selector("restore"), 0, instance.HookJobPod(container))
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
