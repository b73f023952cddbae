package plugin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/janitorjob"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/restorerecord"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// JanitorAnnotation, on a Monocle, is the record of a janitor command
// that stopped the crawler: what it puts back when it ends.
const JanitorAnnotation = restorerecord.JanitorAnnotation

// JanitorTTL is how long a janitor Job and its pod stay once ended: for
// its log, read again with kubectl logs.
const JanitorTTL = time.Hour

// JanitorJob is the Job that runs jo's command for the Monocle m, built by
// janitorjob from the API's Deployment as the hook answers it for m's spec
// (Answered: its image, config, Elasticsearch URL, scheduling and
// security), never the observed one, whose every field a namespace editor
// can write. Owned by m, not as its controller: Metacontroller claims only
// what has no controller and matches the Monocle's selector
// (controller-uid, which the Job lacks), or whose controller is the
// Monocle (controller_ref_manager.go). note, when not "", is for the
// reader (janitorjob.Build).
func JanitorJob(ctx context.Context, c *Clients, m *v1alpha1.Monocle, jo janitorjob.Options, hookImage string) (*batchv1.Job, string, error) {
	api, err := Answered[*appsv1.Deployment](ctx, c, m, hookImage, instance.For(m.Name).API)
	if err != nil {
		return nil, "", err
	}
	api = api.DeepCopy()
	api.Namespace = m.Namespace
	job, note, err := janitorjob.Build(jo, api, func(name string) (*corev1.ConfigMap, error) {
		cm, err := Get[corev1.ConfigMap](ctx, c, ConfigMapGVR, m.Namespace, name)
		if err == nil && cm == nil {
			err = errors.New("not found")
		}
		return cm, err
	})
	if errors.Is(err, snapshot.ErrUsage) {
		return nil, "", UsageError{err}
	}
	if err != nil {
		return nil, "", err
	}
	job.OwnerReferences = []metav1.OwnerReference{{APIVersion: hook.Group + "/" + hook.Version, Kind: "Monocle", Name: m.Name, UID: m.UID}}
	job.Spec.TTLSecondsAfterFinished = ptr.To(int32(JanitorTTL / time.Second))
	return job, note, nil
}

// RestoreAnnotation, on a Monocle, is the restore under way: its record
// (internal/restorerecord), which it resumes or undoes from, once checked.
const RestoreAnnotation = restorerecord.Annotation

func UndoCommand(ns, name string) string {
	return command.Line("kubectl", "monocle", "restore", name, "-n", ns, "--undo")
}

// WaitStopped waits, at most timeout, until the hook has answered the
// Monocle's spec as it is now and no pod of components runs: the API's and
// the crawler's Deployments (when among them) at 0, the snapshot CronJob
// (when among them) suspended with no run active.
func WaitStopped(ctx context.Context, c *Clients, ns, name string, components []string, timeout time.Duration) error {
	n := instance.For(name)
	left := ""
	err := wait.PollUntilContextTimeout(ctx, PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		m, err := ReadMonocle(ctx, c, ns, name)
		if err != nil {
			return false, err
		}
		if m.Status.ObservedGeneration < m.Generation {
			left = "the hook's answer to the patched spec"
			return false, nil
		}
		for _, w := range [][2]string{{"api", n.API}, {"crawler", n.Crawler}} {
			component, deployment := w[0], w[1]
			if !slices.Contains(components, component) {
				continue
			}
			d, err := Get[appsv1.Deployment](ctx, c, DeploymentGVR, ns, deployment)
			if err != nil {
				return false, err
			}
			if d != nil && (d.Spec.Replicas == nil || *d.Spec.Replicas != 0 || d.Status.Replicas != 0) {
				left = "Deployment " + deployment + " scaled to 0"
				return false, nil
			}
		}
		if slices.Contains(components, "snapshots") {
			cj, err := Get[batchv1.CronJob](ctx, c, CronJobGVR, ns, n.Snapshots)
			if err != nil {
				return false, err
			}
			if cj != nil && (cj.Spec.Suspend == nil || !*cj.Spec.Suspend || len(cj.Status.Active) > 0) {
				left = "CronJob " + n.Snapshots + " suspended, with no run active"
				return false, nil
			}
		}
		list, err := c.Dyn.Resource(PodGVR).Namespace(ns).List(ctx, ListOptions(
			"app.kubernetes.io/instance="+name+",app.kubernetes.io/component in ("+strings.Join(components, ",")+")"))
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
		err = fmt.Errorf("still waiting for %s after %s", left, timeout)
	}
	return err
}

// ReadMonocle reads the Monocle name of namespace ns.
func ReadMonocle(ctx context.Context, c *Clients, ns, name string) (*v1alpha1.Monocle, error) {
	m, err := Get[v1alpha1.Monocle](ctx, c, MonocleGVR, ns, name)
	if err == nil && m == nil {
		err = fmt.Errorf("no Monocle %s in namespace %s", name, ns)
	}
	return m, err
}

// AnsweredCronJob is the CronJob N-snapshots as the hook answers it for
// the Monocle m now (Answered), never the observed one, whose every field
// a namespace editor can write.
func AnsweredCronJob(ctx context.Context, c *Clients, m *v1alpha1.Monocle, hookImage string) (*batchv1.CronJob, error) {
	return Answered[*batchv1.CronJob](ctx, c, m, hookImage, instance.For(m.Name).Snapshots)
}

// The paths of the pod spec in the children that run pods.
const (
	CronJobTemplate = "spec.jobTemplate.spec.template.spec."
	podTemplate     = "spec.template.spec."
)

// PodSpecOf is the pod spec of a child that runs pods, and its path; nil
// for a child that runs none.
func PodSpecOf(child any) (*corev1.PodSpec, string) {
	switch o := child.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template.Spec, podTemplate
	case *appsv1.StatefulSet:
		return &o.Spec.Template.Spec, podTemplate
	case *batchv1.Job:
		return &o.Spec.Template.Spec, podTemplate
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template.Spec, CronJobTemplate
	}
	return nil, ""
}

// PutBack says how to put back a child the hook makes: delete it, and the
// hook makes it again, as it answers it, at its next sync.
func PutBack(ns, kind, name string) string {
	return fmt.Sprintf("Put it back as the hook makes it: %s (the hook makes it again at its next sync)",
		command.Line("kubectl", "-n", ns, "delete", strings.ToLower(kind), name))
}

// Drift names the fields of an observed child's pod spec (at its path
// at) that are not what the hook answers (want): those that reach what its
// pods run, as a namespace editor may have set them. Fields the API server
// defaults are compared as defaulted. backup refuses a CronJob that
// drifts; kubectl monocle check shows each child that does.
func Drift(o, w *corev1.PodSpec, at string) []string {
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

// LogsCommand is the command that prints a Job's log.
func LogsCommand(ns, job string) string {
	return command.Line("kubectl", "-n", ns, "logs", "job/"+job)
}

// RunsOn is err, a wait for a Job that ended early (Ctrl-C, a timeout),
// saying that the Job runs on and how to read its log.
func RunsOn(err error, ns, job string) error {
	if errors.Is(err, context.Canceled) {
		err = ErrInterrupted
	}
	return fmt.Errorf("%w: Job %s runs on; its log: %s", err, job, LogsCommand(ns, job))
}

// Ours refuses to replace an existing Job of the same name that is not
// want's: another Monocle's, or anyone's else.
func Ours(existing, want *batchv1.Job) error {
	for _, k := range []string{"app.kubernetes.io/instance", "app.kubernetes.io/component"} {
		if existing.Labels[k] != want.Labels[k] {
			return fmt.Errorf("a Job %s exists that this command did not make (its label %s is %s): delete or rename it first", existing.Name, k, printable.Quote(existing.Labels[k]))
		}
	}
	return nil
}
