package hook

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/hook/pods"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/restorerecord"
)

// statusFacts is what the parts of an answer learned that the observed
// children do not say: Elasticsearch's (hook/elastic), the pods' (hook/pods),
// and what the spec itself could not apply or applied with a note.
type statusFacts struct {
	elastic elastic.Facts
	pods    pods.Facts
	errors  []*condition.FieldError
	notes   []string
	// accessNotes are the API's access part's, said after the pods'.
	accessNotes []string
	// invalid, when not nil, holds every child as last applied
	// (InvalidSpec).
	invalid *condition.FieldError
}

// makeStatus is computed from the observed children and the facts of the
// answer's parts; time enters only as a condition's lastTransitionTime, and
// only when its status changes.
func makeStatus(parent *wire.Parent, n instance.Names, obs wire.Children, now func() time.Time, facts statusFacts) v1alpha1.MonocleStatus {
	es, pf := facts.elastic, facts.pods
	st := v1alpha1.MonocleStatus{URL: pf.URL, Storage: es.Storage}
	var w waiting
	st.Elastic = w.column(es.Component, facts.invalid)
	st.API = w.column(pf.API, facts.invalid)
	st.Crawler = w.column(pf.Crawler, facts.invalid)
	st.Versions = versions(parent.Status.Versions, pf.API, es.Component)
	ready, progressing := readyConditions(n, es, w)
	ready = restoring(parent, ready)
	conds := []metav1.Condition{ready, progressing, specAppliedCondition(facts), pods.IdentsUpdated(pf)}

	var snapshots metav1.Condition
	st.Snapshots, snapshots = elastic.Snapshots(parent.Metadata.Namespace, n, es, obs, now())
	conds = append(conds, snapshots)

	gen := parent.Metadata.Generation
	for i := range conds {
		// Whatever a message joins, its status stays writable; and
		// whatever a value it quotes holds, a terminal shows it as text
		// (each part is escaped where it is made: this is the last guard).
		conds[i].Message = condition.Cut(printable.Escape(conds[i].Message), condition.MaxConditionMessage)
		conds[i].ObservedGeneration = gen
		conds[i].LastTransitionTime = condition.TransitionTime(parent.Status.Conditions, conds[i], now)
	}
	st.Conditions = conds
	return st
}

// waiting are the enabled components not ready, rolling out; and those a
// refusal of the spec holds as they run ("api held") or does not make
// ("api not made"), whether ready or not, the refusals of those not ready
// in blocks: these wait for their writer, not for Kubernetes.
type waiting struct {
	rolling, held, heldNotReady []string
	blocks                      []*condition.FieldError
}

// column is a component's column in the status, and what it waits for
// in w. A component is held exactly when its part answers it as it runs
// (or does not make it): its Block is the refusal that does so; with an
// invalid spec, every component is held.
func (w *waiting) column(c condition.Component, invalid *condition.FieldError) string {
	if c.Off != "" {
		return c.Off
	}
	if invalid != nil {
		c.Block = invalid
	}
	if c.Block != nil {
		what := c.Name + " held"
		if !c.Observed {
			what = c.Name + " not made"
		}
		w.held = append(w.held, what)
		if !c.Ready {
			w.heldNotReady, w.blocks = append(w.heldNotReady, what), append(w.blocks, c.Block)
		}
	} else if !c.Ready {
		w.rolling = append(w.rolling, c.Name)
	}
	if c.Ready {
		return "Ready"
	}
	return "In Progress"
}

// versions are the images the status says run. A workload's image is said
// once its rollout is complete; while one rolls out, the image of its last
// complete rollout stays (its old pods serve it), so that the IMAGE column
// is not blank in a rollout.
func versions(last *v1alpha1.Versions, api, elastic condition.Component) *v1alpha1.Versions {
	var v v1alpha1.Versions
	if last != nil {
		v = *last
	}
	v.Monocle = version(v.Monocle, api)
	v.Elasticsearch = version(v.Elasticsearch, elastic)
	if v == (v1alpha1.Versions{}) {
		return nil
	}
	return &v
}

// readyConditions are Ready and Progressing: the components waited for,
// those held, and what Elasticsearch's part says its StatefulSet is on its
// way to.
// A component held by a refusal, not ready, makes Ready the refusal
// (SpecApplied's reason and message), and is not rolling out.
func readyConditions(n instance.Names, es elastic.Facts, w waiting) (ready, progressing metav1.Condition) {
	ready = metav1.Condition{Type: condition.ConditionReady, Status: metav1.ConditionTrue, Reason: condition.ReasonAllComponentsReady, Message: "every component is ready"}
	progressing = metav1.Condition{Type: condition.ConditionProgressing, Status: metav1.ConditionFalse, Reason: condition.ReasonRolloutComplete, Message: "every component runs its latest template"}
	rolling := "waiting for " + strings.Join(w.rolling, ", ")
	if len(w.rolling) > 0 {
		ready = metav1.Condition{Type: condition.ConditionReady, Status: metav1.ConditionFalse, Reason: condition.ReasonComponentsNotReady, Message: rolling}
		progressing = metav1.Condition{Type: condition.ConditionProgressing, Status: metav1.ConditionTrue, Reason: condition.ReasonRollingOut, Message: rolling}
	}
	if len(w.held) > 0 {
		held := strings.Join(w.held, ", ") + " until the spec is applied (SpecApplied)"
		if len(w.rolling) > 0 {
			progressing.Message += "; " + held
		} else {
			progressing = metav1.Condition{Type: condition.ConditionProgressing, Status: metav1.ConditionFalse, Reason: condition.ReasonSpecNotApplied, Message: held}
		}
	}
	if len(w.heldNotReady) > 0 {
		// The cause first: what its writer must do.
		msg := strings.Join(w.heldNotReady, ", ") + ": " + w.blocks[0].Error()
		if len(w.rolling) > 0 {
			msg += "; " + rolling
		}
		ready = metav1.Condition{Type: condition.ConditionReady, Status: metav1.ConditionFalse, Reason: w.blocks[0].Reason, Message: msg}
	}
	if p, ok := es.Progressing(n); ok {
		progressing = p
	}
	return ready, progressing
}

// restoring is Ready while kubectl monocle restore's record is on the
// Monocle: False, at the restore's step, for the API is stopped (or about
// to be) and the UI down. Anyone who may edit the Monocle may write the
// annotation: a record is taken only as restorerecord.Decode takes it and
// for this Monocle's UID; one that is not is said in a note, and changes
// nothing else. A forged one can only mark its own Monocle not ready.
func restoring(parent *wire.Parent, ready metav1.Condition) metav1.Condition {
	raw, ok := parent.Metadata.Annotations[restorerecord.Annotation]
	if !ok {
		return ready
	}
	// The note quotes nothing of the record: what a tenant wrote could
	// read as a command.
	note := "; note: annotation " + restorerecord.Annotation + " is ignored: "
	r, err := restorerecord.Decode(raw)
	switch {
	case err != nil:
		ready.Message += note + fmt.Sprintf("its %d bytes are not a record as a restore writes it", len(raw))
		return ready
	case r.MonocleUID != string(parent.Metadata.UID):
		ready.Message += note + "it is the record of another Monocle's restore (another UID)"
		return ready
	}
	msg := "a restore of snapshot " + condition.Quote(r.Snapshot) + " of repository " + condition.Quote(r.Repository) + " is under way, at step " + string(r.Step) + ": " + restoreSteps[r.Step]
	if ready.Status != metav1.ConditionTrue {
		msg += "; " + ready.Message
	}
	return metav1.Condition{Type: condition.ConditionReady, Status: metav1.ConditionFalse, Reason: condition.ReasonRestoring, Message: msg}
}

// restoreSteps say what each step of a restore does to the Monocle.
var restoreSteps = map[restorerecord.Step]string{
	restorerecord.Stopping:       "the API and the crawler are being stopped",
	restorerecord.Restoring:      "the restore Job runs, the API and the crawler are stopped",
	restorerecord.UpdatingIdents: "the snapshot is restored, update-idents re-attributes its changes to the config's idents, the API and the crawler are stopped",
	restorerecord.PuttingBack:    "the restore has ended, the spec's values are being put back",
}

// specAppliedCondition names every spec field not in effect, or notes what
// is applied but unwise.
func specAppliedCondition(facts statusFacts) metav1.Condition {
	errs := slices.Concat(facts.errors, facts.elastic.Errors, facts.pods.Errors)
	// The first error gives the reason: a refused config, which holds the
	// pods, comes first.
	if facts.pods.ConfigError != nil {
		errs = slices.Insert(errs, 0, facts.pods.ConfigError)
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return metav1.Condition{Type: condition.ConditionSpecApplied, Status: metav1.ConditionFalse, Reason: errs[0].Reason, Message: strings.Join(msgs, "; ")}
	}
	c := metav1.Condition{Type: condition.ConditionSpecApplied, Status: metav1.ConditionTrue, Reason: condition.ReasonApplied, Message: "every spec field is in effect"}
	if notes := slices.Concat(facts.notes, facts.pods.Notes, facts.accessNotes); len(notes) > 0 {
		c.Message += "; note: " + strings.Join(notes, "; ")
	}
	return c
}

// version is the image a component's status says it runs: its image once
// its rollout is complete, none once it is gone, else the last one said.
func version(last string, c condition.Component) string {
	switch {
	case c.Ready:
		return c.Image
	case !c.Observed:
		return ""
	}
	return last
}
