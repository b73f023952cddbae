package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/restorejob"
	"github.com/change-metrics/monocle-hook/internal/restorerecord"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// restoreAnnotation, on a Monocle, is the restore under way: its snapshot
// and the spec's values it changed, as they were, so that an interrupted
// restore is resumed or undone with what the user had.
const restoreAnnotation = restorerecord.Annotation

// restoreRecord is restoreAnnotation's value.
type restoreRecord struct {
	Snapshot   string `json:"snapshot"`
	Repository string `json:"repository"`
	Location   string `json:"location"`
	// Before are spec.api.replicas, spec.crawler.enabled and
	// spec.elasticsearch.snapshots.suspend as they were (null: not set).
	Before *restorerecord.Before `json:"before"`
}

// parseRecord reads restoreAnnotation's value: refused unless it is one
// this command writes.
func parseRecord(raw, monocle string) (restoreRecord, error) {
	var rec restoreRecord
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&rec)
	switch {
	case err == nil && rec.Before == nil:
		err = errors.New("no before")
	case err == nil && rec.Before.Spec.API.Replicas != nil && *rec.Before.Spec.API.Replicas < 0:
		err = errors.New("negative replicas")
	case err == nil:
		err = cmp.Or(snapshot.CheckName("snapshot", rec.Snapshot), snapshot.CheckName("repository", rec.Repository), snapshot.CheckLocation(rec.Location))
	}
	if err != nil {
		return rec, fmt.Errorf("the annotation %s of Monocle %s is not one this command wrote (%s): remove it (kubectl annotate) once you have checked the spec", restoreAnnotation, monocle, printable.Escape(err.Error()))
	}
	return rec, nil
}

// stoppedComponents are the pods that write to the indices (the API, the
// crawler, the update-idents and janitor Jobs) or read them (a snapshot
// run): none may run during a restore.
var stoppedComponents = []string{"api", "crawler", "update-idents", "janitor", "snapshots"}

type restoreOptions struct {
	hookImage                      string
	snapshot, repository, location string
	timeout, stopTimeout           time.Duration
	dryRun, undo                   bool
}

func newRestore(o *options) *cobra.Command {
	var ro restoreOptions
	cmd := &cobra.Command{
		Use:   "restore NAME --snapshot SNAPSHOT [--dry-run] | restore NAME --undo",
		Short: "Restore a snapshot into a Monocle: stop its writers, restore, put everything back",
		Long: `Restores SNAPSHOT into the Monocle NAME's Elasticsearch, in place, step by step, each waited for
and said:
  1. the API and the crawler stopped and the snapshots suspended (a patch of the Monocle that
     keeps the values it changes in the annotation ` + restoreAnnotation + `),
  2. waited for until none of their pods (nor an update-idents or janitor Job's) runs,
  3. the restore Job (monocle-hook restore, as the snapshot user) created and followed to its end,
  4. the Monocle put back as it was: the replicas, crawler and snapshot settings you had.
The Monocle indices the snapshot holds are closed and replaced; others (a workspace added since)
are left as they are. The crawlers resume from where the snapshot left them. A failed restore
puts the Monocle back too, and keeps its Job for its log.

Interrupted, it says where it stopped: the same command resumes it, --undo puts the Monocle back
as it was (the annotation's values).

Needs get and patch on monocles, get on deployments, cronjobs, configmaps and secrets, list
on pods, create, get and delete on jobs, get on pods/log (the namespace's edit role).

Exit codes: 0 restored (or --dry-run, --undo done); 1 the restore failed; 2 a usage error, a
refusal, or the cluster could not be read.`,
		Example: `  kubectl monocle restore -n monocle my-monocle --snapshot monocle-20261130-030000 --dry-run
  kubectl monocle restore -n monocle my-monocle --snapshot monocle-20261130-030000
  kubectl monocle restore -n monocle my-monocle --undo`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) != 1:
				return usageError{fmt.Errorf("restore takes one Monocle's name, got %d arguments", len(args))}
			case ro.undo && (ro.snapshot != "" || ro.dryRun):
				return usageError{errors.New("restore --undo takes no --snapshot nor --dry-run")}
			case !ro.undo && ro.snapshot == "":
				return usageError{errors.New("restore needs --snapshot (docs/snapshots.md#restore: how to list them), or --undo")}
			case !ro.undo:
				if _, err := snapshot.CheckWritten(ro.snapshot); err != nil {
					return usageError{fmt.Errorf("--snapshot: %w", err)}
				}
			}
			return nil
		},
		ValidArgsFunction: completeMonocles(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, c, err := o.target()
			if err != nil {
				return err
			}
			ro.hookImage = o.hookImage
			r := &restorer{c: c, out: cmd.OutOrStdout(), ns: ns, name: args[0], o: ro}
			if ro.undo {
				return r.undo(cmd.Context())
			}
			return r.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&ro.snapshot, "snapshot", "", "the snapshot to restore")
	f.StringVar(&ro.repository, "repository", snapshot.DefaultRepository, "the snapshot repository")
	f.StringVar(&ro.location, "location", snapshot.DefaultLocation, "the repository's directory on the Elasticsearch node")
	f.DurationVar(&ro.timeout, "timeout", snapshot.DefaultTimeout, "the most the restore Job may take")
	f.DurationVar(&ro.stopTimeout, "stop-timeout", 10*time.Minute, "how long to wait for the API's, the crawler's and the Jobs' pods to end")
	f.BoolVar(&ro.dryRun, "dry-run", false, "print the steps, the patches and the Job; change nothing")
	f.BoolVar(&ro.undo, "undo", false, "put back a Monocle whose restore was interrupted as it was before (its annotation's values)")
	return cmd
}

// restorer runs one restore.
type restorer struct {
	c        *clients
	out      io.Writer
	ns, name string
	o        restoreOptions
	step     string // the step under way, for an interruption's message
}

func (r *restorer) say(format string, args ...any) {
	fmt.Fprintf(r.out, format+"\n", args...)
}

func (r *restorer) run(ctx context.Context) error {
	u, err := r.c.dyn.Resource(monocleGVR).Namespace(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading Monocle %s/%s: %w", r.ns, r.name, err)
	}
	rec, resuming, err := r.record(u)
	if err != nil {
		return err
	}
	n := instance.For(r.name)
	cj, err := get[batchv1.CronJob](ctx, r.c, cronJobGVR, r.ns, n.Snapshots)
	if err != nil {
		return err
	}
	if cj == nil || len(cj.Spec.JobTemplate.Spec.Template.Spec.Containers) != 1 {
		return fmt.Errorf("no snapshot CronJob %s for Monocle %s: the snapshots' volume is mounted and the hook's image known only while spec.elasticsearch.snapshots is set", n.Snapshots, r.name)
	}
	// The image is the one the hook's own answer runs its snapshots with,
	// never the observed CronJob's, which a namespace editor can write.
	m := new(v1alpha1.Monocle)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, m); err != nil {
		return fmt.Errorf("reading Monocle %s/%s: %w", r.ns, r.name, err)
	}
	want, err := answeredCronJob(ctx, r.c, m, r.o.hookImage)
	if err != nil {
		return err
	}
	job, err := restorejob.Build(restorejob.Options{Monocle: r.name, Namespace: r.ns, Snapshot: r.o.snapshot, Repository: r.o.repository,
		Location: r.o.location, Image: want.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image, Timeout: r.o.timeout})
	if err != nil {
		return usageError{err}
	}
	stop := r.stopPatch(u, rec)
	back := r.backPatch(rec)
	if r.o.dryRun {
		return r.printPlan(stop, back, job)
	}
	existing, err := get[batchv1.Job](ctx, r.c, jobGVR, r.ns, job.Name)
	if err != nil {
		return err
	}
	if resuming {
		r.say("Resuming the restore of snapshot %s into Monocle %s, begun before (annotation %s).", r.o.snapshot, r.name, restoreAnnotation)
	} else if existing != nil {
		if err := ours(existing, job); err != nil {
			return err
		}
		if ended, _, _ := jobEnd(existing); !ended {
			return fmt.Errorf("the restore Job %s already runs, outside any restore this command began: wait for it, or delete it", job.Name)
		}
		r.say("Deleting Job %s, of an earlier restore of the same snapshot.", job.Name)
		if err := deleteJob(ctx, r.c, r.ns, job.Name); err != nil {
			return err
		}
		existing = nil
	}

	r.step = "stopping the writers"
	r.say("1/4 Stopping the API and the crawler, suspending the snapshots (their values kept in the annotation %s).", restoreAnnotation)
	// On the Monocle as read: Metacontroller writes its status at each
	// sync, which is a conflict to read again after, not a value lost.
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if u, err = r.c.dyn.Resource(monocleGVR).Namespace(r.ns).Get(ctx, r.name, metav1.GetOptions{}); err != nil {
			return err
		}
		if rec, _, err = r.record(u); err != nil {
			return err
		}
		return r.patch(ctx, r.stopPatch(u, rec))
	})
	if err != nil {
		return r.interrupted(err)
	}
	back = r.backPatch(rec)
	r.step = "waiting for the writers' pods to end"
	r.say("2/4 Waiting until no pod of %s runs.", strings.Join(stoppedComponents, ", "))
	if err := r.waitStopped(ctx); err != nil {
		return r.interrupted(err)
	}
	r.step = "restoring"
	if existing == nil {
		if err := createJob(ctx, r.c, job); err != nil {
			return r.interrupted(err)
		}
		r.say("3/4 Restoring: Job %s created; following it to its end.", job.Name)
	} else {
		r.say("3/4 Restoring: Job %s was created before; following it to its end.", job.Name)
	}
	ended, _, err := followJob(ctx, r.c, r.out, r.ns, job.Name, r.o.timeout+3*time.Minute)
	if err != nil {
		return r.interrupted(err)
	}
	_, ok, why := jobEnd(ended)
	r.step = "putting the Monocle back"
	r.say("4/4 Putting Monocle %s back as it was: %s", r.name, rec.Before)
	if err := r.patch(ctx, back); err != nil {
		return r.interrupted(err)
	}
	if !ok {
		return errExit{code: 1, err: fmt.Errorf("the restore failed: %s. The Monocle is put back; the indices the restore closed stay closed until a restore succeeds. Job %s is kept for its log (%s); this command, run again, deletes it and restores again", why, job.Name, logsCommand(r.ns, job.Name))}
	}
	if err := deleteJob(ctx, r.c, r.ns, job.Name); err != nil {
		return err
	}
	r.say("Snapshot %s restored into Monocle %s; the API and the crawler start again, and the crawlers resume from where the snapshot left them.", r.o.snapshot, r.name)
	return nil
}

// record is the restore under way, read from the annotation (resuming:
// its repository and location are the restore's), else the one to begin,
// with the spec's values as they are.
func (r *restorer) record(u *unstructured.Unstructured) (restoreRecord, bool, error) {
	if raw, ok := u.GetAnnotations()[restoreAnnotation]; ok {
		rec, err := parseRecord(raw, r.name)
		if err != nil {
			return rec, false, err
		}
		if rec.Snapshot != r.o.snapshot || (r.o.repository != snapshot.DefaultRepository && r.o.repository != rec.Repository) ||
			(r.o.location != snapshot.DefaultLocation && r.o.location != rec.Location) {
			return rec, false, fmt.Errorf("a restore of snapshot %s (repository %s) is under way for Monocle %s: resume it with %s, or put the Monocle back as it was with %s",
				rec.Snapshot, rec.Repository, r.name, resumeCommand(r.ns, r.name, rec.Snapshot), undoCommand(r.ns, r.name))
		}
		r.o.repository, r.o.location = rec.Repository, rec.Location
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
	return restoreRecord{Snapshot: r.o.snapshot, Repository: r.o.repository, Location: r.o.location, Before: before}, false, err
}

// nested is the field's value, nil when it is not set.
func nested(u *unstructured.Unstructured, fields ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	return v
}

// stopPatch stops the writers and suspends the snapshots, and records rec;
// on the Monocle as read (its resourceVersion): a change since is a
// conflict, not a value lost.
func (r *restorer) stopPatch(u *unstructured.Unstructured, rec restoreRecord) []byte {
	annotation, _ := json.Marshal(rec)
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": u.GetResourceVersion(), "annotations": map[string]any{restoreAnnotation: string(annotation)}},
		"spec": map[string]any{"api": map[string]any{"replicas": 0}, "crawler": map[string]any{"enabled": false},
			"elasticsearch": map[string]any{"snapshots": map[string]any{"suspend": true}}},
	})
	return b
}

// backPatch puts back what rec recorded, and removes the annotation.
func (r *restorer) backPatch(rec restoreRecord) []byte {
	b, _ := json.Marshal(struct {
		Metadata map[string]any `json:"metadata"`
		*restorerecord.Before
	}{map[string]any{"annotations": map[string]any{restoreAnnotation: nil}}, rec.Before})
	return b
}

func (r *restorer) patch(ctx context.Context, patch []byte) error {
	_, err := r.c.dyn.Resource(monocleGVR).Namespace(r.ns).Patch(ctx, r.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-monocle"})
	if err != nil {
		return fmt.Errorf("patching Monocle %s/%s: %w", r.ns, r.name, err)
	}
	return nil
}

// waitStopped waits until the hook has answered the stopped spec and no
// pod of stoppedComponents runs.
func (r *restorer) waitStopped(ctx context.Context) error {
	n := instance.For(r.name)
	left := ""
	err := wait.PollUntilContextTimeout(ctx, pollInterval, r.o.stopTimeout, true, func(ctx context.Context) (bool, error) {
		m, err := readMonocle(ctx, r.c, r.ns, r.name)
		if err != nil {
			return false, err
		}
		if m.Status.ObservedGeneration < m.Generation {
			left = "the hook's answer to the patched spec"
			return false, nil
		}
		for _, name := range []string{n.API, n.Crawler} {
			d, err := get[appsv1.Deployment](ctx, r.c, deploymentGVR, r.ns, name)
			if err != nil {
				return false, err
			}
			if d != nil && (d.Spec.Replicas == nil || *d.Spec.Replicas != 0 || d.Status.Replicas != 0) {
				left = "Deployment " + name + " scaled to 0"
				return false, nil
			}
		}
		cj, err := get[batchv1.CronJob](ctx, r.c, cronJobGVR, r.ns, n.Snapshots)
		if err != nil {
			return false, err
		}
		if cj != nil && (cj.Spec.Suspend == nil || !*cj.Spec.Suspend || len(cj.Status.Active) > 0) {
			left = "CronJob " + n.Snapshots + " suspended, with no run active"
			return false, nil
		}
		list, err := r.c.dyn.Resource(podGVR).Namespace(r.ns).List(ctx, listOptions(
			"app.kubernetes.io/instance="+r.name+",app.kubernetes.io/component in ("+strings.Join(stoppedComponents, ",")+")"))
		if err != nil {
			return false, err
		}
		for _, item := range list.Items {
			var p corev1.Pod
			if runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &p) == nil &&
				p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				left = "pod " + p.Name + " to end"
				return false, nil
			}
		}
		return true, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		err = fmt.Errorf("still waiting for %s after %s", left, r.o.stopTimeout)
	}
	return err
}

// interrupted says where the restore stopped, and how to resume or undo it.
func (r *restorer) interrupted(err error) error {
	if errors.Is(err, context.Canceled) {
		err = errInterrupted
	}
	return fmt.Errorf("the restore stopped while %s: %w. Resume it with %s, or put the Monocle back as it was with %s (a restore Job already created runs on)",
		r.step, err, resumeCommand(r.ns, r.name, r.o.snapshot), undoCommand(r.ns, r.name))
}

// undo puts back the Monocle of an interrupted restore.
func (r *restorer) undo(ctx context.Context) error {
	u, err := r.c.dyn.Resource(monocleGVR).Namespace(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading Monocle %s/%s: %w", r.ns, r.name, err)
	}
	raw, ok := u.GetAnnotations()[restoreAnnotation]
	if !ok {
		return fmt.Errorf("no restore of Monocle %s is under way (no annotation %s): nothing to undo", r.name, restoreAnnotation)
	}
	rec, err := parseRecord(raw, r.name)
	if err != nil {
		return err
	}
	job, err := get[batchv1.Job](ctx, r.c, jobGVR, r.ns, restorejob.JobName(r.name, rec.Repository, rec.Snapshot))
	if err != nil {
		return err
	}
	if job != nil {
		if ended, _, _ := jobEnd(job); !ended {
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
func (r *restorer) printPlan(stop, back []byte, job *batchv1.Job) error {
	doc, err := yaml.Marshal(job)
	if err != nil {
		return err
	}
	plan := fmt.Sprintf(`Restore of snapshot %s into Monocle %s (namespace %s): the steps (--dry-run: nothing is changed).
1. Patch Monocle %s (merge patch):
   %s
2. Wait until the hook has answered it and no pod of %s runs (at most %s).
3. Create the Job below and follow it to its end (at most %s).
4. Patch Monocle %s back as it was (merge patch):
   %s
   then, if the restore succeeded, delete the Job (a failed one is kept for its log).
---
%s`, r.o.snapshot, r.name, r.ns, r.name, stop, strings.Join(stoppedComponents, ", "), r.o.stopTimeout, r.o.timeout+3*time.Minute, r.name, back, string(doc))
	// Each line escaped: the Job shows the Monocle's values.
	_, err = fmt.Fprint(r.out, printable.Lines(plan))
	return err
}

// resumeCommand and undoCommand are the commands an interrupted restore
// prints.
func resumeCommand(ns, name, snapshot string) string {
	return command.Line("kubectl", "monocle", "restore", name, "-n", ns, "--snapshot", snapshot)
}

func undoCommand(ns, name string) string {
	return command.Line("kubectl", "monocle", "restore", name, "-n", ns, "--undo")
}
