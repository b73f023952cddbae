// Package backup is kubectl monocle backup: a snapshot now, as a Job of
// the snapshot CronJob the hook answers.
package backup

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

// New is the backup command.
func New(o *plugin.Options) *cobra.Command {
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
			return plugin.OneName("backup", args)
		},
		ValidArgsFunction: plugin.CompleteMonocles(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, c, err := o.Target()
			if err != nil {
				return err
			}
			return backup(cmd.Context(), c, cmd.OutOrStdout(), ns, args[0], o.HookImage, timeout, time.Now)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", time.Hour, "how long to wait for a scheduled run, then for the snapshot (it goes on after)")
	return cmd
}

func backup(ctx context.Context, c *plugin.Clients, out io.Writer, ns, name, hookImage string, timeout time.Duration, now func() time.Time) error {
	m, err := plugin.ReadMonocle(ctx, c, ns, name)
	if err != nil {
		return err
	}
	if err := backupRefused(m); err != nil {
		return err
	}
	cronJobName := instance.For(name).Snapshots
	cj, err := plugin.Get[batchv1.CronJob](ctx, c, plugin.CronJobGVR, ns, cronJobName)
	if err != nil {
		return err
	}
	if cj == nil {
		return fmt.Errorf("no CronJob %s yet: the hook has not made it for Monocle %s (kubectl monocle status %s says why)", cronJobName, name, name)
	}
	if cj, err = waitScheduledRun(ctx, c, out, ns, cronJobName, cj, timeout); err != nil {
		return err
	}
	want, err := plugin.AnsweredCronJob(ctx, c, m, hookImage)
	if err != nil {
		return err
	}
	if fields := plugin.Drift(&cj.Spec.JobTemplate.Spec.Template.Spec, &want.Spec.JobTemplate.Spec.Template.Spec, plugin.CronJobTemplate); len(fields) > 0 {
		return fmt.Errorf("the CronJob %s is not what the hook answers for Monocle %s: %s differ (a namespace editor changed them, or the hook runs another image than --hook-image %s); no Job is created. %s, then run the backup again",
			cronJobName, name, strings.Join(fields, ", "), hookImage, plugin.PutBack(ns, "CronJob", cronJobName))
	}
	job, snapshotName, err := backupJob(cj, want, now().UTC())
	if err != nil {
		return err
	}
	// Read again: a restore may have begun while a scheduled run was
	// waited for.
	if m, err = plugin.ReadMonocle(ctx, c, ns, name); err != nil {
		return err
	}
	if err := backupRefused(m); err != nil {
		return err
	}
	if err := plugin.CreateJob(ctx, c, job); err != nil {
		return err
	}
	fmt.Fprintf(out, "Job %s created: taking snapshot %s; waiting for it to end\n", job.Name, snapshotName)
	ended, _, err := plugin.FollowJob(ctx, c, out, ns, job.Name, timeout)
	if err != nil {
		return plugin.RunsOn(err, ns, job.Name)
	}
	if _, ok, why := plugin.JobEnd(ended); !ok {
		return plugin.ErrExit{Code: 1, Err: fmt.Errorf("the snapshot run failed: %s (its log: %s)", why, plugin.LogsCommand(ns, job.Name))}
	}
	fmt.Fprintf(out, "snapshot %s taken\n", snapshotName)
	return nil
}

// waitScheduledRun waits until no scheduled snapshot run of the CronJob
// cj is active, and gives the CronJob as last read.
func waitScheduledRun(ctx context.Context, c *plugin.Clients, out io.Writer, ns, cronJobName string, cj *batchv1.CronJob, timeout time.Duration) (*batchv1.CronJob, error) {
	if len(cj.Status.Active) == 0 {
		return cj, nil
	}
	fmt.Fprintf(out, "A scheduled snapshot run is active (Job %s): waiting for it to end\n", printable.Escape(cj.Status.Active[0].Name))
	err := wait.PollUntilContextTimeout(ctx, plugin.PollInterval, timeout, false, func(ctx context.Context) (bool, error) {
		var err error
		cj, err = plugin.Get[batchv1.CronJob](ctx, c, plugin.CronJobGVR, ns, cronJobName)
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
	case m.Annotations[plugin.RestoreAnnotation] != "":
		return fmt.Errorf("a restore of Monocle %s is under way (annotation %s): let it end, or put the Monocle back as it was with %s", m.Name, plugin.RestoreAnnotation, plugin.UndoCommand(m.Namespace, m.Name))
	case snaps == nil:
		return fmt.Errorf("no snapshots: Monocle %s takes none, spec.elasticsearch.snapshots is not set (docs/snapshots.md)", m.Name)
	case snaps.Suspend:
		return fmt.Errorf("snapshots suspended: Monocle %s has spec.elasticsearch.snapshots.suspend set", m.Name)
	}
	return nil
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
