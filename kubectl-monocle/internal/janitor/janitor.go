// Package janitor is kubectl monocle janitor: one of Monocle's janitor
// commands, as a Job of the hook's answer, the crawler stopped around
// those that need it.
package janitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/janitorjob"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/restorerecord"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

// stopsCrawler are the janitor commands that run with the crawler stopped,
// and why (Monocle 1.11.2). The crawler writes, for each entity it
// crawls, its documents (src/Macroscope/Worker.hs:204-207, addDoc) and
// then its commit date, the time its loop began (Worker.hs:212-213,
// 283-291, commitTimestamp), which re-creates the crawler's metadata. So
// documents it adds during a wipe survive it, as do its metadata (Monocle's
// README.md:621-629 stops the crawler around wipe-crawler-data), and a
// commit date set while it crawls that entity is overwritten by its own.
// update-idents needs no stop: the crawler writes authors with the
// config's idents already (src/Lentille.hs:151-161).
var stopsCrawler = map[string]string{
	"wipe-crawler-data":       "documents it adds during the wipe would survive it (as Monocle's README does, the crawler is stopped around it)",
	"set-crawler-commit-date": "the date it commits when it ends crawling an entity would overwrite the one set",
}

// New is the janitor command.
func New(o *plugin.Options) *cobra.Command {
	var jo janitorjob.Options
	var timeout, stopTimeout time.Duration
	about := janitorjob.Commands()
	var commands strings.Builder
	for _, name := range slices.Sorted(maps.Keys(about)) {
		fmt.Fprintf(&commands, "  %-24s %s\n", name, about[name])
	}
	cmd := &cobra.Command{
		Use:   "janitor NAME COMMAND [--workspace W] [--crawler C] [--commit-date D]",
		Short: "Run one command of Monocle's janitor for a Monocle, and follow it to its end",
		Long: `Creates a Job that runs monocle janitor COMMAND for the Monocle NAME, with the image, config and
Elasticsearch URL (its writer user) its API runs, follows it until it ends, printing its log as it
runs, and exits as it did. The Job is built from the API's Deployment as the hook answers it for
the Monocle's spec, never the observed one. It is owned by the Monocle (not as its controller:
Metacontroller leaves it alone), so it goes with it, and is removed an hour after it ends. The
same command is the same Job: one already running is followed, not started twice.

wipe-crawler-data and set-crawler-commit-date run with the crawler stopped, as Monocle's docs
stop it (documents the crawler adds during a wipe survive it; the date it commits overwrites
the one set): spec.crawler.enabled is set to false, its value kept in the annotation
` + plugin.JanitorAnnotation + `, the crawler's pods waited for, and the value put back once
the Job ends, whether it succeeded or not. Interrupted, the crawler stays stopped: the same
command resumes (it follows the Job it created, by UID, and puts the crawler back).

Commands:
` + commands.String() + `
Needs get and patch on monocles, get on deployments, configmaps and secrets, create, get and
delete on jobs, and list on pods and get on pods/log (the namespace's edit role).

Exit codes: 0 the janitor succeeded; the janitor's own exit code (1 when none is left to read)
when it failed; 2 a usage error, a refusal, or the cluster could not be read.`,
		Example: `  kubectl monocle janitor -n monocle my-monocle update-idents
  kubectl monocle janitor -n monocle my-monocle wipe-crawler-data --workspace demo --crawler zuul
  kubectl monocle janitor -n monocle my-monocle set-crawler-commit-date --workspace demo --crawler zuul --commit-date 2023-06-01`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return plugin.UsageError{Err: fmt.Errorf("janitor takes a Monocle's name and a command, got %d arguments", len(args))}
			}
			return nil
		},
		ValidArgsFunction: plugin.CompleteMonocles(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			jo.Monocle, jo.Command = args[0], args[1]
			ns, c, err := o.Target()
			if err != nil {
				return err
			}
			j := &janitor{c: c, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), ns: ns, o: jo, hookImage: o.HookImage, timeout: timeout, stopTimeout: stopTimeout}
			return j.run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&jo.Workspace, "workspace", "", "the workspace (update-idents: all when not set)")
	cmd.Flags().StringVar(&jo.Crawler, "crawler", "", "the crawler's name in the workspace")
	cmd.Flags().StringVar(&jo.CommitDate, "commit-date", "", "the new commit date: YYYY-MM-DD (midnight UTC) or YYYY-MM-DDThh:mm:ssZ (a date in Monocle's other form, with spaces, is rewritten as the latter)")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Hour, "how long to wait for the janitor to end (it goes on after)")
	cmd.Flags().DurationVar(&stopTimeout, "stop-timeout", 10*time.Minute, "how long to wait for the crawler's pods to end, for the commands that stop it")
	return cmd
}

// janitor runs one janitor command.
type janitor struct {
	c                    *plugin.Clients
	out, errOut          io.Writer
	ns                   string
	o                    janitorjob.Options
	hookImage            string
	timeout, stopTimeout time.Duration
}

func (j *janitor) say(format string, args ...any) {
	fmt.Fprintf(j.out, format+"\n", args...)
}

func (j *janitor) run(ctx context.Context) error {
	ns, name := j.ns, j.o.Monocle
	m, err := plugin.ReadMonocle(ctx, j.c, ns, name)
	if err != nil {
		return err
	}
	if m.Annotations[plugin.RestoreAnnotation] != "" {
		return fmt.Errorf("a restore of Monocle %s is under way (annotation %s): the janitor would write to the indices it replaces; let it end, or put the Monocle back as it was with %s", name, plugin.RestoreAnnotation, plugin.UndoCommand(ns, name))
	}
	job, note, err := plugin.JanitorJob(ctx, j.c, m, j.o, j.hookImage)
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(j.errOut, "kubectl monocle: note: %s\n", printable.Escape(note))
	}
	why, stops := stopsCrawler[j.o.Command]
	rec, resuming, err := j.record(m, job.Name, stops)
	if err != nil {
		return err
	}
	existing, err := j.existing(ctx, job, rec, resuming, stops)
	if err != nil {
		return err
	}
	if stops {
		if err := j.stopCrawler(ctx, m, rec, resuming, why); err != nil {
			return err
		}
	}
	if existing == nil {
		if rec, err = j.create(ctx, job, rec, stops); err != nil {
			return err
		}
	}
	ended, code, err := plugin.FollowJob(ctx, j.c, j.out, ns, job.Name, j.timeout)
	if err != nil {
		if stops {
			return j.interrupted(plugin.RunsOn(err, ns, job.Name))
		}
		return plugin.RunsOn(err, ns, job.Name)
	}
	if stops {
		if rec.JobUID != "" && ended.UID != types.UID(rec.JobUID) {
			return j.interrupted(fmt.Errorf("the Job %s that ended is not the one this command created (another UID)", job.Name))
		}
		if err := j.patch(ctx, j.backPatch(rec)); err != nil {
			return j.interrupted(err)
		}
		j.say("Crawler put back as it was (spec.crawler.enabled: %s).", enabledString(rec.CrawlerEnabled))
	}
	if _, ok, why := plugin.JobEnd(ended); !ok {
		return plugin.ErrExit{Code: max(code, 1), Err: fmt.Errorf("the janitor failed: %s (its log: %s)", why, plugin.LogsCommand(ns, job.Name))}
	}
	j.say("monocle janitor %s succeeded; Job %s is removed in %s", j.o.Command, job.Name, plugin.JanitorTTL)
	return nil
}

// existing is the Job of this command already there, checked as ours
// and against the record; nil when there is none, or when the one there
// ended and is deleted to run the command again.
func (j *janitor) existing(ctx context.Context, job *batchv1.Job, rec restorerecord.Janitor, resuming, stops bool) (*batchv1.Job, error) {
	existing, err := plugin.Get[batchv1.Job](ctx, j.c, plugin.JobGVR, j.ns, job.Name)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		if err := plugin.Ours(existing, job); err != nil {
			return nil, err
		}
		switch ended, _, _ := plugin.JobEnd(existing); {
		case resuming && rec.JobUID != "" && existing.UID != types.UID(rec.JobUID):
			return nil, j.refuseRecord(fmt.Sprintf("the Job %s is not the one it names: another UID", job.Name))
		case resuming && rec.JobUID != "":
			j.say("Resuming: Job %s, created before with the crawler stopped, is followed to its end", job.Name)
		case !ended && stops && !resuming:
			return nil, fmt.Errorf("the Job %s already runs this command, with the crawler running: wait for it to end (%s), then run the command again", job.Name, plugin.LogsCommand(j.ns, job.Name))
		case !ended:
			j.say("Job %s already runs this command: following it", job.Name)
		default:
			j.say("Job %s ran this command before: deleting it to run it again", job.Name)
			if err := plugin.DeleteJob(ctx, j.c, j.ns, job.Name); err != nil {
				return nil, err
			}
			existing = nil
		}
	}
	return existing, nil
}

// stopCrawler stops the crawler, unless resuming, and waits until no
// crawler pod runs.
func (j *janitor) stopCrawler(ctx context.Context, m *v1alpha1.Monocle, rec restorerecord.Janitor, resuming bool, why string) error {
	if !resuming {
		j.say("Stopping the crawler first (spec.crawler.enabled: false; its value kept in the annotation %s and put back at the end): %s.", plugin.JanitorAnnotation, why)
		if err := j.patch(ctx, j.stopPatch(m, rec)); err != nil {
			return err
		}
	} else {
		j.say("Resuming monocle janitor %s, begun before with the crawler stopped (annotation %s).", j.o.Command, plugin.JanitorAnnotation)
	}
	j.say("Waiting until no crawler pod runs.")
	if err := plugin.WaitStopped(ctx, j.c, j.ns, j.o.Monocle, []string{"crawler"}, j.stopTimeout); err != nil {
		return j.interrupted(err)
	}
	return nil
}

// create creates the Job and, for a command that stops the crawler,
// records its UID, so that a run resumed follows this Job and no other.
func (j *janitor) create(ctx context.Context, job *batchv1.Job, rec restorerecord.Janitor, stops bool) (restorerecord.Janitor, error) {
	if err := plugin.CreateJob(ctx, j.c, job.DeepCopy()); err != nil {
		return rec, j.interrupted(err)
	}
	if stops {
		created, err := plugin.Get[batchv1.Job](ctx, j.c, plugin.JobGVR, j.ns, job.Name)
		if err == nil && created == nil {
			err = fmt.Errorf("the Job %s is gone", job.Name)
		}
		if err != nil {
			return rec, j.interrupted(err)
		}
		next := rec
		next.JobUID = string(created.UID)
		if err := j.advance(ctx, rec, next); err != nil {
			return rec, j.interrupted(err)
		}
		rec = next
	}
	j.say("Job %s created: monocle janitor %s; waiting for it to end", job.Name, j.o.Command)
	return rec, nil
}

// record is, for a command that stops the crawler, the janitor's record on
// m: when one is there, it must be this command's (its Job's name), written
// on this Monocle (its UID), in the form the plugin writes (resuming);
// else the one to write, with spec.crawler.enabled as it is. The other
// commands neither read nor write one.
func (j *janitor) record(m *v1alpha1.Monocle, jobName string, stops bool) (restorerecord.Janitor, bool, error) {
	raw, ok := m.Annotations[plugin.JanitorAnnotation]
	if !stops {
		return restorerecord.Janitor{}, false, nil
	}
	if !ok {
		return restorerecord.Janitor{MonocleUID: string(m.UID), Job: jobName, CrawlerEnabled: m.Spec.Crawler.Enabled}, false, nil
	}
	rec, err := restorerecord.DecodeJanitor(raw)
	switch {
	case err != nil:
		return rec, false, j.refuseRecord(err.Error())
	case rec.MonocleUID != string(m.UID):
		return rec, false, j.refuseRecord("it was written on another Monocle (another UID)")
	case rec.Job != jobName:
		return rec, false, fmt.Errorf("another janitor command (Job %s) stopped Monocle %s's crawler and has not put it back: run that command again to finish it first", rec.Job, m.Name)
	}
	return rec, true, nil
}

// refuseRecord refuses a janitor record that cannot be checked as the
// plugin's: nothing of it is applied.
func (j *janitor) refuseRecord(why string) error {
	return fmt.Errorf("the annotation %s of Monocle %s is not a record the plugin's janitor command wrote for it (%s): nothing of it is applied. Remove it, %s, and set spec.crawler.enabled as you had it, then run the command again",
		plugin.JanitorAnnotation, j.o.Monocle, printable.Escape(why), command.Line("kubectl", "-n", j.ns, "annotate", "monocle", j.o.Monocle, plugin.JanitorAnnotation+"-"))
}

// stopPatch stops the crawler and records rec, on the Monocle as read (its
// resourceVersion): a change since is a conflict, not a value lost.
func (j *janitor) stopPatch(m *v1alpha1.Monocle, rec restorerecord.Janitor) []byte {
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": m.ResourceVersion, "annotations": map[string]any{plugin.JanitorAnnotation: rec.Encode()}},
		"spec":     map[string]any{"crawler": map[string]any{"enabled": false}},
	})
	return b
}

// backPatch puts spec.crawler.enabled back as rec recorded it, and removes
// the record.
func (j *janitor) backPatch(rec restorerecord.Janitor) []byte {
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{plugin.JanitorAnnotation: nil}},
		"spec":     map[string]any{"crawler": map[string]any{"enabled": rec.CrawlerEnabled}},
	})
	return b
}

// advance replaces the record from with to, on the Monocle as read: the
// record there must still be from.
func (j *janitor) advance(ctx context.Context, from, to restorerecord.Janitor) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		m, err := plugin.ReadMonocle(ctx, j.c, j.ns, j.o.Monocle)
		if err != nil {
			return err
		}
		if m.Annotations[plugin.JanitorAnnotation] != from.Encode() {
			return fmt.Errorf("the janitor's record on Monocle %s changed or is gone", j.o.Monocle)
		}
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": m.ResourceVersion,
			"annotations": map[string]any{plugin.JanitorAnnotation: to.Encode()}}})
		return j.patch(ctx, b)
	})
}

func (j *janitor) patch(ctx context.Context, patch []byte) error {
	_, err := j.c.Dyn.Resource(plugin.MonocleGVR).Namespace(j.ns).Patch(ctx, j.o.Monocle, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-monocle"})
	if err != nil {
		return fmt.Errorf("patching Monocle %s/%s: %w", j.ns, j.o.Monocle, err)
	}
	return nil
}

// interrupted says that the crawler stays stopped, and how to go on.
func (j *janitor) interrupted(err error) error {
	if errors.Is(err, context.Canceled) {
		err = plugin.ErrInterrupted
	}
	return fmt.Errorf("monocle janitor %s stopped: %w. The crawler stays stopped (annotation %s): run this same command again to resume it; it follows the Job and puts the crawler back", j.o.Command, err, plugin.JanitorAnnotation)
}

// enabledString is a recorded spec.crawler.enabled as JSON.
func enabledString(v *bool) string {
	if v == nil {
		return "null, not set"
	}
	return fmt.Sprint(*v)
}
