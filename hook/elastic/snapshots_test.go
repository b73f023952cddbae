package elastic

import (
	"testing"
	"time"
)

// lastScheduled finds what a walk over every firing finds, for regular,
// irregular and sparse schedules, in a few dozen calls of Next.
func TestLastScheduled(t *testing.T) {
	nows := []time.Time{time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 2, 29, 0, 0, 30, 0, time.UTC)}
	// Each with a look-back that holds two of its firings, for the walk.
	schedules := map[string]time.Duration{
		"0 3 * * *": 72 * time.Hour, "* * * * *": time.Hour, "30 6-16/4 * * 1-5": 7 * 24 * time.Hour,
		"0 0 1,15 * *": 62 * 24 * time.Hour, "0 0 29 2 *": 9 * 366 * 24 * time.Hour, "@hourly": 3 * time.Hour,
		"@monthly": 62 * 24 * time.Hour, "5 4 * * SUN": 15 * 24 * time.Hour, "0 12 * JUN *": 2 * 366 * 24 * time.Hour,
	}
	for schedule, lookBack := range schedules {
		for _, now := range nows {
			sched, err := scheduleIn(schedule, "")
			if err != nil {
				t.Fatal(err)
			}
			counting := &countingSchedule{sched: sched}
			got := secondToLastScheduled(counting, now)
			// The walk: every firing up to now.
			var last, before time.Time
			for f := sched.Next(now.Add(-lookBack)); !f.IsZero() && !f.After(now); f = sched.Next(f) {
				last, before = f, last
			}
			if !got.Equal(before) {
				t.Errorf("%q at %s: %s, want %s", schedule, now, got, before)
			}
			if counting.calls > 120 {
				t.Errorf("%q: %d calls of Next", schedule, counting.calls)
			}
		}
	}
}

type countingSchedule struct {
	sched interface{ Next(time.Time) time.Time }
	calls int
}

func (c *countingSchedule) Next(t time.Time) time.Time {
	c.calls++
	return c.sched.Next(t)
}
