package elastic

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	// The time zone database, for machines without one (the hook's
	// distroless image): a timeZone valid for the API server is valid here.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// Snapshots of the managed Elasticsearch: a CronJob runs our own binary
// (`monocle-hook snapshot`, internal/snapshot) against Elasticsearch's
// Service, which writes them to an fs repository on a second volume of the
// StatefulSet, the volumeClaimTemplate "snapshots", mounted at
// snapshot.PathRepo. docs/snapshots.md says why this design
// and not another.

// snapshotSettings are the checked snapshots spec; nil in Settings when
// snapshots are off.
type snapshotSettings struct {
	schedule  string
	timeZone  string // "" for the controller's own (UTC)
	keep      int32
	suspend   bool
	size      resource.Quantity
	sizeAsked bool
	class     string
}

const (
	// maxKeep bounds what a Monocle's writer sets (the CRD holds the same
	// number).
	maxKeep = 1000
	// snapshotTimeout bounds one run of `monocle-hook snapshot`.
	snapshotTimeout = 30 * time.Minute
	// snapshotAttempts is the Job's backoffLimit+1: a run Elasticsearch
	// refused while restarting is tried again, a broken one not forever.
	snapshotAttempts = 3
	// DefaultHookImage runs the snapshots when Env.Image is empty (main
	// always sets it, from --image).
	DefaultHookImage = "ghcr.io/change-metrics/monocle-hook:latest"
)

// timeZonePattern is what the API server accepts in a CronJob's timeZone
// before loading it (k8s.io/kubernetes pkg/apis/batch/validation).
var timeZonePattern = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// resolveSnapshots checks spec.elasticsearch.snapshots. dataSize is the
// data volume's size, the snapshot volume's default.
func resolveSnapshots(spec v1alpha1.SnapshotsSpec, dataSize resource.Quantity) (*snapshotSettings, *condition.FieldError) {
	const field = "elasticsearch.snapshots."
	s := &snapshotSettings{schedule: spec.Schedule, timeZone: spec.TimeZone, suspend: spec.Suspend, class: spec.StorageClassName, size: dataSize}
	if err := checkTimeZone(spec.TimeZone); err != nil {
		return nil, condition.Invalid(field+"timeZone", "%s %v", condition.Quote(spec.TimeZone), err)
	}
	if err := checkSchedule(spec.Schedule, spec.TimeZone); err != nil {
		return nil, condition.Invalid(field+"schedule", "%v", err)
	}
	switch {
	case spec.Keep == nil:
		return nil, condition.Invalid(field+"keep", "is required: how many successful snapshots to keep")
	case *spec.Keep < 1 || *spec.Keep > maxKeep:
		return nil, condition.Invalid(field+"keep", "is %d: keep 1 to %d snapshots", *spec.Keep, maxKeep)
	}
	s.keep = *spec.Keep
	if spec.StorageSize != "" {
		q, err := resource.ParseQuantity(spec.StorageSize)
		if err != nil || q.Sign() <= 0 {
			return nil, condition.Invalid(field+"storageSize", "%s is not a positive quantity such as 10Gi", condition.Quote(spec.StorageSize))
		}
		s.size, s.sizeAsked = q, true
	}
	return s, nil
}

// checkSchedule accepts what the API server accepts in a new CronJob's
// schedule, and refuses a schedule that never fires (which the API server
// accepts, and the controller then never runs).
func checkSchedule(schedule, timeZone string) error {
	switch {
	case schedule == "":
		return fmt.Errorf("is required: a cron schedule such as \"0 3 * * *\" or @daily")
	case strings.Contains(schedule, "TZ"):
		// As the API server says it of a new CronJob.
		return fmt.Errorf("%s: cannot use TZ or CRON_TZ in schedule, use timeZone instead", condition.Quote(schedule))
	}
	if _, err := parseCron(schedule); err != nil {
		return fmt.Errorf("%s is not a cron schedule: %v", condition.Quote(schedule), err)
	}
	sched, err := scheduleIn(schedule, timeZone)
	if err != nil {
		return fmt.Errorf("%s: %v", condition.Quote(schedule), err)
	}
	// Every satisfiable standard schedule fires within 5 years of any
	// time, and 2000 is a leap year; robfig/cron answers zero for one that
	// never does ("0 0 31 2 *").
	if sched.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return fmt.Errorf("%s never fires", condition.Quote(schedule))
	}
	return nil
}

// checkTimeZone accepts what the API server accepts in a CronJob's
// timeZone: "" or a name of the IANA database.
func checkTimeZone(tz string) error {
	if tz == "" {
		return nil
	}
	for _, part := range strings.Split(tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !timeZonePattern.MatchString(part) {
			return fmt.Errorf("is not a time zone name such as Europe/Paris")
		}
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return fmt.Errorf("is not a known time zone")
	}
	return nil
}

// parseCron parses a schedule as kube-controller-manager and the API server
// do (k8s.io/kubernetes pkg/util/parsers): cron.ParseStandard, five fields
// or a descriptor (@daily, @every 1h), a panic turned into an error.
func parseCron(schedule string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	return cron.ParseStandard(schedule)
}

// scheduleIn is a CronJob's schedule in its time zone, as the controller
// reads it: "TZ=<timeZone> <schedule>". Without a timeZone the controller
// uses its own local time, UTC where kube-controller-manager runs as
// usual; the hook assumes UTC rather than read its own machine's.
func scheduleIn(schedule, timeZone string) (cron.Schedule, error) {
	if strings.Contains(schedule, "TZ") {
		return parseCron(schedule)
	}
	return parseCron("TZ=" + cmp.Or(timeZone, "UTC") + " " + schedule)
}

// claimTemplate is the StatefulSet's volumeClaimTemplate of that name.
func claimTemplate(templates []corev1.PersistentVolumeClaim, name string) *corev1.PersistentVolumeClaim {
	for i := range templates {
		if templates[i].Name == name {
			return &templates[i]
		}
	}
	return nil
}

// snapshotsClaimOf names the snapshot volume of a StatefulSet that has one.
func snapshotsClaimOf(n instance.Names, sts *appsv1.StatefulSet) string {
	if sts == nil || claimTemplate(sts.Spec.VolumeClaimTemplates, instance.SnapshotsVolume) == nil {
		return ""
	}
	return n.SnapshotsClaim()
}

// makeSnapshotsCronJob runs `monocle-hook snapshot` in the hook's own image
// on the schedule: one run at a time, each registering the repository if
// needed, taking one snapshot, waiting for it and deleting those beyond
// keep. Its Jobs are named by the controller N-snapshots-<minutes since the
// epoch of their scheduled time> (snapshotJobName).
func makeSnapshotsCronJob(n instance.Names, s Settings, image string) *batchv1.CronJob {
	snap := s.snapshots
	c := corev1.Container{
		Name:    "snapshot",
		Image:   image,
		Command: []string{"/monocle-hook"},
		// $(VAR) is expanded by the kubelet: the URL, with the snapshot
		// user's credentials, stays in its Secret.
		Env: []corev1.EnvVar{elasticusers.URLEnv(n.Elastic, elasticusers.Snapshots)},
		Args: []string{"snapshot",
			"--elastic", "$(MONOCLE_ELASTIC_URL)",
			"--repository", snapshot.DefaultRepository,
			"--location", snapshot.DefaultLocation,
			"--keep", strconv.Itoa(int(snap.keep)),
			"--timeout", snapshotTimeout.String(),
		},
		// It only waits on HTTP answers.
		Resources: instance.Resources("10m", "32Mi", "64Mi"),
	}
	labels := n.Labels(child.ComponentSnapshots)
	cj := &batchv1.CronJob{
		TypeMeta:   wire.TypeCronJob,
		ObjectMeta: metav1.ObjectMeta{Name: n.Snapshots, Labels: labels},
		Spec: batchv1.CronJobSpec{
			Schedule: snap.schedule,
			// A run missed by more than an hour (the controller was down)
			// is skipped: the next one comes on schedule.
			StartingDeadlineSeconds: ptr.To(int64(3600)),
			// Never two snapshot runs at once: Elasticsearch refuses a
			// second snapshot of the same indices anyway.
			ConcurrencyPolicy: batchv1.ForbidConcurrent,
			Suspend:           ptr.To(snap.suspend),
			// Successful runs: the last 3, the API server's default.
			// Failed runs are kept for their logs.
			FailedJobsHistoryLimit: ptr.To(int32(3)),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: batchv1.JobSpec{
					BackoffLimit: ptr.To(int32(snapshotAttempts - 1)),
					// Past every attempt's own --timeout: the command's
					// error is what ends a run, this only a hung one.
					ActiveDeadlineSeconds: ptr.To(int64((snapshotAttempts*snapshotTimeout + 5*time.Minute) / time.Second)),
					Template:              child.Template(labels, child.Scheduled(instance.HookJobPod(c), s.scheduling)),
				},
			},
		},
	}
	if snap.timeZone != "" {
		cj.Spec.TimeZone = ptr.To(snap.timeZone)
	}
	return cj
}

// snapshotJobName is the name the CronJob controller gives the Job it
// starts for the time scheduled (k8s.io/kubernetes pkg/controller/cronjob,
// getJobName): its name and the minutes since the epoch.
func snapshotJobName(cronJob string, scheduled time.Time) string {
	return cronJob + "-" + strconv.FormatInt(scheduled.Unix()/60, 10)
}
