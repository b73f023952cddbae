package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

func newBackup(o *options) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "backup NAME",
		Short: "Take a snapshot of a Monocle now, from its snapshot CronJob, and wait for it",
		Long: `Takes a snapshot of the Monocle NAME's indices now: a Job as kubectl create job
--from=cronjob/N-snapshots makes one, but from the CronJob the hook answers for the Monocle's
spec (never the observed one: it is refused, naming its fields, when its pod template is not the
hook's), naming the snapshot (the same form as the scheduled ones: retention keeps it among them). It waits for a scheduled run that is active
to end first (a Job made this way is not held back by the CronJob's Forbid concurrency), then for
its own, and prints the snapshot's name. Refused when the Monocle takes no snapshots, or while
they are suspended (a restore suspends them).

Needs get on monocles, cronjobs, configmaps and secrets, create and get on jobs, list on pods
and get on pods/log (the namespace's edit role).

Exit codes: 0 the snapshot was taken; 1 its run failed; 2 a usage error, a refusal, or the
cluster could not be read.`,
		Example: `  kubectl monocle backup -n monocle my-monocle`,
		Args: func(cmd *cobra.Command, args []string) error {
			return oneName("backup", args)
		},
		ValidArgsFunction: completeMonocles(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, c, err := o.target()
			if err != nil {
				return err
			}
			return backup(cmd.Context(), c, cmd.OutOrStdout(), ns, args[0], o.hookImage, timeout, time.Now)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", time.Hour, "how long to wait for a scheduled run, then for the snapshot (it goes on after)")
	return cmd
}

func backup(ctx context.Context, c *clients, out io.Writer, ns, name, hookImage string, timeout time.Duration, now func() time.Time) error {
	m, err := readMonocle(ctx, c, ns, name)
	if err != nil {
		return err
	}
	if err := backupRefused(m); err != nil {
		return err
	}
	cronJobName := instance.For(name).Snapshots
	cj, err := get[batchv1.CronJob](ctx, c, cronJobGVR, ns, cronJobName)
	if err != nil {
		return err
	}
	if cj == nil {
		return fmt.Errorf("no CronJob %s yet: the hook has not made it for Monocle %s (kubectl monocle status %s says why)", cronJobName, name, name)
	}
	if cj, err = waitScheduledRun(ctx, c, out, ns, cronJobName, cj, timeout); err != nil {
		return err
	}
	want, err := answeredCronJob(ctx, c, m, hookImage)
	if err != nil {
		return err
	}
	if fields := drift(&cj.Spec.JobTemplate.Spec.Template.Spec, &want.Spec.JobTemplate.Spec.Template.Spec, cronJobTemplate); len(fields) > 0 {
		return fmt.Errorf("the CronJob %s is not what the hook answers for Monocle %s: %s differ (a namespace editor changed them, or the hook runs another image than --hook-image %s); no Job is created. %s, then run the backup again",
			cronJobName, name, strings.Join(fields, ", "), hookImage, putBack(ns, "CronJob", cronJobName))
	}
	job, snapshotName, err := backupJob(cj, want, now().UTC())
	if err != nil {
		return err
	}
	// Read again: a restore may have begun while a scheduled run was
	// waited for.
	if m, err = readMonocle(ctx, c, ns, name); err != nil {
		return err
	}
	if err := backupRefused(m); err != nil {
		return err
	}
	if err := createJob(ctx, c, job); err != nil {
		return err
	}
	fmt.Fprintf(out, "Job %s created: taking snapshot %s; waiting for it to end\n", job.Name, snapshotName)
	ended, _, err := followJob(ctx, c, out, ns, job.Name, timeout)
	if err != nil {
		return runsOn(err, ns, job.Name)
	}
	if _, ok, why := jobEnd(ended); !ok {
		return errExit{code: 1, err: fmt.Errorf("the snapshot run failed: %s (its log: %s)", why, logsCommand(ns, job.Name))}
	}
	fmt.Fprintf(out, "snapshot %s taken\n", snapshotName)
	return nil
}

// waitScheduledRun waits until no scheduled snapshot run of the CronJob
// cj is active, and gives the CronJob as last read.
func waitScheduledRun(ctx context.Context, c *clients, out io.Writer, ns, cronJobName string, cj *batchv1.CronJob, timeout time.Duration) (*batchv1.CronJob, error) {
	if len(cj.Status.Active) == 0 {
		return cj, nil
	}
	fmt.Fprintf(out, "A scheduled snapshot run is active (Job %s): waiting for it to end\n", printable.Escape(cj.Status.Active[0].Name))
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, false, func(ctx context.Context) (bool, error) {
		var err error
		cj, err = get[batchv1.CronJob](ctx, c, cronJobGVR, ns, cronJobName)
		if err == nil && cj == nil {
			err = fmt.Errorf("the CronJob %s is gone", cronJobName)
		}
		return err == nil && len(cj.Status.Active) == 0, err
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the scheduled run: %w", err)
	}
	return cj, nil
}

// backupRefused says why the Monocle takes no backup now, if it does not.
func backupRefused(m *v1alpha1.Monocle) error {
	snaps := m.Spec.Elasticsearch.Snapshots
	switch {
	case m.Annotations[restoreAnnotation] != "":
		return fmt.Errorf("a restore of Monocle %s is under way (annotation %s): let it end, or put the Monocle back as it was with %s", m.Name, restoreAnnotation, undoCommand(m.Namespace, m.Name))
	case snaps == nil:
		return fmt.Errorf("no snapshots: Monocle %s takes none, spec.elasticsearch.snapshots is not set (docs/snapshots.md)", m.Name)
	case snaps.Suspend:
		return fmt.Errorf("snapshots suspended: Monocle %s has spec.elasticsearch.snapshots.suspend set", m.Name)
	}
	return nil
}

// runsOn is err, a wait for a Job that ended early (Ctrl-C, a timeout),
// saying that the Job runs on and how to read its log.
func runsOn(err error, ns, job string) error {
	if errors.Is(err, context.Canceled) {
		err = errInterrupted
	}
	return fmt.Errorf("%w: Job %s runs on; its log: %s", err, job, logsCommand(ns, job))
}

// ours refuses to replace an existing Job of the same name that is not
// want's: another Monocle's, or anyone's else.
func ours(existing, want *batchv1.Job) error {
	for _, k := range []string{"app.kubernetes.io/instance", "app.kubernetes.io/component"} {
		if existing.Labels[k] != want.Labels[k] {
			return fmt.Errorf("a Job %s exists that this command did not make (its label %s is %s): delete or rename it first", existing.Name, k, printable.Quote(existing.Labels[k]))
		}
	}
	return nil
}

// answeredCronJob is the CronJob N-snapshots as the hook answers it for
// the Monocle m now (answered), never the observed one, whose every field
// a namespace editor can write.
func answeredCronJob(ctx context.Context, c *clients, m *v1alpha1.Monocle, hookImage string) (*batchv1.CronJob, error) {
	return answered[*batchv1.CronJob](ctx, c, m, hookImage, instance.For(m.Name).Snapshots)
}

// The paths of the pod spec in the children that run pods.
const (
	cronJobTemplate = "spec.jobTemplate.spec.template.spec."
	podTemplate     = "spec.template.spec."
)

// podSpecOf is the pod spec of a child that runs pods, and its path; nil
// for a child that runs none.
func podSpecOf(child any) (*corev1.PodSpec, string) {
	switch o := child.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template.Spec, podTemplate
	case *appsv1.StatefulSet:
		return &o.Spec.Template.Spec, podTemplate
	case *batchv1.Job:
		return &o.Spec.Template.Spec, podTemplate
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template.Spec, cronJobTemplate
	}
	return nil, ""
}

// putBack says how to put back a child the hook makes: delete it, and the
// hook makes it again, as it answers it, at its next sync.
func putBack(ns, kind, name string) string {
	return fmt.Sprintf("Put it back as the hook makes it: %s (the hook makes it again at its next sync)",
		command.Line("kubectl", "-n", ns, "delete", strings.ToLower(kind), name))
}

// drift names the fields of an observed child's pod spec (at its path
// at) that are not what the hook answers (want): those that reach what its
// pods run, as a namespace editor may have set them. Fields the API server
// defaults are compared as defaulted. backup refuses a CronJob that
// drifts; kubectl monocle check shows each child that does.
func drift(o, w *corev1.PodSpec, at string) []string {
	var fields []string
	differs := func(field string, d bool) {
		if d {
			fields = append(fields, at+field)
		}
	}
	differs("initContainers", len(o.InitContainers) != len(w.InitContainers))
	differs("containers", len(o.Containers) != len(w.Containers))
	if len(o.Containers) == len(w.Containers) {
		for i := range w.Containers {
			oc, wc := o.Containers[i], w.Containers[i]
			at := "containers[" + strconv.Itoa(i) + "]."
			differs(at+"image", oc.Image != wc.Image)
			differs(at+"command", !slices.Equal(oc.Command, wc.Command))
			differs(at+"args", !slices.Equal(oc.Args, wc.Args))
			differs(at+"env", !equality.Semantic.DeepEqual(oc.Env, wc.Env))
			differs(at+"volumeMounts", !equality.Semantic.DeepEqual(oc.VolumeMounts, wc.VolumeMounts))
			differs(at+"securityContext", !equality.Semantic.DeepEqual(oc.SecurityContext, wc.SecurityContext))
		}
	}
	names := func(vs []corev1.Volume) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Name)
		}
		slices.Sort(out)
		return out
	}
	differs("volumes", !slices.Equal(names(o.Volumes), names(w.Volumes)))
	differs("hostPID", o.HostPID != w.HostPID)
	differs("hostNetwork", o.HostNetwork != w.HostNetwork)
	differs("hostIPC", o.HostIPC != w.HostIPC)
	sa := func(s string) string { return cmp.Or(s, "default") }
	differs("serviceAccountName", sa(o.ServiceAccountName) != sa(w.ServiceAccountName))
	return fields
}

// backupJob is the Job that takes a snapshot now, at: the hook's answered
// CronJob's template (want), as kubectl create job --from=cronjob/... makes
// one (k8s.io/kubectl pkg/cmd/create/create_job.go,
// createJobFromCronJob), owned by the observed CronJob (only its name,
// namespace and UID are read), named N-snapshots-b<stamp>, its snapshot
// named for the same instant.
func backupJob(observed, want *batchv1.CronJob, at time.Time) (*batchv1.Job, string, error) {
	containers := want.Spec.JobTemplate.Spec.Template.Spec.Containers
	if len(containers) != 1 || len(containers[0].Args) == 0 || containers[0].Args[0] != "snapshot" {
		return nil, "", fmt.Errorf("the hook's CronJob %s runs no monocle-hook snapshot", want.Name)
	}
	// Named as the hook's runs are (its --prefix, else the default), and
	// only so: retention keeps it among them.
	prefix := snapshot.DefaultPrefix
	if i := slices.Index(containers[0].Args, "--prefix"); i >= 0 && i+1 < len(containers[0].Args) {
		prefix = containers[0].Args[i+1]
	}
	snapshotName := snapshot.Name(prefix, at)
	if _, err := snapshot.CheckWritten(snapshotName); err != nil {
		return nil, "", fmt.Errorf("the hook's CronJob %s: %w; no Job is created", want.Name, err)
	}
	annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual", instance.Group + "/snapshot": snapshotName}
	maps.Copy(annotations, want.Spec.JobTemplate.Annotations)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        backupJobName(observed.Name, at),
			Namespace:   observed.Namespace,
			Labels:      maps.Clone(want.Spec.JobTemplate.Labels),
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: observed.Name, UID: observed.UID,
				Controller: ptr.To(true)}},
		},
		Spec: *want.Spec.JobTemplate.Spec.DeepCopy(),
	}
	c := &job.Spec.Template.Spec.Containers[0]
	c.Args = append(slices.Clone(c.Args), "--name", snapshotName)
	return job, snapshotName, nil
}

// backupJobName is N-snapshots-b<seconds since the epoch>: at most 60
// characters for the longest Monocle name (38), under the 63 of the
// job-name label; the CronJob's own runs are N-snapshots-<minutes>.
func backupJobName(cronJob string, at time.Time) string {
	return cronJob + "-b" + strconv.FormatInt(at.Unix(), 10)
}

// readMonocle reads the Monocle name of namespace ns.
func readMonocle(ctx context.Context, c *clients, ns, name string) (*v1alpha1.Monocle, error) {
	m, err := get[v1alpha1.Monocle](ctx, c, monocleGVR, ns, name)
	if err == nil && m == nil {
		err = fmt.Errorf("no Monocle %s in namespace %s", name, ns)
	}
	return m, err
}

// logsCommand is the command that prints a Job's log.
func logsCommand(ns, job string) string {
	return command.Line("kubectl", "-n", ns, "logs", "job/"+job)
}
