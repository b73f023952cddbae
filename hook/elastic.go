package hook

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// elasticFacts is what the status says of Elasticsearch, learned while
// answering its children.
type elasticFacts struct {
	external bool // Elasticsearch is external: none to wait for
	// retaining, when not "", is why the StatefulSet is kept until its
	// volumes are set to Retain and released.
	retaining string
	// recreating: the StatefulSet goes, to come back with the snapshot volume.
	recreating bool
	storage    *v1alpha1.StorageStatus
	errors     []*condition.FieldError // of its volumes, and of snapshots it cannot take
	// snapshotsOff, when not "", is why no snapshot CronJob is judged
	// (SnapshotsOff, SnapshotsNeedManagedElasticsearch, SpecNotApplied);
	// snapshotsClaim names the snapshot volume when the StatefulSet has one,
	// and claims are the volumes observed.
	snapshotsOff, snapshotsOffMessage string
	snapshotsClaim                    string
	claims                            map[string]*corev1.PersistentVolumeClaim
}

// elasticChildren are Elasticsearch's children (its Service, its
// StatefulSet, the snapshot CronJob), as far as this answer goes: a
// StatefulSet that must be recreated, or released before it goes, moves one
// step per sync.
func elasticChildren(namespace string, n instance.Names, s settings, obs wire.Children, claims map[string]*corev1.PersistentVolumeClaim, env Env) ([]wire.Child, elasticFacts) {
	facts := elasticFacts{external: s.elastic.external(), claims: claims}
	var out []wire.Child
	sts := obs.StatefulSets[n.Elastic]
	switch {
	case !s.elastic.external():
		out = append(out, child.Service(n, n.Elastic, child.ComponentElastic, instance.ElasticPort))
		// A StatefulSet made before snapshots were asked lacks the
		// snapshots template, which cannot be added in place
		// (volumeClaimTemplates are immutable): it is recreated, its
		// volumes retained first.
		switch {
		case sts == nil || s.snapshots == nil || claimTemplate(sts.Spec.VolumeClaimTemplates, instance.SnapshotsVolume) != nil:
			// Answered, created or updated in place.
			answered := makeElasticStatefulSet(n, s, sts, false, claims[n.DataClaim()])
			out = append(out, answered)
			if s.snapshots != nil {
				// Only with the volume the snapshots are written to.
				out = append(out, makeSnapshotsCronJob(n, s, cmp.Or(env.Image, DefaultHookImage)))
			}
			facts.snapshotsClaim = snapshotsClaimOf(n, answered)
		case sts.DeletionTimestamp == nil && volumesHeld(sts, claims) != "":
			// Answered as it is but with the Retain policy, until the
			// StatefulSet controller has released its volumes: it is
			// about to go.
			out = append(out, makeElasticStatefulSet(n, s, sts, true, nil))
			facts.retaining = volumesHeld(sts, claims)
			facts.recreating = true
		default:
			// Left out (or already going): deleted, its volumes
			// retained; the next sync makes it anew with the snapshots
			// template, and the StatefulSet controller mounts the data
			// claim again by its name.
			facts.recreating = true
		}
		facts.storage = storageStatus(n, s, sts, claims[n.DataClaim()])
		if sts != nil {
			facts.errors = storageChange(namespace, n, s, sts, claims)
		}
	case sts != nil && volumesHeld(sts, claims) != "":
		// Leaving managed Elasticsearch: its volume must be set to Retain,
		// and released, before the StatefulSet goes, whatever
		// deleteDataOnDelete says.
		out = append(out, makeElasticStatefulSet(n, s, sts, true, nil))
		facts.retaining = volumesHeld(sts, claims)
	}
	switch {
	case s.snapshots == nil:
		facts.snapshotsOff, facts.snapshotsOffMessage = condition.ReasonSnapshotsOff, "spec.elasticsearch.snapshots is not set"
	case s.elastic.external():
		facts.errors = append(facts.errors, &condition.FieldError{Reason: condition.ReasonSnapshotsNeedManagedElasticsearch, Field: "elasticsearch.snapshots", Message: "is for the Elasticsearch the Monocle runs: with an external one (elasticsearch.url or urlSecretRef), its snapshots are its owner's business; no snapshot is taken"})
		facts.snapshotsOff, facts.snapshotsOffMessage = condition.ReasonSnapshotsNeedManagedElasticsearch, "no snapshot is taken of an external Elasticsearch"
	}
	return out, facts
}

// volumesHeld says why deleting the StatefulSet now could delete one of its
// volumes, or "" when it cannot: its policy is Retain, the StatefulSet
// controller has seen that spec, and no claim of ours is owned by it any
// more (the controller removes that ownerReference only for a pod that is
// Pending, or Running and Ready; the garbage collector would delete a claim
// that still has it).
func volumesHeld(sts *appsv1.StatefulSet, claims map[string]*corev1.PersistentVolumeClaim) string {
	if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p != nil && p.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		return "its volumes are set to Retain first"
	}
	if sts.Status.ObservedGeneration < sts.Generation {
		return "waiting for the StatefulSet controller to see the Retain policy"
	}
	for _, name := range slices.Sorted(maps.Keys(claims)) {
		for _, ref := range claims[name].OwnerReferences {
			if ref.UID == sts.UID && sts.UID != "" {
				return fmt.Sprintf("waiting for the StatefulSet controller to release PersistentVolumeClaim %s (it does once Elasticsearch's pod is Pending or ready; "+
					"or remove its ownerReference by hand: %s)", name,
					condition.Kubectl("", []string{name}, "patch", "pvc", name, "--type", "json", "-p", `[{"op":"remove","path":"/metadata/ownerReferences"}]`))
			}
		}
	}
	return ""
}
