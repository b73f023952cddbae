// Package condition holds the facts the parts of a Monocle's answer share:
// what each says in its status (the condition types and reasons, the
// refusal of a spec field, FieldError, with the quoting and cutting that
// bound what a message shows; its components, and when an observed
// workload counts as ready), and what one part tells another (the API's
// Sessions).
package condition

import (
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/internal/command"
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

// MaxConditionMessage is half a condition message's maxLength (32,768).
const MaxConditionMessage = 16384

// FieldError names the spec field the hook cannot honour and why. Reason is
// the SpecApplied condition's: InvalidSpec (nothing of the spec is applied)
// or another (all but that field is).
type FieldError struct {
	Reason, Field, Message string
}

func (e *FieldError) Error() string {
	// Escaped before it is cut, so that the cut bounds what is shown.
	if e.Field == "" {
		return Cut(printable.Escape(e.Message), MaxMessage)
	}
	return Cut(printable.Escape("spec."+Cut(e.Field, MaxQuoted)+" "+e.Message), MaxMessage)
}

// A condition's message is at most 32,768 characters (its schema's
// maxLength, as metav1.Condition's): over it, the status write is refused
// and the status freezes. A user's value is quoted cut to MaxQuoted
// characters, and one error's message to MaxMessage, so that the few
// errors a condition joins stay far below the limit.
const (
	MaxQuoted  = 253
	MaxMessage = 2048
)

// Quote is a value a request chose, cut to MaxQuoted characters and
// quoted, escaped, by printable.Quote.
func Quote(s string) string { return printable.Quote(Cut(s, MaxQuoted)) }

// Cut keeps the first n characters of s, and says so with an ellipsis.
func Cut(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}

// Invalid is an InvalidSpec FieldError: nothing of the spec applies.
func Invalid(field, format string, args ...any) *FieldError {
	return &FieldError{ReasonInvalidSpec, field, fmt.Sprintf(format, args...)}
}

// TransitionTime keeps a condition's lastTransitionTime while its status is
// unchanged, so the status is the same from one sync to the next. (The CRD
// makes conditions a map by type: one of each.)
func TransitionTime(current []metav1.Condition, c metav1.Condition, now func() time.Time) metav1.Time {
	if old := meta.FindStatusCondition(current, c.Type); old != nil && old.Status == c.Status && !old.LastTransitionTime.IsZero() {
		return old.LastTransitionTime
	}
	return metav1.NewTime(now().UTC().Truncate(time.Second))
}

// StatefulSetReady: the controller has seen the latest spec, and every
// replica runs it and is ready.
func StatefulSetReady(s *appsv1.StatefulSet) bool {
	return s != nil && rolledOut(s.Generation, s.Status.ObservedGeneration, s.Spec.Replicas, s.Status.UpdatedReplicas, s.Status.ReadyReplicas)
}

// DeploymentReady: the rollout of the latest spec is complete and available.
func DeploymentReady(d *appsv1.Deployment) bool {
	return d != nil && rolledOut(d.Generation, d.Status.ObservedGeneration, d.Spec.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
}

// rolledOut: the controller has seen generation, and as many replicas as
// wanted (default 1) run it and are ready (or available).
func rolledOut(generation, observed int64, replicas *int32, updated, ready int32) bool {
	want := ptr.Deref(replicas, 1)
	return observed >= generation && updated >= want && ready >= want
}

// JobCondition: the Job has condition t, true.
func JobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == t && c.Status == corev1.ConditionTrue
	})
}

// Refused is the SpecApplied condition when the spec, or the config the
// pods would read, is refused (InvalidSpec, ConfigInvalid), else nil:
// render fails on it, and the invalid_spec error metric counts it.
func Refused(s v1alpha1.MonocleStatus) *metav1.Condition {
	c := meta.FindStatusCondition(s.Conditions, ConditionSpecApplied)
	if c == nil || (c.Reason != ReasonInvalidSpec && c.Reason != ReasonConfigInvalid) {
		return nil
	}
	return c
}

// Kubectl is a command of command.Forms for a message: kubectl in
// namespace (none: a Monocle read from a file, in kubectl's current one),
// then args, of which names are Kubernetes names. A value that is not what
// it claims is never printed into a command: the message says so instead.
func Kubectl(namespace string, names []string, args ...string) string {
	words, ok := command.Kubectl(namespace)
	if !ok {
		return "(no command: the namespace " + Quote(namespace) + " is not a DNS label)"
	}
	for _, n := range names {
		if !command.Name(n) {
			return "(no command: " + Quote(n) + " is not a Kubernetes name)"
		}
	}
	return command.Line(append(words, args...)...)
}
