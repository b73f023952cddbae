package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/janitorjob"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// janitorAnnotation, on a Monocle, is the record of a janitor command
// that stopped the crawler: what it puts back when it ends.
const janitorAnnotation = instance.Group + "/janitor"

// janitorTTL is how long a janitor Job and its pod stay once ended: for
// its log, read again with kubectl logs.
const janitorTTL = time.Hour

func newJanitor(o *options) *cobra.Command {
	var jo janitorjob.Options
	var timeout time.Duration
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
runs, and exits as it did. The Job is owned by the Monocle (not as its controller: Metacontroller
leaves it alone), so it goes with it, and is removed an hour after it ends. The same command is
the same Job: one already running is followed, not started twice.

Commands:
` + commands.String() + `
Needs get on monocles, deployments and configmaps, create, get and delete on jobs, and list on
pods and get on pods/log (the namespace's edit role).

Exit codes: 0 the janitor succeeded; the janitor's own exit code (1 when none is left to read)
when it failed; 2 a usage error, a refusal, or the cluster could not be read.`,
		Example: `  kubectl monocle janitor -n monocle my-monocle update-idents
  kubectl monocle janitor -n monocle my-monocle wipe-crawler-data --workspace demo --crawler zuul
  kubectl monocle janitor -n monocle my-monocle set-crawler-commit-date --workspace demo --crawler zuul --commit-date 2023-06-01`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError{fmt.Errorf("janitor takes a Monocle's name and a command, got %d arguments", len(args))}
			}
			return nil
		},
		ValidArgsFunction: completeMonocles(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			jo.Monocle, jo.Command = args[0], args[1]
			ns, c, err := o.target()
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			m, err := readMonocle(ctx, c, ns, jo.Monocle)
			if err != nil {
				return err
			}
			if m.Annotations[restoreAnnotation] != "" {
				return fmt.Errorf("a restore of Monocle %s is under way (annotation %s): the janitor would write to the indices it replaces; let it end, or put the Monocle back as it was with %s", jo.Monocle, restoreAnnotation, undoCommand(ns, jo.Monocle))
			}
			job, note, err := janitorJob(ctx, c, m, jo, o.hookImage)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "kubectl monocle: note: %s\n", printable.Escape(note))
			}
			existing, err := get[batchv1.Job](ctx, c, jobGVR, ns, job.Name)
			if err != nil {
				return err
			}
			if existing != nil {
				if err := ours(existing, job); err != nil {
					return err
				}
				if ended, _, _ := jobEnd(existing); !ended {
					fmt.Fprintf(out, "Job %s already runs this command: following it\n", job.Name)
				} else {
					fmt.Fprintf(out, "Job %s ran this command before: deleting it to run it again\n", job.Name)
					if err := deleteJob(ctx, c, ns, job.Name); err != nil {
						return err
					}
					existing = nil
				}
			}
			if existing == nil {
				if err := createJob(ctx, c, job); err != nil {
					return err
				}
				fmt.Fprintf(out, "Job %s created: monocle janitor %s; waiting for it to end\n", job.Name, jo.Command)
			}
			ended, code, err := followJob(ctx, c, out, ns, job.Name, timeout)
			if err != nil {
				return runsOn(err, ns, job.Name)
			}
			if _, ok, why := jobEnd(ended); !ok {
				return errExit{code: max(code, 1), err: fmt.Errorf("the janitor failed: %s (its log: %s)", why, logsCommand(ns, job.Name))}
			}
			fmt.Fprintf(out, "monocle janitor %s succeeded; Job %s is removed in %s\n", jo.Command, job.Name, janitorTTL)
			return nil
		},
	}
	cmd.Flags().StringVar(&jo.Workspace, "workspace", "", "the workspace (update-idents: all when not set)")
	cmd.Flags().StringVar(&jo.Crawler, "crawler", "", "the crawler's name in the workspace")
	cmd.Flags().StringVar(&jo.CommitDate, "commit-date", "", "the new commit date: YYYY-MM-DD (midnight UTC) or YYYY-MM-DDThh:mm:ssZ (a date in Monocle's other form, with spaces, is rewritten as the latter)")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Hour, "how long to wait for the janitor to end (it goes on after)")
	return cmd
}

// janitorJob is the Job that runs jo's command for the Monocle m, built by
// janitorjob from the API's Deployment as the hook answers it for m's spec
// (answered: its image, config, Elasticsearch URL, scheduling and
// security), never the observed one, whose every field a namespace editor
// can write. Owned by m, not as its controller: Metacontroller claims only
// what has no controller and matches the Monocle's selector
// (controller-uid, which the Job lacks), or whose controller is the
// Monocle (controller_ref_manager.go). note, when not "", is for the
// reader (janitorjob.Build).
func janitorJob(ctx context.Context, c *clients, m *v1alpha1.Monocle, jo janitorjob.Options, hookImage string) (*batchv1.Job, string, error) {
	api, err := answered[*appsv1.Deployment](ctx, c, m, hookImage, instance.For(m.Name).API)
	if err != nil {
		return nil, "", err
	}
	api = api.DeepCopy()
	api.Namespace = m.Namespace
	job, note, err := janitorjob.Build(jo, api, func(name string) (*corev1.ConfigMap, error) {
		cm, err := get[corev1.ConfigMap](ctx, c, cmGVR, m.Namespace, name)
		if err == nil && cm == nil {
			err = errors.New("not found")
		}
		return cm, err
	})
	if errors.Is(err, snapshot.ErrUsage) {
		return nil, "", usageError{err}
	}
	if err != nil {
		return nil, "", err
	}
	job.OwnerReferences = []metav1.OwnerReference{{APIVersion: hook.Group + "/" + hook.Version, Kind: "Monocle", Name: m.Name, UID: m.UID}}
	job.Spec.TTLSecondsAfterFinished = ptr.To(int32(janitorTTL / time.Second))
	return job, note, nil
}
