// Package status is kubectl monocle status: how a Monocle is doing, from
// its status, its children and its pods, and its crawlers' commits.
package status

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/utils/ptr"

	"github.com/robfig/cron/v3"
	"github.com/spf13/cobra"
	yaml2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/monocleapi"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

// Status is what status prints, and -o json|yaml writes.
type Status struct {
	Namespace          string `json:"namespace"`
	Name               string `json:"name"`
	Generation         int64  `json:"generation"`
	ObservedGeneration int64  `json:"observedGeneration"`
	URL                string `json:"url,omitempty"`
	// NotSynced says why the status is not of the spec (hook.Unsynced):
	// the conditions are then of an older spec, or none.
	NotSynced string `json:"notSynced,omitempty"`
	// Conditions with what each means.
	Conditions []Condition `json:"conditions"`
	// Children of the kinds the hook makes (hook/wire.ChildKinds),
	// labelled app.kubernetes.io/instance=N.
	Children []Child `json:"children"`
	// NotShown says which kinds of child could not be read, and why.
	NotShown []string `json:"notShown,omitempty"`
	Pods     []Pod    `json:"pods"`
	// Images are those observed running (status.versions).
	Images    *v1alpha1.Versions      `json:"images,omitempty"`
	Storage   *v1alpha1.StorageStatus `json:"storage,omitempty"`
	Snapshots *Snapshots              `json:"snapshots,omitempty"`
	// Crawlers: each crawler's commit per workspace, from Monocle's API.
	Crawlers []Crawler `json:"crawlers,omitempty"`
	// CrawlersNote says why Crawlers is missing or partial.
	CrawlersNote string `json:"crawlersNote,omitempty"`
}

type Condition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	Reason             string      `json:"reason"`
	Message            string      `json:"message"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	Meaning            string      `json:"meaning"`
}

type Child struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Ready: "yes", "no", or "-" for a kind that has no readiness.
	Ready  string `json:"ready"`
	Detail string `json:"detail,omitempty"`
}

type Pod struct {
	Name     string `json:"name"`
	Phase    string `json:"phase"`
	Ready    string `json:"ready"` // ready containers / containers
	Restarts int32  `json:"restarts"`
}

type Snapshots struct {
	Schedule  string `json:"schedule,omitempty"`
	TimeZone  string `json:"timeZone,omitempty"`
	Suspended bool   `json:"suspended,omitempty"`
	// Last is when the last run was scheduled; LastSuccessful when the
	// last one succeeded (the CronJob's status, copied into the Monocle's).
	Last           *metav1.Time `json:"lastScheduleTime,omitempty"`
	LastSuccessful *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// Next is when the schedule runs next, from now.
	Next   *metav1.Time `json:"next,omitempty"`
	Claim  string       `json:"claim,omitempty"`
	Volume string       `json:"capacity,omitempty"`
}

// Crawler is a crawler's commit for one kind of entity it crawls.
type Crawler struct {
	Workspace string `json:"workspace"`
	Crawler   string `json:"crawler"`
	// Entity is the kind (organization, project, task data, user): each
	// crawler is asked for those its provider's streams crawl
	// (monocleconfig.Workspace.Entities).
	Entity string `json:"entity,omitempty"`
	// OldestEntity is the entity of that kind it updates next, and
	// LastCommitAt the date up to which it has crawled it (and so every
	// other of that kind).
	OldestEntity string     `json:"oldestEntity,omitempty"`
	LastCommitAt *time.Time `json:"lastCommitAt,omitempty"`
	Error        string     `json:"error,omitempty"`
}

// New is the status command.
func New(o *plugin.Options) *cobra.Command {
	var output string
	var waitFor bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "How a Monocle is doing, on one screen",
		Long: `How the Monocle NAME of the namespace is doing: its conditions and what they mean, each child
and its readiness, the pods and their restarts, the images running, the storage, the last
snapshot and the next, and each crawler's commit per workspace for each kind of entity its
provider crawls (organization, project, task data, user), asked of Monocle's own API
through the API server's service proxy (this needs get on services/proxy, which the built-in
view role has not: without it, that part is left out and a line says why).
Reads only the Monocle's namespace.

With --wait, it first waits (at most --timeout) until the Monocle's last change is applied and
serving: its status is of its generation, with SpecApplied and Ready True. It then prints the
status, and exits 1 if it timed out, or at once if the spec is refused in a way only an edit
fixes (InvalidSpec, ConfigInvalid).`,
		Example: `  kubectl monocle status my-monocle -n monocle
  kubectl monocle status my-monocle -o json
  kubectl monocle status my-monocle --wait --timeout 15m`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := plugin.OneName("status", args); err != nil {
				return err
			}
			if output != "" && output != "json" && output != "yaml" {
				return plugin.UsageError{Err: fmt.Errorf("-o %q: json or yaml", output)}
			}
			return nil
		},
		ValidArgsFunction: plugin.CompleteMonocles(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd, o, args[0], output, waitFor, timeout)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml: the status as a struct, for scripts (default: text)")
	cmd.Flags().BoolVar(&waitFor, "wait", false, "wait until the last change is applied and serving (SpecApplied and Ready True for the Monocle's generation), then print")
	cmd.Flags().DurationVar(&timeout, "timeout", 15*time.Minute, "with --wait: how long to wait")
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// waitApplied waits, at most timeout, until the Monocle ns/name's last
// change is applied and serving (notYet). It ends at once, plugin.ErrExit 1, on a
// refusal only an edit of the spec fixes; timed out, plugin.ErrExit 1 with why.
func waitApplied(ctx context.Context, c *plugin.Clients, ns, name string, timeout time.Duration) error {
	var why string
	err := wait.PollUntilContextTimeout(ctx, plugin.PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		u, err := c.Dyn.Resource(plugin.MonocleGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading Monocle %s/%s: %w", ns, name, err)
		}
		var m v1alpha1.Monocle
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err != nil {
			return false, fmt.Errorf("reading Monocle %s/%s: %w", ns, name, err)
		}
		var refused bool
		why, refused = notYet(&m)
		if refused {
			return false, plugin.ErrExit{Code: 1, Err: fmt.Errorf("%s: only an edit of the spec changes that", why)}
		}
		return why == "", nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return plugin.ErrExit{Code: 1, Err: fmt.Errorf("not applied and serving after %s: %s", timeout, why)}
	}
	return err
}

// notYet says why the Monocle's last change is not applied and serving,
// "" when it is: its status is of its generation (Metacontroller has synced
// it), with SpecApplied and Ready True for it. refused: the reason is a
// refusal only an edit of the spec fixes (condition.Refused).
func notYet(m *v1alpha1.Monocle) (why string, refused bool) {
	if m.Status.ObservedGeneration < m.Generation {
		return fmt.Sprintf("its status is of generation %d, its spec of %d: not synced yet", m.Status.ObservedGeneration, m.Generation), false
	}
	for _, t := range []string{condition.ConditionSpecApplied, condition.ConditionReady} {
		c := meta.FindStatusCondition(m.Status.Conditions, t)
		switch {
		case c == nil || c.ObservedGeneration < m.Generation:
			return "no " + t + " condition of generation " + strconv.FormatInt(m.Generation, 10) + " yet", false
		case c.Status != metav1.ConditionTrue:
			return fmt.Sprintf("%s is %s, %s: %s", t, c.Status, c.Reason, monocleapi.Cut(c.Message, 300)), condition.Refused(m.Status) != nil
		}
	}
	return "", false
}

// readStatus reads the Monocle name of namespace ns and what it runs.
// runStatus prints the Monocle name's status, after waiting, with
// --wait, until its last change is applied and serving.
func runStatus(cmd *cobra.Command, o *plugin.Options, name, output string, waitFor bool, timeout time.Duration) error {
	ns, c, err := o.Target()
	if err != nil {
		return err
	}
	var waited error
	if waitFor {
		waited = waitApplied(cmd.Context(), c, ns, name, timeout)
		var exit plugin.ErrExit
		if waited != nil && !errors.As(waited, &exit) {
			return waited
		}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
	defer cancel()
	st, err := readStatus(ctx, c, ns, name, time.Now())
	if err != nil {
		return err
	}
	if err := printStatus(cmd.OutOrStdout(), st, output); err != nil {
		return err
	}
	return waited
}

func readStatus(ctx context.Context, c *plugin.Clients, ns, name string, now time.Time) (*Status, error) {
	u, err := c.Dyn.Resource(plugin.MonocleGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading Monocle %s/%s: %w", ns, name, err)
	}
	var m v1alpha1.Monocle
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err != nil {
		return nil, fmt.Errorf("reading Monocle %s/%s: %w", ns, name, err)
	}
	st := &Status{Namespace: ns, Name: name, Generation: m.Generation, ObservedGeneration: m.Status.ObservedGeneration,
		URL: m.Status.URL, Images: m.Status.Versions, Storage: m.Status.Storage, Conditions: []Condition{}, Children: []Child{}, Pods: []Pod{},
		NotSynced: hook.Unsynced(m.Generation, m.Status.ObservedGeneration, len(m.Status.Conditions) > 0 || m.Status.ObservedGeneration > 0, m.CreationTimestamp.Time, now)}
	for _, cond := range m.Status.Conditions {
		st.Conditions = append(st.Conditions, Condition{cond.Type, string(cond.Status), cond.Reason, cond.Message, cond.LastTransitionTime, meaning(cond)})
	}
	selector := "app.kubernetes.io/instance=" + name
	apiDeployment, cronJob, err := readChildren(ctx, c, st, selector, now)
	if err != nil {
		return nil, err
	}
	pods, err := c.Dyn.Resource(plugin.PodGVR).Namespace(ns).List(ctx, plugin.ListOptions(selector))
	switch {
	case apierrors.IsForbidden(err):
		st.NotShown = append(st.NotShown, fmt.Sprintf("Pods: you may not list pods in %s", ns))
	case err != nil:
		return nil, fmt.Errorf("listing pods in %s: %w", ns, err)
	default:
		for i := range pods.Items {
			var p corev1.Pod
			if runtime.DefaultUnstructuredConverter.FromUnstructured(pods.Items[i].Object, &p) != nil {
				continue
			}
			st.Pods = append(st.Pods, podLine(&p))
		}
	}
	slices.SortFunc(st.Pods, func(a, b Pod) int { return strings.Compare(a.Name, b.Name) })
	st.Snapshots = snapshots(m.Status.Snapshots, cronJob, now)
	st.Crawlers, st.CrawlersNote = crawlers(ctx, c, ns, name, apiDeployment)
	return st, nil
}

// readChildren adds the Monocle's children to st, and gives its API's
// Deployment and its snapshots' CronJob, nil if not there.
func readChildren(ctx context.Context, c *plugin.Clients, st *Status, selector string, now time.Time) (apiDeployment *appsv1.Deployment, cronJob *batchv1.CronJob, err error) {
	ns, name := st.Namespace, st.Name
	for _, k := range wire.ChildKinds {
		gvr := schema.FromAPIVersionAndKind(k.APIVersion, k.Kind).GroupVersion().WithResource(k.Resource)
		list, err := c.Dyn.Resource(gvr).Namespace(ns).List(ctx, plugin.ListOptions(selector))
		switch {
		case apierrors.IsForbidden(err):
			st.NotShown = append(st.NotShown, fmt.Sprintf("%ss: you may not list %s in %s", k.Kind, k.Resource, ns))
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("listing %s in %s: %w", k.Resource, ns, err)
		}
		for i := range list.Items {
			child, obj := describe(k.Kind, &list.Items[i], now)
			st.Children = append(st.Children, child)
			switch o := obj.(type) {
			case *appsv1.Deployment:
				if o.Name == instance.For(name).API {
					apiDeployment = o
				}
			case *batchv1.CronJob:
				if o.Name == instance.For(name).Snapshots {
					cronJob = o
				}
			}
		}
	}
	return apiDeployment, cronJob, nil
}

// meaning is what a condition says, by its reason (hook/condition's
// table, which docs/status.md shows): a reason this plugin does not know
// (a newer hook's) is said to be so.
func meaning(c metav1.Condition) string {
	if m := condition.Explain(c.Reason); m != "" {
		return m
	}
	return "a reason this kubectl monocle does not know (a newer hook's?): see the message"
}

// describe is a child's line, and the child typed when it is a kind status
// reads more of.
func describe(kind string, u *unstructured.Unstructured, now time.Time) (Child, any) {
	child := Child{Kind: kind, Name: u.GetName(), Ready: "-"}
	if u.GetDeletionTimestamp() != nil {
		child.Detail = "being deleted"
	}
	switch kind {
	case "StatefulSet":
		var s appsv1.StatefulSet
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s) == nil {
			child.Ready = yesNo(condition.StatefulSetReady(&s))
			child.Detail = fmt.Sprintf("%d/%d ready, %d updated", s.Status.ReadyReplicas, ptr.Deref(s.Spec.Replicas, 1), s.Status.UpdatedReplicas)
			return child, &s
		}
	case "Deployment":
		var d appsv1.Deployment
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d) == nil {
			child.Ready = yesNo(condition.DeploymentReady(&d))
			child.Detail = fmt.Sprintf("%d/%d available, %d updated", d.Status.AvailableReplicas, ptr.Deref(d.Spec.Replicas, 1), d.Status.UpdatedReplicas)
			return child, &d
		}
	case "Job":
		var j batchv1.Job
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &j) == nil {
			switch {
			case condition.JobCondition(&j, batchv1.JobComplete):
				child.Ready, child.Detail = "yes", "complete"
			case condition.JobCondition(&j, batchv1.JobFailed):
				child.Ready, child.Detail = "no", "failed"
			default:
				child.Ready, child.Detail = "no", fmt.Sprintf("not finished: %d pods active, %d failed", j.Status.Active, j.Status.Failed)
			}
			return child, &j
		}
	case "CronJob":
		var cj batchv1.CronJob
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cj) == nil {
			child.Detail = "schedule " + cj.Spec.Schedule
			if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
				child.Detail += ", suspended"
			}
			return child, &cj
		}
	case "PodDisruptionBudget":
		var pdb policyv1.PodDisruptionBudget
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pdb) == nil {
			child.Detail = fmt.Sprintf("%d/%d healthy, %d disruptions allowed", pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy, pdb.Status.DisruptionsAllowed)
			return child, &pdb
		}
	case "Ingress":
		ing, _, _ := unstructured.NestedSlice(u.Object, "status", "loadBalancer", "ingress")
		child.Ready = yesNo(len(ing) > 0)
		if len(ing) == 0 {
			child.Detail = "no address yet"
		}
	}
	return child, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func podLine(p *corev1.Pod) Pod {
	line := Pod{Name: p.Name, Phase: string(p.Status.Phase)}
	if p.DeletionTimestamp != nil {
		line.Phase = "Terminating"
	}
	ready := 0
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			ready++
		}
		line.Restarts += cs.RestartCount
	}
	line.Ready = fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers))
	return line
}

// snapshots is the snapshot volume and runs, from the Monocle's status and
// its CronJob (nil without either).
func snapshots(s *v1alpha1.SnapshotsStatus, cj *batchv1.CronJob, now time.Time) *Snapshots {
	if s == nil && cj == nil {
		return nil
	}
	out := &Snapshots{}
	if s != nil {
		out.Claim, out.Volume, out.Last, out.LastSuccessful = s.Claim, s.Capacity, s.LastScheduleTime, s.LastSuccessfulTime
	}
	if cj != nil {
		out.Schedule, out.TimeZone = cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, "")
		out.Suspended = ptr.Deref(cj.Spec.Suspend, false)
		// The CronJob's own status is the newest.
		out.Last = cmp.Or(cj.Status.LastScheduleTime, out.Last)
		out.LastSuccessful = cmp.Or(cj.Status.LastSuccessfulTime, out.LastSuccessful)
		if sched, err := scheduleIn(cj.Spec.Schedule, out.TimeZone); err == nil && !out.Suspended {
			next := metav1.NewTime(sched.Next(now).UTC())
			out.Next = &next
		}
	}
	return out
}

// scheduleIn reads a CronJob's schedule in its time zone as the CronJob
// controller does (UTC without one, as the hook assumes).
func scheduleIn(schedule, timeZone string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule %q", schedule)
		}
	}()
	if strings.Contains(schedule, "TZ") {
		return cron.ParseStandard(schedule)
	}
	return cron.ParseStandard("TZ=" + cmp.Or(timeZone, "UTC") + " " + schedule)
}

// maxCrawlers bounds the crawlers asked about.
const maxCrawlers = 50

// crawlers asks Monocle's API, through the service proxy, for each
// crawler's commit per workspace of the config the API mounts.
func crawlers(ctx context.Context, c *plugin.Clients, ns, name string, api *appsv1.Deployment) ([]Crawler, string) {
	if api == nil {
		return nil, "crawlers: no API Deployment " + instance.For(name).API + " to ask"
	}
	mounted := ""
	for _, v := range api.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && strings.HasPrefix(v.ConfigMap.Name, instance.For(name).MountedConfigPrefix()) {
			mounted = v.ConfigMap.Name
		}
	}
	if mounted == "" {
		return nil, "crawlers: the API mounts no config yet"
	}
	u, err := c.Dyn.Resource(plugin.ConfigMapGVR).Namespace(ns).Get(ctx, mounted, metav1.GetOptions{})
	if err != nil {
		return nil, "crawlers: reading the API's config " + mounted + ": " + err.Error()
	}
	data, _, _ := unstructured.NestedString(u.Object, "data", instance.ConfigFile)
	cfg, err := monocleconfig.Parse([]byte(data), nil)
	if err != nil {
		return nil, "crawlers: the API's config " + mounted + " does not parse: " + err.Error()
	}
	var out []Crawler
	for _, ws := range cfg.Workspaces {
		for i, cr := range ws.Crawlers {
			kinds := []string{""}
			if i < len(ws.Entities) && len(ws.Entities[i]) > 0 {
				kinds = ws.Entities[i]
			}
			for _, kind := range kinds {
				if len(out) == maxCrawlers {
					return out, fmt.Sprintf("crawlers: only the first %d crawlers' kinds of entity are shown", maxCrawlers)
				}
				out = append(out, Crawler{Workspace: ws.Name, Crawler: cr, Entity: kind})
			}
		}
	}
	if len(out) == 0 {
		return nil, "crawlers: the config names none"
	}
	return askCrawlers(ctx, c, ns, name, out)
}

// askCrawlers asks Monocle's API, through the API server's service proxy,
// each crawler's last commit for each kind of entity it crawls.
func askCrawlers(ctx context.Context, c *plugin.Clients, ns, name string, out []Crawler) ([]Crawler, string) {
	note := ""
	if c.Crawlers == nil {
		return nil, "crawlers: no way to reach Monocle's API"
	}
	apiClient := c.Crawlers(ns, monocleapi.APIService(name))
	for i := range out {
		if out[i].Entity == "" {
			out[i].Error = "Monocle's crawler runs no stream of it (a GitHub application or task data crawler)"
			continue
		}
		info, err := apiClient.CommitInfo(ctx, out[i].Workspace, out[i].Crawler, monocleapi.EntityTypes[out[i].Entity])
		switch {
		case monocleapi.Forbidden(err):
			// The same for every crawler: one line says why.
			return nil, "crawlers: not shown: you may not use services/proxy on " + monocleapi.APIService(name) +
				" in " + ns + " (403 Forbidden; the built-in view role has no services/proxy): the rest is complete"
		case err != nil:
			out[i].Error = err.Error()
			note = "crawlers: Monocle's API, through the API server's service proxy, did not answer for every crawler"
		case info.NoEntity:
			out[i].Error = "no " + out[i].Entity + " crawled yet"
		default:
			out[i].OldestEntity = info.Entity
			t := info.LastCommitAt
			out[i].LastCommitAt = &t
		}
	}
	return out, note
}

func printStatus(w io.Writer, st *Status, output string) error {
	switch output {
	case "json", "yaml":
		b, err := json.MarshalIndent(st, "", "  ")
		if err == nil && output == "yaml" {
			b, err = jsonToYAML(b)
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", bytes.TrimSuffix(printable.Quoted(b), []byte("\n")))
		return err
	}
	// Every value read from the cluster is shown as text, escaped.
	e := printable.Escape
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Monocle %s/%s (generation %d, observed %d)\n", e(st.Namespace), e(st.Name), st.Generation, st.ObservedGeneration)
	if st.URL != "" {
		fmt.Fprintf(tw, "URL: %s\n", e(st.URL))
	}
	if st.NotSynced != "" {
		fmt.Fprintf(tw, "NOT SYNCED: %s\n", e(st.NotSynced))
	}
	printTables(tw, st)
	tw.Flush()
	fmt.Fprintln(w)
	printFacts(w, st)
	if len(st.Crawlers) > 0 {
		fmt.Fprintln(tw, "\nWORKSPACE\tCRAWLER\tENTITY\tLAST COMMIT\tOLDEST")
		for _, c := range st.Crawlers {
			when := "-"
			if c.LastCommitAt != nil {
				when = c.LastCommitAt.Format(time.RFC3339)
			}
			detail := c.OldestEntity
			if c.Error != "" {
				detail = c.Error
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e(c.Workspace), e(c.Crawler), e(cmp.Or(c.Entity, "-")), when, e(detail))
		}
	}
	if st.CrawlersNote != "" {
		fmt.Fprintf(tw, "\n%s\n", e(st.CrawlersNote))
	}
	return tw.Flush()
}

// printTables prints the conditions, the children and the pods, each
// value read from the cluster escaped.
func printTables(tw io.Writer, st *Status) {
	e := printable.Escape
	fmt.Fprintln(tw, "\nCONDITION\tSTATUS\tREASON\tMEANING")
	if len(st.Conditions) == 0 {
		fmt.Fprintln(tw, "(none yet: Metacontroller has not synced it)")
	}
	for _, c := range st.Conditions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e(c.Type), e(c.Status), e(c.Reason), c.Meaning)
		if c.Message != "" {
			fmt.Fprintf(tw, "\t\t\t%s\n", e(monocleapi.Cut(c.Message, 300)))
		}
	}
	fmt.Fprintln(tw, "\nCHILD\tREADY\tDETAIL")
	if len(st.Children) == 0 {
		fmt.Fprintln(tw, "(none yet)")
	}
	for _, c := range st.Children {
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", c.Kind, e(c.Name), c.Ready, e(c.Detail))
	}
	for _, n := range st.NotShown {
		fmt.Fprintf(tw, "(not shown: %s)\n", e(n))
	}
	fmt.Fprintln(tw, "\nPOD\tPHASE\tREADY\tRESTARTS")
	if len(st.Pods) == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	for _, p := range st.Pods {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", e(p.Name), e(p.Phase), p.Ready, p.Restarts)
	}
}

// printFacts prints the images running, the storage and the snapshots,
// each value read from the cluster escaped.
func printFacts(w io.Writer, st *Status) {
	e := printable.Escape
	line := func(key, format string, args ...any) {
		fmt.Fprintf(w, "%-16s"+format+"\n", append([]any{key}, args...)...)
	}
	if st.Images != nil {
		line("Images running:", "Monocle %s, Elasticsearch %s", e(orNone(st.Images.Monocle)), e(orNone(st.Images.Elasticsearch)))
	} else {
		line("Images running:", "none observed yet")
	}
	if s := st.Storage; s != nil {
		line("Storage:", "%s, requested %s, capacity %s", e(orNone(s.Claim)), e(orNone(s.Requested)), e(orNone(s.Capacity)))
	} else {
		line("Storage:", "none observed (an external Elasticsearch, or no volume yet)")
	}
	if s := st.Snapshots; s != nil {
		next := timeOr(s.Next)
		if s.Suspended {
			next = "none: suspended"
		}
		line("Snapshots:", "schedule %s%s, volume %s %s", e(orNone(s.Schedule)), e(tz(s.TimeZone)), e(orNone(s.Claim)), e(s.Volume))
		line("  last:", "%s (last successful: %s)", timeOr(s.Last), timeOr(s.LastSuccessful))
		line("  next:", "%s", next)
	} else {
		line("Snapshots:", "off")
	}
}

// jsonToYAML writes the JSON text of a value as YAML, each string that
// holds a character printable.Escape escapes double-quoted (the emitter then
// escapes the controls itself, and printable.Quoted the rest), and never
// fails on one: sigs.k8s.io/yaml's reader refuses a raw C1 control.
func jsonToYAML(text []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(printable.Quoted(text), &doc); err != nil {
		return nil, err
	}
	var restyle func(n *yaml.Node)
	restyle = func(n *yaml.Node) {
		n.Style = 0
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && (!printable.Clean(n.Value) || !yaml11String(n.Value)) {
			n.Style = yaml.DoubleQuotedStyle
		}
		for _, c := range n.Content {
			restyle(c)
		}
	}
	restyle(&doc)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// yaml11String: a YAML 1.1 reader (sigs.k8s.io/yaml, kubectl) reads s,
// written plain, as that string: yaml.v3 writes YAML 1.2, where "no" and
// "on" are strings that 1.1 reads as booleans.
func yaml11String(s string) bool {
	var v any
	err := yaml2.Unmarshal([]byte(s), &v)
	plain, ok := v.(string)
	return err == nil && ok && plain == s
}

func orNone(s string) string { return cmp.Or(s, "(none)") }

func tz(zone string) string {
	if zone == "" {
		return " (UTC)"
	}
	return " (" + zone + ")"
}

func timeOr(t *metav1.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
