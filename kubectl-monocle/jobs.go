package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

var (
	jobGVR        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	cronJobGVR    = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// pollInterval is how often the commands that wait read what they wait on.
const pollInterval = time.Second

// errExit ends a command with its own exit code, having said why.
type errExit struct {
	code int
	err  error
}

func (e errExit) Error() string { return e.err.Error() }
func (e errExit) Unwrap() error { return e.err }

// get reads the object name of namespace ns as a T; nil, nil when there
// is none.
func get[T any](ctx context.Context, c *clients, gvr schema.GroupVersionResource, ns, name string) (*T, error) {
	u, err := c.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	var obj T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &obj); err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	return &obj, nil
}

// createJob creates job in its namespace.
func createJob(ctx context.Context, c *clients, job *batchv1.Job) error {
	job.TypeMeta = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		return err
	}
	if _, err := c.dyn.Resource(jobGVR).Namespace(job.Namespace).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	return nil
}

// deleteJob deletes a Job and its pods, and waits until it is gone.
func deleteJob(ctx context.Context, c *clients, ns, name string) error {
	background := metav1.DeletePropagationBackground
	err := c.dyn.Resource(jobGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Job %s/%s: %w", ns, name, err)
	}
	return wait.PollUntilContextTimeout(ctx, pollInterval, time.Minute, true, func(ctx context.Context) (bool, error) {
		job, err := get[batchv1.Job](ctx, c, jobGVR, ns, name)
		return job == nil, err
	})
}

// jobEnd says whether the Job ended (its Complete or Failed condition is
// True, which the Job controller sets once its pods are gone) and how.
func jobEnd(job *batchv1.Job) (ended, succeeded bool, why string) {
	for _, cond := range job.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case batchv1.JobComplete:
			return true, true, ""
		case batchv1.JobFailed:
			return true, false, cmp.Or(cond.Message, cond.Reason, "failed")
		}
	}
	return false, false, ""
}

// followJob waits until the Job ends, within timeout, then prints its
// last pod's log (escaped: it is the pod's output). It gives the Job as it
// ended, and its last pod's exit code (-1 when no pod says one).
func followJob(ctx context.Context, c *clients, out io.Writer, ns, name string, timeout time.Duration) (*batchv1.Job, int, error) {
	var job *batchv1.Job
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		job, err = get[batchv1.Job](ctx, c, jobGVR, ns, name)
		if err == nil && job == nil {
			err = fmt.Errorf("the Job %s/%s is gone", ns, name)
		}
		if err != nil {
			return false, err
		}
		ended, _, _ := jobEnd(job)
		return ended, nil
	})
	if err != nil {
		if wait.Interrupted(err) && ctx.Err() == nil {
			err = fmt.Errorf("the Job %s/%s did not end within %s", ns, name, timeout)
		}
		return nil, -1, err
	}
	return job, printLog(ctx, c, out, ns, name), nil
}

// maxLog bounds the log printed of a Job's pod: its end says what it did.
const maxLog = 64 << 10

// printLog prints the log of the Job's last pod, and gives that pod's exit
// code (-1 when none says one).
func printLog(ctx context.Context, c *clients, out io.Writer, ns, job string) int {
	list, err := c.dyn.Resource(podGVR).Namespace(ns).List(ctx, listOptions(batchv1.JobNameLabel+"="+job))
	if err != nil {
		fmt.Fprintf(out, "(its pods' log not shown: %s)\n", printable.Escape(err.Error()))
		return -1
	}
	var pods []corev1.Pod
	for _, u := range list.Items {
		var p corev1.Pod
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p) == nil {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		fmt.Fprintf(out, "(no pod of Job %s is left to show its log)\n", job)
		return -1
	}
	last := slices.MaxFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	code := -1
	for _, s := range last.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			code = int(s.State.Terminated.ExitCode)
		}
	}
	text, err := c.logs(ctx, ns, last.Name, maxLog)
	switch {
	case err != nil:
		fmt.Fprintf(out, "(the log of pod %s not shown: %s)\n", last.Name, printable.Escape(err.Error()))
	case text != "":
		fmt.Fprintf(out, "--- log of pod %s (the last %d KiB at most) ---\n%s", last.Name, maxLog>>10, printable.Lines(strings.TrimSuffix(text, "\n")+"\n"))
	}
	return code
}

// errInterrupted is a wait that ended on Ctrl-C or SIGTERM.
var errInterrupted = errors.New("interrupted")
