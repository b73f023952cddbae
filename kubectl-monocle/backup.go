package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
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
		Long: `Takes a snapshot of the Monocle NAME's indices now: a Job from its CronJob N-snapshots, as
kubectl create job --from=cronjob/N-snapshots makes one, naming the snapshot (the same form as
the scheduled ones: retention keeps it among them). It waits for a scheduled run that is active
to end first (a Job made this way is not held back by the CronJob's Forbid concurrency), then for
its own, and prints the snapshot's name. Refused when the Monocle takes no snapshots, or while
they are suspended (a restore suspends them).

Needs get on monocles and cronjobs, create and get on jobs, list on pods and get on pods/log
(the namespace's edit role).

Exit codes: 0 the snapshot was taken; 1 its run failed; 2 a usage error, a refusal, or the
cluster could not be read.`,
		Example: `  kubectl monocle backup -n monocle my-monocle`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("backup takes one Monocle's name, got %d arguments", len(args))}
			}
			return nil
		},
		ValidArgsFunction: completeMonocles(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, c, err := o.target()
			if err != nil {
				return err
			}
			return backup(cmd.Context(), c, cmd.OutOrStdout(), ns, args[0], timeout, time.Now)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", time.Hour, "how long to wait for a scheduled run, then for the snapshot (it goes on after)")
	return cmd
}

func backup(ctx context.Context, c *clients, out io.Writer, ns, name string, timeout time.Duration, now func() time.Time) error {
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
	if len(cj.Status.Active) > 0 {
		fmt.Fprintf(out, "A scheduled snapshot run is active (Job %s): waiting for it to end\n", printable.Escape(cj.Status.Active[0].Name))
		err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, false, func(ctx context.Context) (bool, error) {
			cj, err = get[batchv1.CronJob](ctx, c, cronJobGVR, ns, cronJobName)
			if err == nil && cj == nil {
				err = fmt.Errorf("the CronJob %s is gone", cronJobName)
			}
			return err == nil && len(cj.Status.Active) == 0, err
		})
		if err != nil {
			return fmt.Errorf("waiting for the scheduled run: %w", err)
		}
	}
	job, snapshotName, err := jobFromCronJob(cj, now().UTC())
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

// jobFromCronJob is the Job kubectl create job --from=cronjob/... makes
// (k8s.io/kubectl pkg/cmd/create/create_job.go, createJobFromCronJob): the
// template's labels, annotations and spec, the instantiate annotation,
// and the CronJob as its controller; here named N-snapshots-backup-<stamp>
// and its snapshot named for the same instant, at.
func jobFromCronJob(cj *batchv1.CronJob, at time.Time) (*batchv1.Job, string, error) {
	containers := cj.Spec.JobTemplate.Spec.Template.Spec.Containers
	if len(containers) != 1 || len(containers[0].Args) == 0 || containers[0].Args[0] != "snapshot" {
		return nil, "", fmt.Errorf("the CronJob %s runs no monocle-hook snapshot: not one the hook made", cj.Name)
	}
	prefix := snapshot.DefaultPrefix
	if i := slices.Index(containers[0].Args, "--prefix"); i >= 0 && i+1 < len(containers[0].Args) {
		prefix = containers[0].Args[i+1]
	}
	snapshotName := snapshot.Name(prefix, at)
	annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual", instance.Group + "/snapshot": snapshotName}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        backupJobName(cj.Name, at),
			Namespace:   cj.Namespace,
			Labels:      cj.Spec.JobTemplate.Labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID,
				Controller: ptr.To(true)}},
		},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
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
