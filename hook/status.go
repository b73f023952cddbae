package hook

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"

	"github.com/change-metrics/monocle-hook/internal/instance"
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

const (
	stateReady      = "Ready"
	stateInProgress = "In Progress"
)

// statusInput is what the status needs beyond the observed children.
type statusInput struct {
	url      string
	external bool // Elasticsearch is external: none to wait for
	crawler  bool // the crawler is enabled
	// retaining, when not "", is why the StatefulSet is kept until its
	// volumes are set to Retain and released.
	retaining string
	// recreating: the StatefulSet goes, to come back with the snapshot volume.
	recreating bool
	storage    *v1alpha1.StorageStatus
	specErrors []*fieldError
	notes      []string // on values applied but unwise
	// The update-idents Job of the current idents, if observed, and its name
	// ("" when the idents are unknown).
	configError *fieldError
	job         *batchv1.Job
	jobName     string
	// snapshotsOff, when not "", is why no snapshot CronJob is judged
	// (SnapshotsOff, SnapshotsNeedManagedElasticsearch, SpecNotApplied);
	// snapshotsClaim names the snapshot volume when the StatefulSet has one.
	snapshotsOff, snapshotsOffMessage string
	snapshotsClaim                    string
	claims                            map[string]*corev1.PersistentVolumeClaim
}

// makeStatus is computed from observed children only; time enters only as
// a condition's lastTransitionTime, and only when its status changes.
func makeStatus(parent *Parent, n instance.Names, obs Children, now func() time.Time, in statusInput) v1alpha1.MonocleStatus {
	st := v1alpha1.MonocleStatus{URL: in.url, Storage: in.storage}
	var waiting []string
	component := func(name string, ready, enabled bool, off string) string {
		switch {
		case !enabled:
			return off
		case ready:
			return stateReady
		}
		waiting = append(waiting, name)
		return stateInProgress
	}
	sts, api := obs.StatefulSets[n.Elastic], obs.Deployments[n.API]
	st.Elastic = component("elastic", statefulSetReady(sts), !in.external, "External")
	st.API = component("api", deploymentReady(api), true, "")
	st.Crawler = component("crawler", deploymentReady(obs.Deployments[n.Crawler]), in.crawler, "Disabled")
	if v := (v1alpha1.Versions{Monocle: runningImage(api), Elasticsearch: runningImage(sts)}); v != (v1alpha1.Versions{}) {
		st.Versions = &v
	}

	conds := []metav1.Condition{
		{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: "AllComponentsReady", Message: "every component is ready"},
		{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: "RolloutComplete", Message: "every component runs its latest template"},
		{Type: ConditionSpecApplied, Status: metav1.ConditionTrue, Reason: "Applied", Message: "every spec field is in effect"},
		identsCondition(in),
	}
	if len(waiting) > 0 {
		msg := "waiting for " + strings.Join(waiting, ", ")
		conds[0] = metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: "ComponentsNotReady", Message: msg}
		conds[1] = metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: "RollingOut", Message: msg}
	}
	switch {
	case in.retaining != "":
		what := "removed"
		if in.recreating {
			what = "made anew with the snapshot volume"
		}
		conds[1] = metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: "RetainingVolume",
			Message: "setting Elasticsearch's volumes to Retain before its StatefulSet is " + what + ": " + in.retaining}
	case in.recreating:
		conds[1] = metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: "RecreatingStatefulSet",
			Message: "Elasticsearch's StatefulSet " + n.Elastic + " is made anew with the snapshot volume (volumeClaimTemplates cannot change in place): " +
				"its volumes are retained and " + n.DataClaim() + " is mounted again"}
	}
	if len(in.notes) > 0 {
		conds[2].Message += "; note: " + strings.Join(in.notes, "; ")
	}
	if len(in.specErrors) > 0 {
		msgs := make([]string, len(in.specErrors))
		for i, e := range in.specErrors {
			msgs[i] = e.Error()
		}
		conds[2] = metav1.Condition{Type: ConditionSpecApplied, Status: metav1.ConditionFalse, Reason: in.specErrors[0].reason, Message: strings.Join(msgs, "; ")}
	}

	cj := obs.CronJobs[n.Snapshots]
	off := in.snapshotsOff
	if off == reasonSpecNotApplied && cj != nil {
		off = "" // the CronJob runs, whatever the spec: judged
	}
	if off == "" || cj != nil || in.snapshotsClaim != "" {
		// The volume stays, with its snapshots, when they are turned off.
		st.Snapshots = snapshotsStatus(in.snapshotsClaim, in.claims[in.snapshotsClaim], cj)
	}
	conds = append(conds, snapshotsCondition(parent.Metadata.Namespace, cj, now(), off, in.snapshotsOffMessage))

	gen := parent.Metadata.Generation
	for i := range conds {
		// Whatever a message joins, its status stays writable.
		conds[i].Message = cut(conds[i].Message, maxConditionMessage)
		conds[i].ObservedGeneration = gen
		conds[i].LastTransitionTime = transitionTime(parent.Status.Conditions, conds[i], now)
	}
	st.Conditions = conds
	return st
}

// runningImage is a workload's image once its rollout is complete.
func runningImage(w any) string {
	var containers []corev1.Container
	switch o := w.(type) {
	case *appsv1.Deployment:
		if !deploymentReady(o) {
			return ""
		}
		containers = o.Spec.Template.Spec.Containers
	case *appsv1.StatefulSet:
		if !statefulSetReady(o) {
			return ""
		}
		containers = o.Spec.Template.Spec.Containers
	}
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

func identsCondition(in statusInput) metav1.Condition {
	c := metav1.Condition{Type: ConditionIdentsUpdated}
	switch {
	case in.configError != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, in.configError.reason, in.configError.Error()
	case in.jobName == "":
		// The spec is invalid: nothing was judged.
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "SpecNotApplied", "the spec is not applied"
	case in.job == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "WaitingForAPI", "Job "+in.jobName+" starts once the API runs this config and is ready (it creates the indices the Job updates)"
	case jobCondition(in.job, batchv1.JobComplete):
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "JobComplete", "Job "+in.jobName+" completed"
	case jobCondition(in.job, batchv1.JobFailed):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "JobFailed", "Job "+in.jobName+" failed; it runs again when the idents change or when it is deleted"
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "JobRunning", "Job "+in.jobName+" is running"
	}
	return c
}

// transitionTime keeps a condition's lastTransitionTime while its status is
// unchanged, so the status is the same from one sync to the next.
func transitionTime(current []metav1.Condition, c metav1.Condition, now func() time.Time) metav1.Time {
	for _, old := range current {
		if old.Type == c.Type && old.Status == c.Status && !old.LastTransitionTime.IsZero() {
			return old.LastTransitionTime
		}
	}
	return metav1.NewTime(now().UTC().Truncate(time.Second))
}

// statefulSetReady: the controller has seen the latest spec, and every
// replica runs it and is ready.
func statefulSetReady(s *appsv1.StatefulSet) bool {
	if s == nil {
		return false
	}
	want := replicas(s.Spec.Replicas)
	return s.Status.ObservedGeneration >= s.Generation &&
		s.Status.UpdatedReplicas >= want && s.Status.ReadyReplicas >= want
}

// deploymentReady: the rollout of the latest spec is complete and available.
func deploymentReady(d *appsv1.Deployment) bool {
	if d == nil {
		return false
	}
	want := replicas(d.Spec.Replicas)
	return d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas >= want && d.Status.AvailableReplicas >= want
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
