package hook

import (
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// Condition types of a Monocle.
const (
	// ConditionReady: Elasticsearch, the API and the crawler are all ready.
	ConditionReady = "Ready"
	// ConditionProgressing: a component is being created or rolled out.
	ConditionProgressing = "Progressing"
	// ConditionSpecApplied: every spec field is in effect. False names the
	// field the hook cannot honour.
	ConditionSpecApplied = "SpecApplied"
	// ConditionIdentsUpdated: update-idents ran for the current idents.
	ConditionIdentsUpdated = "IdentsUpdated"
	// ConditionSnapshotsHealthy: a snapshot run has succeeded since the
	// second-to-last time scheduled. Unknown when there are none to judge.
	ConditionSnapshotsHealthy = "SnapshotsHealthy"
)

// Reasons of a SpecApplied=False condition. InvalidSpec holds every child
// as it was last applied; the others hold only what they concern and apply
// the rest of the spec (the README has the table).
const (
	// ReasonInvalidSpec: the spec does not decode or check.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonConfigInvalid: Monocle would refuse the config at start.
	ReasonConfigInvalid = "ConfigInvalid"
	// ReasonReferenceNotFound: a ConfigMap or Secret the spec names is missing.
	ReasonReferenceNotFound = "ReferenceNotFound"
	// ReasonInvalidElasticsearchURL: the URL in urlSecretRef is not http://.
	ReasonInvalidElasticsearchURL = "InvalidElasticsearchURL"
	// Elasticsearch's volume: to grow by hand, or a change it cannot take.
	ReasonVolumeExpansionRequired = "VolumeExpansionRequired"
	ReasonStorageShrinkRefused    = "StorageShrinkRefused"
	ReasonImmutableField          = "ImmutableField"
	// ReasonSnapshotsNeedManagedElasticsearch: snapshots are asked of an
	// external Elasticsearch; the rest applies.
	ReasonSnapshotsNeedManagedElasticsearch = "SnapshotsNeedManagedElasticsearch"
)

// Reasons of an Unknown SnapshotsHealthy for which there is nothing to judge.
const (
	reasonSnapshotsOff   = "SnapshotsOff"
	reasonSpecNotApplied = "SpecNotApplied"
)

// maxConditionMessage is half a condition message's maxLength (32,768).
const maxConditionMessage = 16384

// statusFacts is what the parts of an answer learned that the observed
// children do not say: Elasticsearch's (elastic.go), the pods' (pods.go),
// and what the spec itself could not apply or applied with a note.
type statusFacts struct {
	elastic elasticFacts
	pods    podFacts
	errors  []*fieldError
	notes   []string
}

// makeStatus is computed from the observed children and the facts of the
// answer's parts; time enters only as a condition's lastTransitionTime, and
// only when its status changes.
func makeStatus(parent *wire.Parent, n instance.Names, obs wire.Children, now func() time.Time, facts statusFacts) v1alpha1.MonocleStatus {
	es, pods := facts.elastic, facts.pods
	st := v1alpha1.MonocleStatus{URL: pods.url, Storage: es.storage}
	var waiting []string
	component := func(name string, ready, enabled bool, off string) string {
		switch {
		case !enabled:
			return off
		case ready:
			return "Ready"
		}
		waiting = append(waiting, name)
		return "In Progress"
	}
	sts, api := obs.StatefulSets[n.Elastic], obs.Deployments[n.API]
	st.Elastic = component("elastic", statefulSetReady(sts), !es.external, "External")
	st.API = component("api", deploymentReady(api), true, "")
	st.Crawler = component("crawler", deploymentReady(obs.Deployments[n.Crawler]), pods.crawler, "Disabled")
	// A workload's image is said once its rollout is complete.
	var v v1alpha1.Versions
	if deploymentReady(api) {
		v.Monocle = firstImage(api.Spec.Template.Spec.Containers)
	}
	if statefulSetReady(sts) {
		v.Elasticsearch = firstImage(sts.Spec.Template.Spec.Containers)
	}
	if v != (v1alpha1.Versions{}) {
		st.Versions = &v
	}
	ready, progressing := readyConditions(n, es, waiting)
	conds := []metav1.Condition{ready, progressing, specAppliedCondition(facts), identsCondition(pods)}

	cj := obs.CronJobs[n.Snapshots]
	off := es.snapshotsOff
	if off == reasonSpecNotApplied && cj != nil {
		off = "" // the CronJob runs, whatever the spec: judged
	}
	if off == "" || cj != nil || es.snapshotsClaim != "" {
		// The volume stays, with its snapshots, when they are turned off.
		st.Snapshots = snapshotsStatus(es.snapshotsClaim, es.claims[es.snapshotsClaim], cj)
	}
	conds = append(conds, snapshotsCondition(parent.Metadata.Namespace, cj, now(), off, es.snapshotsOffMessage))

	gen := parent.Metadata.Generation
	for i := range conds {
		// Whatever a message joins, its status stays writable; and
		// whatever a value it quotes holds, a terminal shows it as text
		// (each part is escaped where it is made: this is the last guard).
		conds[i].Message = cut(printable.Escape(conds[i].Message), maxConditionMessage)
		conds[i].ObservedGeneration = gen
		conds[i].LastTransitionTime = transitionTime(parent.Status.Conditions, conds[i], now)
	}
	st.Conditions = conds
	return st
}

// readyConditions are Ready and Progressing: the components waited for,
// and Elasticsearch's StatefulSet on its way to be recreated.
func readyConditions(n instance.Names, es elasticFacts, waiting []string) (ready, progressing metav1.Condition) {
	ready = metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: "AllComponentsReady", Message: "every component is ready"}
	progressing = metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: "RolloutComplete", Message: "every component runs its latest template"}
	if len(waiting) > 0 {
		msg := "waiting for " + strings.Join(waiting, ", ")
		ready = metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: "ComponentsNotReady", Message: msg}
		progressing = metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: "RollingOut", Message: msg}
	}
	switch {
	case es.retaining != "":
		what := "removed"
		if es.recreating {
			what = "made anew with the snapshot volume"
		}
		progressing = metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: "RetainingVolume",
			Message: "setting Elasticsearch's volumes to Retain before its StatefulSet is " + what + ": " + es.retaining}
	case es.recreating:
		progressing = metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: "RecreatingStatefulSet",
			Message: "Elasticsearch's StatefulSet " + n.Elastic + " is made anew with the snapshot volume (volumeClaimTemplates cannot change in place): " +
				"its volumes are retained and " + n.DataClaim() + " is mounted again"}
	}
	return ready, progressing
}

// specAppliedCondition names every spec field not in effect, or notes what
// is applied but unwise.
func specAppliedCondition(facts statusFacts) metav1.Condition {
	errs := slices.Concat(facts.errors, facts.elastic.errors, facts.pods.errors)
	// The first error gives the reason: a refused config, which holds the
	// pods, comes first.
	if facts.pods.configError != nil {
		errs = slices.Insert(errs, 0, facts.pods.configError)
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return metav1.Condition{Type: ConditionSpecApplied, Status: metav1.ConditionFalse, Reason: errs[0].reason, Message: strings.Join(msgs, "; ")}
	}
	c := metav1.Condition{Type: ConditionSpecApplied, Status: metav1.ConditionTrue, Reason: "Applied", Message: "every spec field is in effect"}
	if notes := append(slices.Clip(facts.notes), facts.pods.notes...); len(notes) > 0 {
		c.Message += "; note: " + strings.Join(notes, "; ")
	}
	return c
}

// firstImage is the image of a pod's first container.
func firstImage(containers []corev1.Container) string {
	if len(containers) == 0 {
		return ""
	}
	return containers[0].Image
}

// refused is the SpecApplied condition when the spec, or the config the
// pods would read, is refused (InvalidSpec, ConfigInvalid), else nil:
// render fails on it, and the invalid_spec error metric counts it.
func refused(s v1alpha1.MonocleStatus) *metav1.Condition {
	c := meta.FindStatusCondition(s.Conditions, ConditionSpecApplied)
	if c == nil || (c.Reason != ReasonInvalidSpec && c.Reason != ReasonConfigInvalid) {
		return nil
	}
	return c
}

func identsCondition(pods podFacts) metav1.Condition {
	c := metav1.Condition{Type: ConditionIdentsUpdated}
	switch {
	case pods.configError != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, pods.configError.reason, pods.configError.Error()
	case pods.jobName == "":
		// The spec is invalid: nothing was judged.
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, reasonSpecNotApplied, "the spec is not applied"
	case pods.job == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "WaitingForAPI", "Job "+pods.jobName+" starts once the API runs this config and is ready (it creates the indices the Job updates)"
	case jobCondition(pods.job, batchv1.JobComplete):
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "JobComplete", "Job "+pods.jobName+" completed"
	case jobCondition(pods.job, batchv1.JobFailed):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "JobFailed", "Job "+pods.jobName+" failed; it runs again when the idents change or when it is deleted"
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "JobRunning", "Job "+pods.jobName+" is running"
	}
	return c
}

// transitionTime keeps a condition's lastTransitionTime while its status is
// unchanged, so the status is the same from one sync to the next. (The CRD
// makes conditions a map by type: one of each.)
func transitionTime(current []metav1.Condition, c metav1.Condition, now func() time.Time) metav1.Time {
	if old := meta.FindStatusCondition(current, c.Type); old != nil && old.Status == c.Status && !old.LastTransitionTime.IsZero() {
		return old.LastTransitionTime
	}
	return metav1.NewTime(now().UTC().Truncate(time.Second))
}

// statefulSetReady: the controller has seen the latest spec, and every
// replica runs it and is ready.
func statefulSetReady(s *appsv1.StatefulSet) bool {
	return s != nil && rolledOut(s.Generation, s.Status.ObservedGeneration, s.Spec.Replicas, s.Status.UpdatedReplicas, s.Status.ReadyReplicas)
}

// deploymentReady: the rollout of the latest spec is complete and available.
func deploymentReady(d *appsv1.Deployment) bool {
	return d != nil && rolledOut(d.Generation, d.Status.ObservedGeneration, d.Spec.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
}

// rolledOut: the controller has seen generation, and as many replicas as
// wanted (default 1) run it and are ready (or available).
func rolledOut(generation, observed int64, replicas *int32, updated, ready int32) bool {
	want := ptr.Deref(replicas, 1)
	return observed >= generation && updated >= want && ready >= want
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == t && c.Status == corev1.ConditionTrue
	})
}
