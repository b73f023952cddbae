// Package restore is kubectl monocle restore: a snapshot restored, the
// writers stopped around it, resumed or undone from its record.
package restore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/janitorjob"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/restorejob"
	"github.com/change-metrics/monocle-hook/internal/restorerecord"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

// stoppedComponents are the pods that write to the indices (the API, the
// crawler, the update-idents and janitor Jobs) or read them (a snapshot
// run): none may run during a restore.
var stoppedComponents = []string{"api", "crawler", "update-idents", "janitor", "snapshots"}

type restoreOptions struct {
	hookImage            string
	snapshot             string
	timeout, stopTimeout time.Duration
	dryRun, undo         bool
	// before, for --undo, are the values the user gives to put back
	// (--api-replicas, --crawler-enabled, --snapshots-suspend), in place
	// of the record's; nil: the record's.
	before *restorerecord.Before
}

// New is the restore command.
func New(o *plugin.Options) *cobra.Command {
	var ro restoreOptions
	cmd := &cobra.Command{
		Use:   "restore NAME --snapshot SNAPSHOT [--dry-run] | restore NAME --undo",
		Short: "Restore a snapshot into a Monocle: stop its writers, restore, put everything back",
		Long: `Restores SNAPSHOT into the Monocle NAME's Elasticsearch, in place, step by step, each waited for
and said:
  1. the API and the crawler stopped and the snapshots suspended (a patch of the Monocle that
     keeps the values it changes in the annotation ` + plugin.RestoreAnnotation + `),
  2. waited for until none of their pods (nor an update-idents or janitor Job's) runs,
  3. the restore Job (monocle-hook restore, as the snapshot user, from the Monocle's own
     snapshot repository) created and followed to its end,
  4. update-idents (the janitor's Job, as kubectl monocle janitor NAME update-idents makes it)
     run for the config the API runs and followed to its end: the snapshot holds the authors
     as they were crawled, before any idents edit since,
  5. the Monocle put back as it was: the replicas, crawler and snapshot settings you had.
The Monocle indices the snapshot holds are closed and replaced; others (a workspace added since)
are left as they are. The crawlers resume from where the snapshot left them. A failed restore
puts the Monocle back too, and keeps its Job for its log.

Interrupted, it says where it stopped: the same command resumes it, --undo puts the Monocle back
as it was (the annotation's values). It resumes only from a record it can check: written on this
Monocle (its UID), for the repository the Monocle's snapshots use, its Job the one it created (its
UID). Any other is refused and nothing is applied: put the Monocle back with --undo and the values
you had (--api-replicas, --crawler-enabled, --snapshots-suspend, all three), then restore afresh.

Needs get and patch on monocles, get on deployments, cronjobs, configmaps and secrets, list on
pods, create, get and delete on jobs, get on pods/log (the namespace's edit role).

Exit codes: 0 restored (or --dry-run, --undo done); 1 the restore failed; 2 a usage error, a
refusal, or the cluster could not be read.`,
		Example: `  kubectl monocle restore -n monocle my-monocle --snapshot monocle-20261130-030000 --dry-run
  kubectl monocle restore -n monocle my-monocle --snapshot monocle-20261130-030000
  kubectl monocle restore -n monocle my-monocle --undo`,
		Args: func(cmd *cobra.Command, args []string) error {
			return checkRestoreArgs(&ro, args)
		},
		ValidArgsFunction: plugin.CompleteMonocles(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, c, err := o.Target()
			if err != nil {
				return err
			}
			ro.hookImage = o.HookImage
			if ro.before, err = explicitBefore(cmd, ro.undo); err != nil {
				return err
			}
			r := &restorer{c: c, out: cmd.OutOrStdout(), ns: ns, name: args[0], o: ro}
			if ro.undo {
				return r.undo(cmd.Context())
			}
			return r.run(cmd.Context())
		},
	}
	restoreFlags(cmd, &ro)
	return cmd
}

// checkRestoreArgs checks restore's one name and its flags' combination.
func checkRestoreArgs(ro *restoreOptions, args []string) error {
	if err := plugin.OneName("restore", args); err != nil {
		return err
	}
	switch {
	case ro.undo && (ro.snapshot != "" || ro.dryRun):
		return plugin.UsageError{Err: errors.New("restore --undo takes no --snapshot nor --dry-run")}
	case !ro.undo && ro.snapshot == "":
		return plugin.UsageError{Err: errors.New("restore needs --snapshot (docs/snapshots.md#restore: how to list them), or --undo")}
	case !ro.undo:
		if _, err := snapshot.CheckWritten(ro.snapshot); err != nil {
			return plugin.UsageError{Err: fmt.Errorf("--snapshot: %w", err)}
		}
	}
	return nil
}

// restoreFlags binds restore's flags to ro.
func restoreFlags(cmd *cobra.Command, ro *restoreOptions) {
	f := cmd.Flags()
	f.StringVar(&ro.snapshot, "snapshot", "", "the snapshot to restore")
	f.DurationVar(&ro.timeout, "timeout", snapshot.DefaultTimeout, "the most the restore Job may take")
	f.DurationVar(&ro.stopTimeout, "stop-timeout", 10*time.Minute, "how long to wait for the API's, the crawler's and the Jobs' pods to end")
	f.BoolVar(&ro.dryRun, "dry-run", false, "print the steps, the patches and the Job; change nothing")
	f.BoolVar(&ro.undo, "undo", false, "put back a Monocle whose restore was interrupted as it was before (its annotation's values, or those given)")
	f.Int32("api-replicas", 1, "with --undo: spec.api.replicas to put back, in place of the record's")
	f.Bool("crawler-enabled", true, "with --undo: spec.crawler.enabled to put back, in place of the record's")
	f.Bool("snapshots-suspend", false, "with --undo: spec.elasticsearch.snapshots.suspend to put back, in place of the record's")
}

// undoFlags are --undo's explicit values, given all three or none.
var undoFlags = []string{"api-replicas", "crawler-enabled", "snapshots-suspend"}

// explicitBefore is what --undo puts back as the user gives it: nil when
// none of undoFlags is given.
func explicitBefore(cmd *cobra.Command, undo bool) (*restorerecord.Before, error) {
	f := cmd.Flags()
	given := slices.DeleteFunc(slices.Clone(undoFlags), func(name string) bool { return !f.Changed(name) })
	switch {
	case len(given) == 0:
		return nil, nil
	case !undo:
		return nil, plugin.UsageError{Err: fmt.Errorf("--%s is for --undo only", given[0])}
	case len(given) != len(undoFlags):
		return nil, plugin.UsageError{Err: fmt.Errorf("--undo with explicit values takes all of --%s", strings.Join(undoFlags, ", --"))}
	}
	b := &restorerecord.Before{}
	replicas, _ := f.GetInt32("api-replicas")
	enabled, _ := f.GetBool("crawler-enabled")
	suspend, _ := f.GetBool("snapshots-suspend")
	if replicas < 0 {
		return nil, plugin.UsageError{Err: fmt.Errorf("--api-replicas %d: at least 0", replicas)}
	}
	b.Spec.API.Replicas, b.Spec.Crawler.Enabled, b.Spec.Elasticsearch.Snapshots.Suspend = &replicas, &enabled, &suspend
	return b, nil
}

// restorer runs one restore.
type restorer struct {
	c        *plugin.Clients
	out      io.Writer
	ns, name string
	o        restoreOptions
	step     string // the step under way, for an interruption's message
	// repository and location are those of the Monocle's own snapshots
	// (ownRepository).
	repository, location string
}

func (r *restorer) say(format string, args ...any) {
	fmt.Fprintf(r.out, format+"\n", args...)
}

func (r *restorer) run(ctx context.Context) error {
	u, m, err := r.read(ctx)
	if err != nil {
		return err
	}
	image, err := r.ownRepository(ctx, m)
	if err != nil {
		return err
	}
	rec, resuming, err := r.record(u)
	if err != nil {
		return err
	}
	job, err := restorejob.Build(restorejob.Options{Monocle: r.name, Namespace: r.ns, Snapshot: r.o.snapshot, Repository: r.repository,
		Location: r.location, Image: image, Timeout: r.o.timeout})
	if err != nil {
		return plugin.UsageError{Err: err}
	}
	idents, note, err := plugin.JanitorJob(ctx, r.c, m, janitorjob.Options{Monocle: r.name, Command: "update-idents"}, r.o.hookImage)
	if err != nil {
		return fmt.Errorf("the update-idents Job a restore ends with: %w", err)
	}
	if note != "" {
		r.say("Note: %s", printable.Escape(note))
	}
	if r.o.dryRun {
		return r.printPlan(r.stopPatch(u, rec), r.backPatch(rec), job, idents)
	}
	existing, err := r.existing(ctx, rec, resuming, job)
	if err != nil {
		return err
	}
	if resuming {
		r.say("Resuming the restore of snapshot %s into Monocle %s, begun before (annotation %s, at step %s).", r.o.snapshot, r.name, plugin.RestoreAnnotation, rec.Step)
	}

	if !resuming || rec.Step == restorerecord.Stopping || rec.Step == restorerecord.Restoring {
		if rec, err = r.restore(ctx, existing, job); err != nil {
			return err
		}
	}
	return r.finish(ctx, rec, idents)
}

// stopWriters stops the API and the crawler and suspends the snapshots,
// then waits until none of their pods runs (steps 1 and 2).
func (r *restorer) stopWriters(ctx context.Context) (restorerecord.Record, error) {
	r.step = "stopping the writers"
	r.say("1/5 Stopping the API and the crawler, suspending the snapshots (their values kept in the annotation %s).", plugin.RestoreAnnotation)
	// On the Monocle as read: Metacontroller writes its status at each
	// sync, which is a conflict to read again after, not a value lost.
	var rec restorerecord.Record
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		u, _, err := r.read(ctx)
		if err != nil {
			return err
		}
		if rec, _, err = r.record(u); err != nil {
			return err
		}
		return r.patch(ctx, r.stopPatch(u, rec))
	})
	if err != nil {
		return rec, r.interrupted(err)
	}
	r.step = "waiting for the writers' pods to end"
	r.say("2/5 Waiting until no pod of %s runs.", strings.Join(stoppedComponents, ", "))
	if err := plugin.WaitStopped(ctx, r.c, r.ns, r.name, stoppedComponents, r.o.stopTimeout); err != nil {
		return rec, r.interrupted(err)
	}
	return rec, nil
}

// restore stops the writers, then runs the restore Job and follows it
// to its end (steps 1 to 3).
func (r *restorer) restore(ctx context.Context, existing, job *batchv1.Job) (restorerecord.Record, error) {
	rec, err := r.stopWriters(ctx)
	if err != nil {
		return rec, err
	}
	r.step = "restoring"
	if existing == nil {
		uid, err := r.create(ctx, job)
		if err != nil {
			return rec, r.interrupted(err)
		}
		if rec, err = r.advance(ctx, rec, restorerecord.Restoring, uid); err != nil {
			return rec, r.interrupted(err)
		}
		r.say("3/5 Restoring: Job %s created; following it to its end.", job.Name)
	} else {
		r.say("3/5 Restoring: Job %s was created before; following it to its end.", job.Name)
	}
	ended, _, err := plugin.FollowJob(ctx, r.c, r.out, r.ns, job.Name, r.o.timeout+3*time.Minute)
	if err != nil {
		return rec, r.interrupted(err)
	}
	if ended.UID != types.UID(rec.JobUID) {
		return rec, r.interrupted(fmt.Errorf("the Job %s that ended is not the restore's (another UID)", job.Name))
	}
	if _, ok, why := plugin.JobEnd(ended); !ok {
		if err := r.putBack(ctx, rec); err != nil {
			return rec, r.interrupted(err)
		}
		return rec, plugin.ErrExit{Code: 1, Err: fmt.Errorf("the restore failed: %s. The Monocle is put back; the indices the restore closed stay closed until a restore succeeds. Job %s is kept for its log (%s); this command, run again, deletes it and restores again", why, job.Name, plugin.LogsCommand(r.ns, job.Name))}
	}
	if rec, err = r.advance(ctx, rec, restorerecord.UpdatingIdents, ""); err != nil {
		return rec, r.interrupted(err)
	}
	if err := plugin.DeleteJob(ctx, r.c, r.ns, job.Name); err != nil {
		return rec, r.interrupted(err)
	}
	return rec, nil
}

// finish updates the idents, if the restore has not yet, and puts the
// Monocle back (steps 4 and 5).
func (r *restorer) finish(ctx context.Context, rec restorerecord.Record, idents *batchv1.Job) error {
	identsFailed := ""
	if rec.Step == restorerecord.UpdatingIdents {
		r.step = "updating the idents"
		ended, err := r.updateIdents(ctx, &rec, idents)
		if err != nil {
			return r.interrupted(err)
		}
		if _, ok, why := plugin.JobEnd(ended); !ok {
			identsFailed = why
		}
	}
	if err := r.putBack(ctx, rec); err != nil {
		return r.interrupted(err)
	}
	if identsFailed != "" {
		return plugin.ErrExit{Code: 1, Err: fmt.Errorf("snapshot %s is restored, but update-idents failed: %s. The Monocle is put back; the restored changes keep the authors they were crawled with until update-idents succeeds: %s (Job %s is kept for its log: %s)",
			r.o.snapshot, identsFailed, command.Line("kubectl", "monocle", "janitor", r.name, "update-idents", "-n", r.ns), idents.Name, plugin.LogsCommand(r.ns, idents.Name))}
	}
	if err := plugin.DeleteJob(ctx, r.c, r.ns, idents.Name); err != nil {
		return err
	}
	r.say("Snapshot %s restored into Monocle %s, its changes re-attributed to the config's idents; the API and the crawler start again, and the crawlers resume from where the snapshot left them.", r.o.snapshot, r.name)
	return nil
}

// read reads the Monocle, as an object and as its type.
func (r *restorer) read(ctx context.Context) (*unstructured.Unstructured, *v1alpha1.Monocle, error) {
	u, err := r.c.Dyn.Resource(plugin.MonocleGVR).Namespace(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading Monocle %s/%s: %w", r.ns, r.name, err)
	}
	m := new(v1alpha1.Monocle)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, m); err != nil {
		return nil, nil, fmt.Errorf("reading Monocle %s/%s: %w", r.ns, r.name, err)
	}
	return u, m, nil
}

// ownRepository sets the repository and location the Monocle's own
// snapshots use, as the hook answers its snapshot CronJob for its spec
// (never the observed CronJob, which a namespace editor can write), and
// gives the image that answer runs them with.
func (r *restorer) ownRepository(ctx context.Context, m *v1alpha1.Monocle) (string, error) {
	if m.Spec.Elasticsearch.Snapshots == nil {
		return "", fmt.Errorf("no snapshots: Monocle %s takes none (spec.elasticsearch.snapshots is not set): a restore reads its snapshot repository, whose volume is mounted only while it is set", r.name)
	}
	cj, err := plugin.AnsweredCronJob(ctx, r.c, m, r.o.hookImage)
	if err != nil {
		return "", err
	}
	c := cj.Spec.JobTemplate.Spec.Template.Spec.Containers
	if len(c) != 1 {
		return "", fmt.Errorf("the hook's CronJob %s runs %d containers, not one", cj.Name, len(c))
	}
	for i := 0; i+1 < len(c[0].Args); i++ {
		switch c[0].Args[i] {
		case "--repository":
			r.repository = c[0].Args[i+1]
		case "--location":
			r.location = c[0].Args[i+1]
		}
	}
	if r.repository == "" || r.location == "" {
		return "", fmt.Errorf("the hook's CronJob %s names no --repository and --location", cj.Name)
	}
	return c[0].Image, nil
}

// record is the restore under way, read from the annotation (resuming),
// else the one to begin, with the spec's values as they are. A record is
// taken only in the form this command writes it (restorerecord.Decode)
// and when it is this Monocle's (its UID) and for the repository its own
// snapshots use: anyone who may edit the Monocle may write it, and what
// it puts back is applied with the admin's rights.
func (r *restorer) record(u *unstructured.Unstructured) (restorerecord.Record, bool, error) {
	if _, ok := u.GetAnnotations()[plugin.JanitorAnnotation]; ok {
		return restorerecord.Record{}, false, fmt.Errorf("a janitor command stopped Monocle %s's crawler (annotation %s) and has not put it back: run that command again to finish it, then restore", r.name, plugin.JanitorAnnotation)
	}
	if raw, ok := u.GetAnnotations()[plugin.RestoreAnnotation]; ok {
		rec, err := r.checkRecord(u, raw)
		switch {
		case err != nil:
			return rec, false, err
		case rec.Snapshot != r.o.snapshot:
			return rec, false, fmt.Errorf("a restore of snapshot %s is under way for Monocle %s: resume it with %s, or put the Monocle back as it was with %s",
				rec.Snapshot, r.name, resumeCommand(r.ns, r.name, rec.Snapshot), plugin.UndoCommand(r.ns, r.name))
		}
		return rec, true, nil
	}
	before := &restorerecord.Before{}
	var err error
	switch v := nested(u, "spec", "api", "replicas").(type) {
	case nil:
	case int64:
		before.Spec.API.Replicas = ptr.To(int32(v))
	default:
		err = fmt.Errorf("spec.api.replicas is %T, not an integer", v)
	}
	if v, ok := nested(u, "spec", "crawler", "enabled").(bool); ok {
		before.Spec.Crawler.Enabled = &v
	}
	if v, ok := nested(u, "spec", "elasticsearch", "snapshots", "suspend").(bool); ok {
		before.Spec.Elasticsearch.Snapshots.Suspend = &v
	}
	return restorerecord.Record{MonocleUID: string(u.GetUID()), Snapshot: r.o.snapshot, Repository: r.repository, Location: r.location,
		Step: restorerecord.Stopping, Before: before}, false, err
}

// checkRecord is the record raw, on the Monocle u, when it is in the form
// this command writes and bound to what it can check: written on this
// Monocle (its UID), for the repository its own snapshots use
// (ownRepository). The restore Job it names is checked by UID where it is
// read (existing, updateIdents).
func (r *restorer) checkRecord(u *unstructured.Unstructured, raw string) (restorerecord.Record, error) {
	rec, err := restorerecord.Decode(raw)
	switch {
	case err != nil:
		return rec, r.refuseRecord(err.Error())
	case rec.MonocleUID != string(u.GetUID()):
		return rec, r.refuseRecord("it was written on another Monocle (another UID)")
	case rec.Repository != r.repository || rec.Location != r.location:
		return rec, r.refuseRecord(fmt.Sprintf("it names repository %s at %s, not the one Monocle %s's snapshots use (%s at %s)",
			printable.Quote(rec.Repository), printable.Quote(rec.Location), r.name, r.repository, r.location))
	}
	return rec, nil
}

// refuseRecord refuses a record that cannot be checked as this command's,
// saying what to do: nothing of it is applied.
func (r *restorer) refuseRecord(why string) error {
	afresh := "run the restore afresh"
	if r.o.snapshot != "" {
		afresh = "restore afresh with " + resumeCommand(r.ns, r.name, r.o.snapshot)
	}
	return fmt.Errorf("the annotation %s of Monocle %s is not a record this command wrote for it (%s): nothing of it is applied. Put the Monocle back with the values it had before the restore: %s (those are the defaults: give yours), then %s",
		plugin.RestoreAnnotation, r.name, printable.Escape(why), explicitUndoCommand(r.ns, r.name), afresh)
}

// existing is the restore Job of the name job has, when it is the one the
// record names (resuming at Restoring: by its UID); nil when there is
// none or when the restore is past it. An ended Job of an earlier restore
// is deleted; any other Job of the name is refused: it is not ours.
func (r *restorer) existing(ctx context.Context, rec restorerecord.Record, resuming bool, job *batchv1.Job) (*batchv1.Job, error) {
	if resuming && rec.Step != restorerecord.Stopping && rec.Step != restorerecord.Restoring {
		return nil, nil
	}
	existing, err := plugin.Get[batchv1.Job](ctx, r.c, plugin.JobGVR, r.ns, job.Name)
	if err != nil || existing == nil {
		return nil, err
	}
	if resuming && rec.Step == restorerecord.Restoring {
		if existing.UID != types.UID(rec.JobUID) {
			return nil, r.refuseRecord(fmt.Sprintf("the restore Job %s is not the one it names: another UID", job.Name))
		}
		return existing, nil
	}
	if err := plugin.Ours(existing, job); err != nil {
		return nil, err
	}
	if ended, _, _ := plugin.JobEnd(existing); !ended {
		return nil, fmt.Errorf("the restore Job %s already runs, outside any restore this command recorded: wait for it, or delete it", job.Name)
	}
	r.say("Deleting Job %s, of an earlier restore of the same snapshot.", job.Name)
	return nil, plugin.DeleteJob(ctx, r.c, r.ns, job.Name)
}

// create creates job and gives its UID.
func (r *restorer) create(ctx context.Context, job *batchv1.Job) (string, error) {
	if err := plugin.CreateJob(ctx, r.c, job.DeepCopy()); err != nil {
		return "", err
	}
	created, err := plugin.Get[batchv1.Job](ctx, r.c, plugin.JobGVR, r.ns, job.Name)
	if err == nil && created == nil {
		err = fmt.Errorf("the Job %s is gone", job.Name)
	}
	if err != nil {
		return "", err
	}
	return string(created.UID), nil
}

// advance records the restore at step, with the UID of the step's Job,
// on the Monocle as read: the record there must still be rec (an --undo
// since ends the restore).
func (r *restorer) advance(ctx context.Context, rec restorerecord.Record, step restorerecord.Step, jobUID string) (restorerecord.Record, error) {
	next := rec
	next.Step, next.JobUID = step, jobUID
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		u, _, err := r.read(ctx)
		if err != nil {
			return err
		}
		if u.GetAnnotations()[plugin.RestoreAnnotation] != rec.Encode() {
			return fmt.Errorf("the restore's record on Monocle %s changed or is gone (an --undo, or an edit)", r.name)
		}
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": u.GetResourceVersion(),
			"annotations": map[string]any{plugin.RestoreAnnotation: next.Encode()}}})
		return r.patch(ctx, b)
	})
	return next, err
}

// updateIdents runs update-idents (idents, the janitor's Job) for the
// config the API runs, and waits for it: resumed, the Job the record
// names (by UID) is followed, one of another UID refused, and one ended
// of an earlier run replaced.
func (r *restorer) updateIdents(ctx context.Context, rec *restorerecord.Record, idents *batchv1.Job) (*batchv1.Job, error) {
	existing, err := plugin.Get[batchv1.Job](ctx, r.c, plugin.JobGVR, r.ns, idents.Name)
	if err != nil {
		return nil, err
	}
	switch {
	case existing != nil && rec.JobUID != "" && existing.UID == types.UID(rec.JobUID):
		r.say("4/5 Updating the idents: Job %s was created before; following it to its end.", idents.Name)
	case existing != nil && rec.JobUID != "":
		return nil, r.refuseRecord(fmt.Sprintf("the update-idents Job %s is not the one it names: another UID", idents.Name))
	case existing != nil:
		if err := plugin.Ours(existing, idents); err != nil {
			return nil, err
		}
		if ended, _, _ := plugin.JobEnd(existing); !ended {
			return nil, fmt.Errorf("the update-idents Job %s runs, outside this restore: wait for it to end, then resume", idents.Name)
		}
		if err := plugin.DeleteJob(ctx, r.c, r.ns, idents.Name); err != nil {
			return nil, err
		}
		existing = nil
	}
	if existing == nil {
		uid, err := r.create(ctx, idents)
		if err != nil {
			return nil, err
		}
		if *rec, err = r.advance(ctx, *rec, restorerecord.UpdatingIdents, uid); err != nil {
			return nil, err
		}
		r.say("4/5 Updating the idents: Job %s created (monocle janitor update-idents, for the config the API runs); following it to its end.", idents.Name)
	}
	ended, _, err := plugin.FollowJob(ctx, r.c, r.out, r.ns, idents.Name, time.Hour)
	if err != nil {
		return nil, err
	}
	if ended.UID != types.UID(rec.JobUID) {
		return nil, fmt.Errorf("the Job %s that ended is not the restore's (another UID)", idents.Name)
	}
	return ended, nil
}

// putBack records the step PuttingBack, then puts the Monocle back as rec
// recorded, which removes the record.
func (r *restorer) putBack(ctx context.Context, rec restorerecord.Record) error {
	r.step = "putting the Monocle back"
	rec, err := r.advance(ctx, rec, restorerecord.PuttingBack, rec.JobUID)
	if err != nil {
		return err
	}
	r.say("5/5 Putting Monocle %s back as it was: %s", r.name, rec.Before)
	return r.patch(ctx, r.backPatch(rec))
}

// nested is the field's value, nil when it is not set.
func nested(u *unstructured.Unstructured, fields ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	return v
}

// stopPatch stops the writers and suspends the snapshots, and records rec;
// on the Monocle as read (its resourceVersion): a change since is a
// conflict, not a value lost.
func (r *restorer) stopPatch(u *unstructured.Unstructured, rec restorerecord.Record) []byte {
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": u.GetResourceVersion(), "annotations": map[string]any{plugin.RestoreAnnotation: rec.Encode()}},
		"spec": map[string]any{"api": map[string]any{"replicas": 0}, "crawler": map[string]any{"enabled": false},
			"elasticsearch": map[string]any{"snapshots": map[string]any{"suspend": true}}},
	})
	return b
}

// backPatch puts back what rec recorded, and removes the annotation.
func (r *restorer) backPatch(rec restorerecord.Record) []byte {
	return beforePatch(rec.Before)
}

// beforePatch puts back before, and removes the annotation.
func beforePatch(before *restorerecord.Before) []byte {
	b, _ := json.Marshal(struct {
		Metadata map[string]any `json:"metadata"`
		*restorerecord.Before
	}{map[string]any{"annotations": map[string]any{plugin.RestoreAnnotation: nil}}, before})
	return b
}

func (r *restorer) patch(ctx context.Context, patch []byte) error {
	_, err := r.c.Dyn.Resource(plugin.MonocleGVR).Namespace(r.ns).Patch(ctx, r.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-monocle"})
	if err != nil {
		return fmt.Errorf("patching Monocle %s/%s: %w", r.ns, r.name, err)
	}
	return nil
}

// interrupted says where the restore stopped, and how to resume or undo it.
func (r *restorer) interrupted(err error) error {
	if errors.Is(err, context.Canceled) {
		err = plugin.ErrInterrupted
	}
	return fmt.Errorf("the restore stopped while %s: %w. Resume it with %s, or put the Monocle back as it was with %s (a restore Job already created runs on)",
		r.step, err, resumeCommand(r.ns, r.name, r.o.snapshot), plugin.UndoCommand(r.ns, r.name))
}

// undo puts back the Monocle of an interrupted restore: as its record
// says, once checked (checkRecord), or as the user gives the values.
func (r *restorer) undo(ctx context.Context) error {
	u, m, err := r.read(ctx)
	if err != nil {
		return err
	}
	raw, ok := u.GetAnnotations()[plugin.RestoreAnnotation]
	if !ok {
		return fmt.Errorf("no restore of Monocle %s is under way (no annotation %s): nothing to undo", r.name, plugin.RestoreAnnotation)
	}
	if r.o.before != nil {
		if err := r.patch(ctx, beforePatch(r.o.before)); err != nil {
			return err
		}
		r.say("Monocle %s put back with the values given, its restore record removed (not read): %s", r.name, r.o.before)
		return nil
	}
	if _, err := r.ownRepository(ctx, m); err != nil {
		return fmt.Errorf("%w; the record cannot be checked without it: put the Monocle back with the values it had before the restore: %s (those are the defaults: give yours)", err, explicitUndoCommand(r.ns, r.name))
	}
	rec, err := r.checkRecord(u, raw)
	if err != nil {
		return err
	}
	job, err := plugin.Get[batchv1.Job](ctx, r.c, plugin.JobGVR, r.ns, restorejob.JobName(r.name, rec.Repository, rec.Snapshot))
	if err != nil {
		return err
	}
	if job != nil {
		if ended, _, _ := plugin.JobEnd(job); !ended {
			return fmt.Errorf("the restore Job %s runs: the indices are being replaced; follow it to its end with %s", job.Name, resumeCommand(r.ns, r.name, rec.Snapshot))
		}
	}
	if err := r.patch(ctx, r.backPatch(rec)); err != nil {
		return err
	}
	r.say("Monocle %s put back as it was before the restore of snapshot %s: %s", r.name, rec.Snapshot, rec.Before)
	return nil
}

// printPlan is --dry-run's output.
func (r *restorer) printPlan(stop, back []byte, job, idents *batchv1.Job) error {
	var docs []string
	for _, j := range []*batchv1.Job{job, idents} {
		doc, err := yaml.Marshal(j)
		if err != nil {
			return err
		}
		docs = append(docs, string(doc))
	}
	plan := fmt.Sprintf(`Restore of snapshot %s into Monocle %s (namespace %s): the steps (--dry-run: nothing is changed).
1. Patch Monocle %s (merge patch):
   %s
2. Wait until the hook has answered it and no pod of %s runs (at most %s).
3. Create the first Job below, the restore, and follow it to its end (at most %s).
4. Create the second Job below, update-idents for the config the API runs, and follow it to its end.
5. Patch Monocle %s back as it was (merge patch):
   %s
   then, if they succeeded, delete the Jobs (a failed one is kept for its log).
---
%s---
%s`, r.o.snapshot, r.name, r.ns, r.name, stop, strings.Join(stoppedComponents, ", "), r.o.stopTimeout, r.o.timeout+3*time.Minute, r.name, back, docs[0], docs[1])
	// Each line escaped: the Jobs show the Monocle's values.
	_, err := fmt.Fprint(r.out, printable.Lines(plan))
	return err
}

// resumeCommand, plugin.UndoCommand and explicitUndoCommand are the commands an
// interrupted or refused restore prints.
func resumeCommand(ns, name, snapshot string) string {
	return command.Line("kubectl", "monocle", "restore", name, "-n", ns, "--snapshot", snapshot)
}

// explicitUndoCommand gives the defaults: the reader gives the values the
// Monocle had.
func explicitUndoCommand(ns, name string) string {
	return command.Line("kubectl", "monocle", "restore", name, "-n", ns, "--undo", "--api-replicas", "1", "--crawler-enabled=true", "--snapshots-suspend=false")
}
