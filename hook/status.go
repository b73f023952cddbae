package hook

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
)

const (
	stateReady      = "Ready"
	stateInProgress = "In Progress"
)

// statusInput is what the status needs beyond the observed children.
type statusInput struct {
	url         string
	specError   *fieldError
	configError error
	job         *batchv1.Job // the update-idents Job of the current idents, if observed
	jobName     string
}

// makeStatus is computed from observed children only; time enters only as
// a condition's lastTransitionTime, and only when its status changes.
func makeStatus(parent *Parent, n names, obs observed, now func() time.Time, in statusInput) Status {
	elastic := statefulSetReady(obs.statefulSets[n.elastic])
	api := deploymentReady(obs.deployments[n.api])
	crawler := deploymentReady(obs.deployments[n.crawler])

	var waiting []string
	for _, c := range []struct {
		name  string
		ready bool
	}{{"elastic", elastic}, {"api", api}, {"crawler", crawler}} {
		if !c.ready {
			waiting = append(waiting, c.name)
		}
	}

	conds := []metav1.Condition{
		{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: "AllComponentsReady", Message: "Elasticsearch, the API and the crawler are ready"},
		{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: "RolloutComplete", Message: "every component runs its latest template"},
		{Type: ConditionSpecApplied, Status: metav1.ConditionTrue, Reason: "Applied", Message: "every spec field is in effect"},
		identsCondition(in),
	}
	if len(waiting) > 0 {
		msg := "waiting for " + strings.Join(waiting, ", ")
		conds[0] = metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: "ComponentsNotReady", Message: msg}
		conds[1] = metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: "RollingOut", Message: msg}
	}
	if e := in.specError; e != nil {
		conds[2] = metav1.Condition{Type: ConditionSpecApplied, Status: metav1.ConditionFalse, Reason: e.reason, Message: e.Error()}
	}

	gen := parent.Metadata.Generation
	for i := range conds {
		conds[i].ObservedGeneration = gen
		conds[i].LastTransitionTime = transitionTime(parent.Status.Conditions, conds[i], now)
	}
	return Status{
		Elastic:    state(elastic),
		API:        state(api),
		Crawler:    state(crawler),
		URL:        in.url,
		Conditions: conds,
	}
}

// Condition returns the condition of type t, or an empty one.
func (s Status) Condition(t string) metav1.Condition {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

func identsCondition(in statusInput) metav1.Condition {
	c := metav1.Condition{Type: ConditionIdentsUpdated}
	switch {
	case in.configError != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "ConfigInvalid", in.configError.Error()
	case in.jobName == "":
		// The spec is invalid: nothing was judged.
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "SpecNotApplied", "the spec is not applied"
	case in.job == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "WaitingForElasticsearch", "Job "+in.jobName+" starts once Elasticsearch is ready"
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

func state(ready bool) string {
	if ready {
		return stateReady
	}
	return stateInProgress
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
