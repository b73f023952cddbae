// Package check is kubectl monocle check: the upgrade gate of
// `monocle-hook check`, each Monocle answered as this version's /sync
// would, reading the cluster itself.
package check

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

// New is the check command.
func New(o *plugin.Options) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "check [-A | -n NAMESPACE] [NAME]",
		Short: "List the Monocles this version of monocle-hook would not apply in full, and why",
		Long: `The upgrade gate of monocle-hook check, reading the cluster itself: each Monocle (NAME, those of
the namespace, or with -A of every namespace) is answered as this version's /sync would, with
only the ConfigMaps and Secrets it references or the hook generates for it (N-api, N-elastic),
each read by name. It prints the Monocles that would not apply in full and why, each child
that runs pods whose pod template is not what the hook answers (ChildDrift: the fields, and
how to put it back; as backup refuses its CronJob), those an upgrade would roll, and a
summary line.

Needs get on monocles, configmaps, secrets, deployments, statefulsets, cronjobs and jobs
(the namespace's edit role), and list on monocles (cluster-wide for -A).

Exit codes: 0 every Monocle applies in full; 1 one would not, or a child drifts; 2 a usage
error, no Monocle found, or the cluster could not be read.`,
		Example: `  kubectl monocle check -A
  kubectl monocle check -n monocle my-monocle`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) > 1:
				return plugin.UsageError{Err: fmt.Errorf("check takes at most one Monocle's name, got %d arguments", len(args))}
			case len(args) == 1 && all:
				return plugin.UsageError{Err: errors.New("check: a name and -A: give one or the other")}
			}
			return nil
		},
		ValidArgsFunction: plugin.CompleteMonocles(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := o.Namespace()
			if err != nil {
				return err
			}
			if all {
				ns = ""
			}
			c, err := o.Clients(ns)
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			env := hook.Env{Now: time.Now, Rand: rand.Reader, Context: cmd.Context(), Image: o.HookImage}
			rep, err := checkCluster(cmd.Context(), c, ns, name, env)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "check the Monocles of every namespace")
	return cmd
}

// checkPage is how many Monocles one list request reads.
const checkPage = 50

// checkCluster answers each Monocle of namespace ns ("": every namespace),
// or the one named name, with the ConfigMaps and Secrets it references,
// one Monocle at a time: what it holds is bounded by what one Monocle
// references (and a page of Monocles), not by what the namespace holds.
func checkCluster(ctx context.Context, c *plugin.Clients, ns, name string, env hook.Env) (hook.Report, error) {
	var rep hook.Report
	checkOne := func(m *unstructured.Unstructured) error {
		r, err := checkMonocle(ctx, c, m, env)
		if err != nil {
			return err
		}
		rep.Checked += r.Checked
		rep.Refusals = append(rep.Refusals, r.Refusals...)
		rep.Rolls = append(rep.Rolls, r.Rolls...)
		return nil
	}
	monocles := c.Dyn.Resource(plugin.MonocleGVR).Namespace(ns)
	if name != "" {
		m, err := monocles.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return rep, fmt.Errorf("reading Monocle %s/%s: %w", ns, name, err)
		}
		if err := checkOne(m); err != nil {
			return rep, err
		}
	} else {
		opts := metav1.ListOptions{Limit: checkPage}
		for {
			list, err := monocles.List(ctx, opts)
			if err != nil {
				return rep, fmt.Errorf("listing Monocles%s: %w", in(ns), err)
			}
			for i := range list.Items {
				if err := checkOne(&list.Items[i]); err != nil {
					return rep, err
				}
			}
			if opts.Continue = list.GetContinue(); opts.Continue == "" {
				break
			}
		}
	}
	if rep.Checked == 0 {
		// A gate that passes on nothing passes a wrong namespace or context.
		return rep, fmt.Errorf("no Monocle%s", in(ns))
	}
	// As hook.Check sorts them.
	slices.SortFunc(rep.Refusals, func(a, b hook.Refusal) int { return strings.Compare(a.String(), b.String()) })
	slices.SortFunc(rep.Rolls, func(a, b hook.Roll) int { return strings.Compare(a.String(), b.String()) })
	return rep, nil
}

func in(ns string) string {
	if ns == "" {
		return " in any namespace"
	}
	return " in namespace " + ns
}

// checkMonocle reads what one Monocle references, each by name, and
// answers it.
func checkMonocle(ctx context.Context, c *plugin.Clients, m *unstructured.Unstructured, env hook.Env) (hook.Report, error) {
	raw, err := json.Marshal(m.Object)
	if err != nil {
		return hook.Report{}, err
	}
	cmNames, secretNames, err := hook.References(raw)
	if err != nil {
		return hook.Report{}, err
	}
	ns := m.GetNamespace()
	var cms []*corev1.ConfigMap
	for _, n := range cmNames {
		cm := new(corev1.ConfigMap)
		if ok, err := plugin.GetInto(ctx, c, plugin.ConfigMapGVR.Resource, ns, n, cm); err != nil {
			return hook.Report{}, err
		} else if ok {
			cms = append(cms, cm)
		}
	}
	var secrets []*corev1.Secret
	for _, n := range secretNames {
		s := new(corev1.Secret)
		if ok, err := plugin.GetInto(ctx, c, plugin.SecretGVR.Resource, ns, n, s); err != nil {
			return hook.Report{}, err
		} else if ok {
			secrets = append(secrets, s)
		}
	}
	r, err := hook.CheckObjects([]json.RawMessage{raw}, cms, secrets, env)
	if err != nil || len(r.Refusals) > 0 {
		// A Monocle not applied in full has its children held as they
		// are: there is no answer of the hook's to compare them with.
		return r, err
	}
	drifts, err := childDrifts(ctx, c, m, env.Image)
	r.Refusals = append(r.Refusals, drifts...)
	return r, err
}

// ChildDrift is the reason check gives a child whose pod template is not
// what the hook answers.
const ChildDrift = "ChildDrift"

// childDrifts compares each child of the hook's answer for the Monocle m
// that runs pods with the observed one (drift, as backup does for its
// CronJob): one refusal per child that differs.
func childDrifts(ctx context.Context, c *plugin.Clients, u *unstructured.Unstructured, hookImage string) ([]hook.Refusal, error) {
	m := new(v1alpha1.Monocle)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, m); err != nil {
		return nil, fmt.Errorf("reading Monocle %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	resp, err := plugin.Answer(ctx, c, m, hookImage)
	if err != nil {
		return nil, err
	}
	var out []hook.Refusal
	for _, child := range resp.Children {
		want, at := plugin.PodSpecOf(child)
		if want == nil {
			continue
		}
		kind, name, obs, err := observedLike(ctx, c, m.Namespace, child)
		if err != nil {
			return nil, err
		}
		if obs == nil {
			continue // not made yet
		}
		got, _ := plugin.PodSpecOf(obs)
		if fields := plugin.Drift(got, want, at); len(fields) > 0 {
			out = append(out, hook.Refusal{Namespace: m.Namespace, Name: m.Name, Reason: ChildDrift,
				Message: fmt.Sprintf("the %s %s is not what the hook answers: %s differ (a namespace editor changed them, or the hook runs another image than --hook-image %s). %s",
					kind, name, strings.Join(fields, ", "), hookImage, plugin.PutBack(m.Namespace, kind, name))})
		}
	}
	return out, nil
}

// observedLike reads the observed child of the kind and name of child (of
// the kinds plugin.PodSpecOf knows): nil when it is not there.
func observedLike(ctx context.Context, c *plugin.Clients, ns string, child any) (kind, name string, obs any, err error) {
	switch o := child.(type) {
	case *appsv1.Deployment:
		kind, name = "Deployment", o.Name
		obs, err = observed[appsv1.Deployment](ctx, c, plugin.DeploymentGVR, ns, name)
	case *appsv1.StatefulSet:
		kind, name = "StatefulSet", o.Name
		obs, err = observed[appsv1.StatefulSet](ctx, c, statefulSetGVR, ns, name)
	case *batchv1.Job:
		kind, name = "Job", o.Name
		obs, err = observed[batchv1.Job](ctx, c, plugin.JobGVR, ns, name)
	case *batchv1.CronJob:
		kind, name = "CronJob", o.Name
		obs, err = observed[batchv1.CronJob](ctx, c, plugin.CronJobGVR, ns, name)
	}
	return kind, name, obs, err
}

// observed is get's object, nil (not a nil *T) when there is none.
func observed[T any](ctx context.Context, c *plugin.Clients, gvr schema.GroupVersionResource, ns, name string) (any, error) {
	obj, err := plugin.Get[T](ctx, c, gvr, ns, name)
	if obj == nil || err != nil {
		return nil, err
	}
	return obj, nil
}

var statefulSetGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}

// printReport prints the report as monocle-hook check does; plugin.ErrRefused
// when a Monocle would not apply in full.
func printReport(w io.Writer, rep hook.Report) error {
	rep.Print(w)
	if len(rep.Refusals) > 0 {
		return plugin.ErrRefused
	}
	return nil
}
