package plugin

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

var (
	JobGVR        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	CronJobGVR    = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	DeploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// PollInterval is how often the commands that wait read what they wait on.
const PollInterval = time.Second

// ErrExit ends a command with its own exit code, having said why.
type ErrExit struct {
	Code int
	Err  error
}

func (e ErrExit) Error() string { return e.Err.Error() }
func (e ErrExit) Unwrap() error { return e.Err }

// Get reads the object name of namespace ns as a T; nil, nil when there
// is none.
func Get[T any](ctx context.Context, c *Clients, gvr schema.GroupVersionResource, ns, name string) (*T, error) {
	u, err := c.Dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
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

// CreateJob creates job in its namespace.
func CreateJob(ctx context.Context, c *Clients, job *batchv1.Job) error {
	job.TypeMeta = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		return err
	}
	if _, err := c.Dyn.Resource(JobGVR).Namespace(job.Namespace).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	return nil
}

// DeleteJob deletes a Job and its pods, and waits until it is gone.
func DeleteJob(ctx context.Context, c *Clients, ns, name string) error {
	background := metav1.DeletePropagationBackground
	err := c.Dyn.Resource(JobGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Job %s/%s: %w", ns, name, err)
	}
	return wait.PollUntilContextTimeout(ctx, PollInterval, time.Minute, true, func(ctx context.Context) (bool, error) {
		job, err := Get[batchv1.Job](ctx, c, JobGVR, ns, name)
		return job == nil, err
	})
}

// JobEnd says whether the Job ended (its Complete or Failed condition is
// True, which the Job controller sets once its pods are gone) and how.
func JobEnd(job *batchv1.Job) (ended, succeeded bool, why string) {
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

// FollowJob waits until the Job ends, within timeout, printing the log of
// each of its pods as it runs (escaped: it is the pod's output), or, when
// none was seen running, the last pod's log once it ends. It gives the Job
// as it ended, and its last pod's exit code (-1 when no pod says one).
func FollowJob(ctx context.Context, c *Clients, out io.Writer, ns, name string, timeout time.Duration) (*batchv1.Job, int, error) {
	var job *batchv1.Job
	// The follower's context is the command's: the poll's own ends as soon
	// as the poll does, which would cut the log's last lines.
	f := &follower{ctx: ctx, c: c, out: out, ns: ns, followed: map[string]bool{}}
	defer f.stop()
	err := wait.PollUntilContextTimeout(ctx, PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		job, err = Get[batchv1.Job](ctx, c, JobGVR, ns, name)
		if err == nil && job == nil {
			err = fmt.Errorf("the Job %s/%s is gone", ns, name)
		}
		if err != nil {
			return false, err
		}
		if ended, _, _ := JobEnd(job); ended {
			return true, nil
		}
		f.next(job)
		return false, nil
	})
	if err != nil {
		if wait.Interrupted(err) && ctx.Err() == nil {
			err = fmt.Errorf("the Job %s/%s did not end within %s", ns, name, timeout)
		}
		return nil, -1, err
	}
	// The log's end reaches the plugin a moment after the pod's.
	f.wait(5 * time.Second)
	pods := jobPods(ctx, c, job)
	if len(f.followed) == 0 {
		return job, printLog(ctx, c, out, ns, name, pods), nil
	}
	return job, exitCode(pods), nil
}

// follower prints the log of a Job's pods, one at a time, as they run.
type follower struct {
	ctx      context.Context
	c        *Clients
	out      io.Writer
	ns       string
	followed map[string]bool
	done     chan struct{} // closed when the log followed ends; nil: none
	cancel   context.CancelFunc
}

// next starts following the log of the Job's running pod, unless one is
// being followed.
func (f *follower) next(job *batchv1.Job) {
	if f.done != nil {
		select {
		case <-f.done:
		default:
			return
		}
	}
	for _, p := range jobPods(f.ctx, f.c, job) {
		if p.Status.Phase != corev1.PodRunning || f.followed[p.Name] {
			continue
		}
		f.followed[p.Name] = true
		ctx, cancel := context.WithCancel(f.ctx)
		f.cancel, f.done = cancel, make(chan struct{})
		fmt.Fprintf(f.out, "--- log of pod %s, followed ---\n", p.Name)
		go func(pod string, done chan struct{}) {
			defer close(done)
			log, err := f.c.Logs(ctx, f.ns, pod, true, 0)
			if err != nil {
				fmt.Fprintf(f.out, "(the log of pod %s not followed: %s)\n", pod, printable.Escape(err.Error()))
				return
			}
			defer log.Close()
			copyLines(f.out, log)
		}(p.Name, f.done)
		return
	}
}

// wait gives the log followed up to d to end, then stops following it.
func (f *follower) wait(d time.Duration) {
	if f.done == nil {
		return
	}
	select {
	case <-f.done:
	case <-time.After(d):
	}
	f.stop()
}

func (f *follower) stop() {
	if f.cancel != nil {
		f.cancel()
		<-f.done
		f.cancel = nil
	}
}

// copyLines writes r to w a line at a time, each escaped; a line longer
// than 64 KiB is cut there and goes on as another.
func copyLines(w io.Writer, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			fmt.Fprintln(w, printable.Escape(strings.TrimSuffix(string(line), "\n")))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// jobPods are the Job's pods, oldest first: those whose controller owner
// reference is the Job, by its UID. The controller-uid label only narrows
// the list: anyone who can write a pod in the namespace can set it, and a
// pod that only carries it is neither followed nor counted; by UID, not
// name, none of an earlier Job of the same name (deleted, its pods not
// yet) is taken for its.
func jobPods(ctx context.Context, c *Clients, job *batchv1.Job) []corev1.Pod {
	list, err := c.Dyn.Resource(PodGVR).Namespace(job.Namespace).List(ctx, ListOptions(batchv1.ControllerUidLabel+"="+string(job.UID)))
	if err != nil {
		return nil
	}
	var pods []corev1.Pod
	for _, u := range list.Items {
		var p corev1.Pod
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p) != nil {
			continue
		}
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == job.UID && ref.Kind == "Job" && ref.APIVersion == "batch/v1" {
			pods = append(pods, p)
		}
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return pods
}

// exitCode is the last pod's container's exit code, -1 when none says one.
func exitCode(pods []corev1.Pod) int {
	if len(pods) == 0 {
		return -1
	}
	for _, s := range pods[len(pods)-1].Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return int(s.State.Terminated.ExitCode)
		}
	}
	return -1
}

// maxLog bounds the log printed of a Job's pod that was not followed: its
// end says what it did.
const maxLog = 64 << 10

// printLog prints the last lines of the last pod's log, and gives that
// pod's exit code.
func printLog(ctx context.Context, c *Clients, out io.Writer, ns, job string, pods []corev1.Pod) int {
	if len(pods) == 0 {
		fmt.Fprintf(out, "(no pod of Job %s is left to show its log)\n", job)
		return -1
	}
	last := pods[len(pods)-1]
	log, err := c.Logs(ctx, ns, last.Name, false, maxLog)
	if err != nil {
		fmt.Fprintf(out, "(the log of pod %s not shown: %s)\n", last.Name, printable.Escape(err.Error()))
		return exitCode(pods)
	}
	defer log.Close()
	fmt.Fprintf(out, "--- log of pod %s (its last 1000 lines, at most %d KiB) ---\n", last.Name, maxLog>>10)
	copyLines(out, io.LimitReader(log, maxLog))
	return exitCode(pods)
}

// ErrInterrupted is a wait that ended on Ctrl-C or SIGTERM.
var ErrInterrupted = errors.New("interrupted")

// Answered is the child name of type T as the hook answers it for the
// Monocle m now (hook.Sync on its spec, the ConfigMaps and Secrets it
// reads, its generated Secrets and ConfigMap), never the observed one,
// whose every field a namespace editor can write: what the plugin builds
// its Jobs from. Refused when the hook would not apply m's spec in full:
// its answer then repeats the children as last applied, and that copy is
// the tenant's too.
func Answered[T interface {
	*batchv1.CronJob | *appsv1.Deployment
	GetName() string
}](ctx context.Context, c *Clients, m *v1alpha1.Monocle, hookImage, name string) (T, error) {
	resp, err := Answer(ctx, c, m, hookImage)
	if err != nil {
		return nil, err
	}
	for _, child := range resp.Children {
		if obj, ok := child.(T); ok && obj.GetName() == name {
			return obj, nil
		}
	}
	return nil, fmt.Errorf("the hook answers no child %s for Monocle %s", name, m.Name)
}

// Answer is the hook's whole answer for the Monocle m now (Answered's
// source; check compares each child that runs pods with it), refused as
// Answered says.
func Answer(ctx context.Context, c *Clients, m *v1alpha1.Monocle, hookImage string) (*wire.SyncResponse, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	cmNames, secretNames, err := hook.References(raw)
	if err != nil {
		return nil, err
	}
	ns, n := m.Namespace, instance.For(m.Name)
	req := &wire.SyncRequest{
		Parent:   &wire.Parent{},
		Children: wire.Children{ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}},
		Related:  wire.Related{ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}},
	}
	if err := json.Unmarshal(raw, req.Parent); err != nil {
		return nil, err
	}
	for _, name := range cmNames {
		cm := new(corev1.ConfigMap)
		if ok, err := GetInto(ctx, c, ConfigMapGVR.Resource, ns, name, cm); err != nil {
			return nil, err
		} else if ok {
			req.Related.ConfigMaps[ns+"/"+name] = cm
			if name == n.API {
				req.Children.ConfigMaps[name] = cm
			}
		}
	}
	for _, name := range secretNames {
		sec := new(corev1.Secret)
		if ok, err := GetInto(ctx, c, SecretGVR.Resource, ns, name, sec); err != nil {
			return nil, err
		} else if ok {
			req.Related.Secrets[ns+"/"+name] = sec
			if name == n.API || name == n.Elastic {
				req.Children.Secrets[name] = sec
			}
		}
	}
	resp, err := hook.Sync(req, hook.Env{Now: time.Now, Rand: rand.Reader, Context: ctx, Image: hookImage})
	if err != nil {
		return nil, err
	}
	for _, cond := range resp.Status.Conditions {
		if cond.Type == condition.ConditionSpecApplied && cond.Status != metav1.ConditionTrue {
			return nil, fmt.Errorf("the hook does not apply Monocle %s's spec in full (%s: %s): no Job is built from what it holds as last applied; %s says what to change",
				m.Name, cond.Reason, printable.Escape(cond.Message), command.Line("kubectl", "monocle", "-n", ns, "check", m.Name))
		}
	}
	return resp, nil
}

// GetInto reads the ConfigMap or Secret ns/name into obj: false when it is
// not there.
func GetInto(ctx context.Context, c *Clients, resource, ns, name string, obj any) (bool, error) {
	gvr := ConfigMapGVR
	if resource == SecretGVR.Resource {
		gvr = SecretGVR
	}
	u, err := c.Dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case apierrors.IsForbidden(err):
		return false, fmt.Errorf("reading %s %s/%s: %w (check needs get on configmaps and secrets: the namespace's edit role)", resource, ns, name, err)
	case err != nil:
		return false, fmt.Errorf("reading %s %s/%s: %w", resource, ns, name, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return false, fmt.Errorf("reading %s %s/%s: %w", resource, ns, name, err)
	}
	return true, nil
}
