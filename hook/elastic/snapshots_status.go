package elastic

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// The SnapshotsHealthy condition and the snapshots' status, from the
// snapshot CronJob observed and its schedule.

// Snapshots are the snapshots' status (nil when there is nothing to say)
// and the SnapshotsHealthy condition, from Elasticsearch's facts and the
// CronJob observed.
func Snapshots(namespace string, n instance.Names, facts Facts, obs wire.Children, now time.Time) (*v1alpha1.SnapshotsStatus, metav1.Condition) {
	cj := obs.CronJobs[n.Snapshots]
	off := facts.snapshotsOff
	if off == condition.ReasonSpecNotApplied && cj != nil {
		off = "" // the CronJob runs, whatever the spec: judged
	}
	var st *v1alpha1.SnapshotsStatus
	if off == "" || cj != nil || facts.snapshotsClaim != "" {
		// The volume stays, with its snapshots, when they are turned off.
		st = snapshotsStatus(facts.snapshotsClaim, facts.claims[facts.snapshotsClaim], cj)
	}
	return st, snapshotsCondition(namespace, cj, now, off, facts.snapshotsOffMessage)
}

// snapshotsStatus reports the snapshot volume and the CronJob's last runs.
func snapshotsStatus(claimName string, claim *corev1.PersistentVolumeClaim, cj *batchv1.CronJob) *v1alpha1.SnapshotsStatus {
	st := &v1alpha1.SnapshotsStatus{Claim: claimName, Capacity: capacity(claim)}
	if cj != nil {
		st.LastScheduleTime = cj.Status.LastScheduleTime
		st.LastSuccessfulTime = cj.Status.LastSuccessfulTime
	}
	if *st == (v1alpha1.SnapshotsStatus{}) {
		return nil
	}
	return st
}

// snapshotsCondition judges the snapshot CronJob observed, by its own
// schedule: healthy when a run has succeeded since the second-to-last time
// scheduled before now (the run of the last time scheduled may still be
// running). off, when not "", is why there are no snapshots to judge.
func snapshotsCondition(namespace string, cj *batchv1.CronJob, now time.Time, off, offMessage string) metav1.Condition {
	c := metav1.Condition{Type: condition.ConditionSnapshotsHealthy, Status: metav1.ConditionUnknown}
	switch {
	case off != "":
		c.Reason, c.Message = off, offMessage
		return c
	case cj == nil:
		c.Reason, c.Message = condition.ReasonCronJobPending, "the snapshot CronJob is not there yet: it comes with Elasticsearch's snapshot volume"
		return c
	case ptr.Deref(cj.Spec.Suspend, false):
		c.Reason, c.Message = condition.ReasonSuspended, "snapshots are suspended (spec.elasticsearch.snapshots.suspend)"
		return c
	}
	sched, err := scheduleIn(cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil {
		c.Reason, c.Message = condition.ReasonScheduleUnreadable, fmt.Sprintf("CronJob %s's schedule %s: %v", cj.Name, condition.Quote(cj.Spec.Schedule), err)
		return c
	}
	success := ptr.Deref(cj.Status.LastSuccessfulTime, metav1.Time{}).Time
	lastRun := lastRunNote(namespace, cj, success)
	due := secondToLastScheduled(sched, now)
	switch {
	case !success.IsZero() && !success.Before(due):
		c.Status, c.Reason = metav1.ConditionTrue, condition.ReasonSnapshotSucceeded
		c.Message = "the last snapshot succeeded at " + formatTime(success) + lastRun
	case due.IsZero() || cj.CreationTimestamp.Time.After(due):
		// Too young to have missed a run.
		c.Reason, c.Message = condition.ReasonNoRunDueYet, "no snapshot run is due yet"+lastRun
	default:
		c.Status, c.Reason = metav1.ConditionFalse, condition.ReasonNoRecentSnapshot
		last := "never"
		if !success.IsZero() {
			last = formatTime(success)
		}
		// A cron schedule's second-to-last time moves once a period; an
		// "@every" one's is computed from the clock, and would move the
		// status on every sync: it is said as a span, never as a time.
		since := "since " + formatTime(due) + ", the second-to-last time scheduled"
		if _, ok := sched.(cron.ConstantDelaySchedule); ok {
			since = "in the last two periods of " + condition.Quote(cj.Spec.Schedule)
		}
		c.Message = fmt.Sprintf("no snapshot succeeded %s (last success: %s)%s", since, last, lastRun)
	}
	return c
}

// lastRunNote names the last run when it ended without success: the
// CronJob records only successes, so a run scheduled after the last
// success with none active is one that failed (or was deleted).
func lastRunNote(namespace string, cj *batchv1.CronJob, success time.Time) string {
	sched := cj.Status.LastScheduleTime
	if sched == nil || len(cj.Status.Active) > 0 || (!success.IsZero() && success.After(sched.Time)) {
		return ""
	}
	job := snapshotJobName(cj.Name, sched.Time)
	return fmt.Sprintf("; the run scheduled at %s did not succeed: %s", formatTime(sched.Time), condition.Kubectl(namespace, []string{job}, "logs", "job/"+job))
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// secondToLastScheduled is the second-to-last time the schedule fired at
// or before now; zero when it did not fire twice in the five years before.
// For "@every D", whose times count from when the controller first ran the
// CronJob, it is now-2D: no later than the real one.
func secondToLastScheduled(sched cron.Schedule, now time.Time) time.Time {
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		return now.Add(-every.Delay).Add(-every.Delay) // 2*Delay may overflow
	}
	last := lastScheduled(sched, now)
	if last.IsZero() {
		return last
	}
	return lastScheduled(sched, last.Add(-time.Nanosecond))
}

// lastScheduled is the latest time the schedule fires at or before t, or
// zero when it does not in the five years before. robfig/cron only walks
// forward (Next), so: widen a window back from t until it holds a firing,
// then bisect it (Next(a) <= t exactly when a is before that firing): about
// fifty calls of Next whatever the schedule, never a walk over every
// firing since some origin.
func lastScheduled(sched cron.Schedule, t time.Time) time.Time {
	firesBy := func(a time.Time) bool {
		next := sched.Next(a)
		return !next.IsZero() && !next.After(t)
	}
	const limit = 5 * 365 * 24 * time.Hour
	w := time.Minute
	for !firesBy(t.Add(-w)) {
		if w == limit {
			return time.Time{}
		}
		w = min(2*w, limit)
	}
	lo, hi := t.Add(-w), t // firesBy(lo), and never firesBy(t)
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if firesBy(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return sched.Next(lo)
}
