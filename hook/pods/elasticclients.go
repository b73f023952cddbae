package pods

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// elasticClientPending names the pods' clients of the Elasticsearch the
// Monocle runs that may still reach it without the credentials of the
// Secret N-elastic, or "" when none may: the API, until its rollout of a
// template that reads them is complete (an old pod would get 401 on every
// search while its /health, which never calls Elasticsearch, keeps it
// Ready: src/Monocle/Main.hs healthMiddleware), and each update-idents Job
// still to run of a template that does not (a Job's template is immutable).
// Elasticsearch turns its security on only once it is "" (hook/elastic).
// The crawler is not a client: it reads the config and calls the API only
// (src/CLI.hs, src/Macroscope/Main.hs). held says the API is answered as
// last applied: it keeps what it runs, and Elasticsearch with it.
func elasticClientPending(n instance.Names, obs wire.Children, held bool) string {
	var pending []string
	if api := obs.Deployments[n.API]; api != nil {
		switch {
		case !apiReadsElasticCredentials(api, n) && held:
			pending = append(pending, "the API (Deployment "+n.API+", held as last applied: SpecApplied says why) without them")
		case !apiReadsElasticCredentials(api, n):
			pending = append(pending, "the API (Deployment "+n.API+") to read them")
		case !rolledOutAlone(api):
			pending = append(pending, fmt.Sprintf("the API's rollout (Deployment %s: %d of %d pods updated, %d available, %d in all)",
				n.API, api.Status.UpdatedReplicas, ptr.Deref(api.Spec.Replicas, 1), api.Status.AvailableReplicas, api.Status.Replicas))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(obs.Jobs)) {
		job := obs.Jobs[name]
		if strings.HasPrefix(name, n.UpdateIdentsPrefix()) && !finished(job) &&
			!elasticusers.ReadsURL(job.Spec.Template.Spec.Containers, n.Elastic, elasticusers.Monocle) {
			pending = append(pending, "Job "+name+", which runs without them until it ends")
		}
	}
	return strings.Join(pending, ", ")
}

// rolledOutAlone: the Deployment's rollout is complete and no pod of an
// earlier template is left.
func rolledOutAlone(d *appsv1.Deployment) bool {
	return condition.DeploymentReady(d) && d.Status.Replicas <= d.Status.UpdatedReplicas
}

// finished: the Job will start no pod again.
func finished(j *batchv1.Job) bool {
	return condition.JobCondition(j, batchv1.JobComplete) || condition.JobCondition(j, batchv1.JobFailed)
}
