package elastic

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// securityEnv is the setting that makes Elasticsearch require the
// credentials of its file realm (users.go): makeStatefulSet sets it
// "true". A StatefulSet made by a release before 0.2.0 has it "false".
const securityEnv = "xpack.security.enabled"

// secured: the StatefulSet's Elasticsearch requires credentials.
func secured(sts *appsv1.StatefulSet) bool {
	for _, c := range sts.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == securityEnv {
				return e.Value == "true"
			}
		}
	}
	return false
}

// snapshotsClientPending is the snapshot CronJob when it may still reach
// Elasticsearch without the snapshot user's credentials: observed with a
// Job template that does not read them, or while one of its Jobs runs (it
// may be of the template before; a run ends within the Job's
// activeDeadlineSeconds). "" when none may.
func snapshotsClientPending(n instance.Names, obs wire.Children) string {
	cj := obs.CronJobs[n.Snapshots]
	switch {
	case cj == nil:
		return ""
	case !elasticusers.ReadsURL(cj.Spec.JobTemplate.Spec.Template.Spec.Containers, n.Elastic, elasticusers.Snapshots):
		return "the snapshot CronJob " + n.Snapshots + " to read them"
	case len(cj.Status.Active) > 0:
		return "the snapshot CronJob " + n.Snapshots + "'s running Job to end"
	}
	return ""
}
