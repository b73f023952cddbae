package pods

import (
	"cmp"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// heldByPods lists the observed children that read the config or run the
// Monocle image: the API and the crawler, their ConfigMaps, and the
// update-idents Jobs.
func heldByPods(n instance.Names, obs wire.Children) []wire.Observed {
	return slices.DeleteFunc(obs.All(), func(c wire.Observed) bool {
		name := c.Object.GetName()
		switch c.Type {
		case wire.TypeConfigMap:
			return name != n.API && !strings.HasPrefix(name, n.MountedConfigPrefix())
		case wire.TypeDeployment:
			return name != n.API && name != n.Crawler
		case wire.TypeJob:
			return !strings.HasPrefix(name, n.UpdateIdentsPrefix())
		}
		return true
	})
}

// stillMounted are the earlier mounted configs (N-config-<hash>) besides the
// current that pods may still mount: the one an API or crawler Deployment
// mounts and the one an update-idents Job not yet finished mounts (its
// template is immutable), always; while either Deployment rolls out (its
// old pods mount an earlier one, and may come back), the newest others,
// at most maxRolloutConfigs of them and maxRolloutConfigBytes of config in
// all. Left out, a config is deleted under the pods that mount it; kept
// without a bound, quick edits of a large config would grow the sync
// request past the hook's body limit, where only an answer could remove
// them: a Monocle wedged for good.
func stillMounted(n instance.Names, obs wire.Children, current string) []wire.Observed {
	keep := map[string]bool{}
	rolling := false
	for _, name := range []string{n.API, n.Crawler} {
		if d := obs.Deployments[name]; d != nil {
			keep[mountedConfigOf(d)] = true
			rolling = rolling || !condition.DeploymentReady(d)
		}
	}
	for _, job := range obs.Jobs {
		if !condition.JobCondition(job, batchv1.JobComplete) && !condition.JobCondition(job, batchv1.JobFailed) {
			keep[volumeConfigMap(job.Spec.Template.Spec.Volumes)] = true
		}
	}
	held := wire.Children{ConfigMaps: map[string]*corev1.ConfigMap{}}
	var rollingOnly []*corev1.ConfigMap
	for name, cm := range obs.ConfigMaps {
		switch {
		case name == current || !strings.HasPrefix(name, n.MountedConfigPrefix()):
		case keep[name]:
			held.ConfigMaps[name] = cm
		case rolling:
			rollingOnly = append(rollingOnly, cm)
		}
	}
	// Newest first; names break ties, so that the answer is the same.
	slices.SortFunc(rollingOnly, func(a, b *corev1.ConfigMap) int {
		return cmp.Or(b.CreationTimestamp.Compare(a.CreationTimestamp.Time), strings.Compare(a.Name, b.Name))
	})
	size := 0
	for _, cm := range rollingOnly[:min(len(rollingOnly), maxRolloutConfigs)] {
		if size += len(cm.Data[configFile]); size > maxRolloutConfigBytes {
			break
		}
		held.ConfigMaps[cm.Name] = cm
	}
	return held.All()
}

// The earlier configs kept only for a rollout: with the largest Monocle the
// CRD admits (its request's size: TestLargestMonocle, BENCHMARKS.md), one
// more config of the largest size (255 KiB, and its last-applied copy)
// stays under the 4 MiB body limit.
const (
	maxRolloutConfigs     = 3
	maxRolloutConfigBytes = MaxConfigJSON
)
