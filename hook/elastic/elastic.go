// Package elastic is the part of a Monocle that runs its Elasticsearch: the
// Secret N-elastic of its users, its Service, its StatefulSet as it moves
// through a recreation, its volumes (storage.go), the snapshot CronJob and
// the snapshots' condition (snapshots.go, snapshots_status.go), and the
// NetworkPolicy N-elastic. Resolve reads its section of the spec; Answer
// gives its children and its Facts from what it observes; HeldFacts are its
// facts when every child is held as last applied.
package elastic

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Facts are what the status says of Elasticsearch, learned while
// answering its children.
type Facts struct {
	// Component is Elasticsearch's for the status: External when it is
	// another's, none to wait for.
	Component condition.Component
	// Retaining, when not "", is why the StatefulSet is kept until its
	// volumes are set to Retain and released.
	Retaining string
	// Recreating: the StatefulSet goes, to come back with the snapshot volume.
	Recreating bool
	Storage    *v1alpha1.StorageStatus
	Errors     []*condition.FieldError // of its volumes, and of snapshots it cannot take
	// snapshotsOff, when not "", is why no snapshot CronJob is judged
	// (SnapshotsOff, SnapshotsNeedManagedElasticsearch, SpecNotApplied);
	// snapshotsClaim names the snapshot volume when the StatefulSet has one,
	// and claims are the volumes observed.
	snapshotsOff, snapshotsOffMessage string
	snapshotsClaim                    string
	claims                            map[string]*corev1.PersistentVolumeClaim
	// Securing, when not "", names the clients Elasticsearch's security
	// waits for: its StatefulSet, running without, keeps its pod template.
	Securing string
	// Users is the data of the Secret N-elastic, Elasticsearch's users,
	// when the hook answers it (nil else): the pods read their URL there.
	Users map[string][]byte
}

// Children are Elasticsearch's children in an answer, each nil when it is
// not answered: the hook places them among the others.
type Children struct {
	Users         *corev1.Secret
	Service       *corev1.Service
	StatefulSet   *appsv1.StatefulSet
	Snapshots     *batchv1.CronJob
	NetworkPolicy *networkingv1.NetworkPolicy
}

// HeldFacts are Elasticsearch's facts when every child is held as last
// applied (the spec cannot say: what runs says).
func HeldFacts(n instance.Names, obs wire.Children) Facts {
	return Facts{
		Component:           component(n, obs, obs.StatefulSets[n.Elastic] == nil && obs.Deployments[n.API] != nil),
		snapshotsOff:        condition.ReasonSpecNotApplied,
		snapshotsOffMessage: "the spec is not applied",
		snapshotsClaim:      snapshotsClaimOf(n, obs.StatefulSets[n.Elastic]),
	}
}

// component is Elasticsearch's StatefulSet's, External when external.
func component(n instance.Names, obs wire.Children, external bool) condition.Component {
	c := condition.StatefulSetComponent(child.ComponentElastic, obs.StatefulSets[n.Elastic])
	if external {
		c.Off = "External"
	}
	return c
}

// Progressing is what Elasticsearch's StatefulSet is on its way to, when
// that says more than its rollout: its volumes set to Retain before it goes,
// security waiting for its clients, or its recreation with the snapshot
// volume.
func (f Facts) Progressing(n instance.Names) (metav1.Condition, bool) {
	progressing := func(reason, message string) (metav1.Condition, bool) {
		return metav1.Condition{Type: condition.ConditionProgressing, Status: metav1.ConditionTrue, Reason: reason, Message: message}, true
	}
	switch {
	case f.Retaining != "":
		what := "removed"
		if f.Recreating {
			what = "made anew with the snapshot volume"
		}
		return progressing(condition.ReasonRetainingVolume, "setting Elasticsearch's volumes to Retain before its StatefulSet is "+what+": "+f.Retaining)
	case f.Securing != "":
		return progressing(condition.ReasonSecuringElasticsearch, "Elasticsearch's StatefulSet "+n.Elastic+" runs without security, its pods' template as it is, until every client reaches it with the credentials of Secret "+
			n.Elastic+": waiting for "+f.Securing)
	case f.Recreating:
		return progressing(condition.ReasonRecreatingStatefulSet, "Elasticsearch's StatefulSet "+n.Elastic+" is made anew with the snapshot volume (volumeClaimTemplates cannot change in place): "+
			"its volumes are retained and "+n.DataClaim()+" is mounted again")
	}
	return metav1.Condition{}, false
}

// Users is the data of the Secret N-elastic, Elasticsearch's users, when
// the hook runs it (nil when Elasticsearch is external and none runs): its
// passwords drawn from random when new. The pods read their URL there, and
// Answer makes the Secret of it.
func Users(n instance.Names, s Settings, obs wire.Children, random io.Reader) (map[string][]byte, error) {
	if s.External() && obs.StatefulSets[n.Elastic] == nil {
		return nil, nil
	}
	return usersData(n, obs.Secrets[n.Elastic], random)
}

// Answer gives Elasticsearch's children and facts: its users' Secret of
// users (Users), then the rest (answer). hookImage runs the snapshots
// (DefaultHookImage when ""). clientPending names the clients beside its
// own (the pods', pods.Facts) that may still reach Elasticsearch without
// credentials: a running Elasticsearch without security keeps it off,
// and its StatefulSet as it runs, until none does (security.go).
func Answer(namespace string, n instance.Names, s Settings, obs wire.Children, claims map[string]*corev1.PersistentVolumeClaim,
	users map[string][]byte, hookImage, clientPending string) (Children, Facts, error) {
	var out Children
	if users != nil {
		out.Users = child.Secret(n, n.Elastic, child.ComponentElastic, users)
	}
	facts := answer(namespace, n, s, obs, claims, hookImage, cmp.Or(clientPending, snapshotsClientPending(n, obs)), &out)
	facts.Users = users
	// Kept while the StatefulSet is observed, after a switch to an
	// external Elasticsearch too: its pods run until it is deleted.
	if s.NetworkPolicy && (!s.External() || obs.StatefulSets[n.Elastic] != nil) {
		out.NetworkPolicy = makeNetworkPolicy(n, s)
	}
	return out, facts, nil
}

// answer sets Elasticsearch's Service, StatefulSet and snapshot CronJob in
// out, as far as this answer goes: a StatefulSet that must be recreated, or
// released before it goes, moves one step per sync.
func answer(namespace string, n instance.Names, s Settings, obs wire.Children, claims map[string]*corev1.PersistentVolumeClaim,
	hookImage, clientPending string, out *Children) Facts {
	facts := Facts{Component: component(n, obs, s.External()), claims: claims}
	sts := obs.StatefulSets[n.Elastic]
	gated := sts != nil && !secured(sts) && clientPending != ""
	switch {
	case !s.External():
		out.Service = child.Service(n, n.Elastic, child.ComponentElastic, instance.ElasticPort)
		// A StatefulSet made before snapshots were asked lacks the
		// snapshots template, which cannot be added in place
		// (volumeClaimTemplates are immutable): it is recreated, its
		// volumes retained first.
		switch {
		case sts == nil || gated || s.snapshots == nil || claimTemplate(sts.Spec.VolumeClaimTemplates, instance.SnapshotsVolume) != nil:
			// Answered, created or updated in place.
			answered := makeStatefulSet(n, s, sts, false, claims[n.DataClaim()])
			if gated {
				// Elasticsearch runs without security until no client
				// lacks credentials: its pods keep their template (a new
				// one has security on), and it is not recreated.
				answered.Spec.Template = *sts.Spec.Template.DeepCopy()
				facts.Securing = clientPending
			}
			out.StatefulSet = answered
			if s.snapshots != nil && claimTemplate(answered.Spec.VolumeClaimTemplates, instance.SnapshotsVolume) != nil {
				// Only with the volume the snapshots are written to.
				out.Snapshots = makeSnapshotsCronJob(n, s, cmp.Or(hookImage, DefaultHookImage))
			}
			facts.snapshotsClaim = snapshotsClaimOf(n, answered)
		case sts.DeletionTimestamp == nil && volumesHeld(sts, claims) != "":
			// Answered as it is but with the Retain policy, until the
			// StatefulSet controller has released its volumes: it is
			// about to go.
			out.StatefulSet = makeStatefulSet(n, s, sts, true, nil)
			facts.Retaining = volumesHeld(sts, claims)
			facts.Recreating = true
		default:
			// Left out (or already going): deleted, its volumes
			// retained; the next sync makes it anew with the snapshots
			// template, and the StatefulSet controller mounts the data
			// claim again by its name.
			facts.Recreating = true
		}
		facts.Storage = storageStatus(n, s, sts, claims[n.DataClaim()])
		if sts != nil {
			facts.Errors = storageChange(namespace, n, s, sts, claims)
		}
	case sts != nil && volumesHeld(sts, claims) != "":
		// Leaving managed Elasticsearch: its volume must be set to Retain,
		// and released, before the StatefulSet goes, whatever
		// deleteDataOnDelete says.
		out.StatefulSet = makeStatefulSet(n, s, sts, true, nil)
		facts.Retaining = volumesHeld(sts, claims)
	}
	facts.snapshotsNotTaken(s)
	return facts
}

// snapshotsNotTaken says why no snapshot CronJob is judged, if none is:
// snapshots are off, or Elasticsearch is another's (which refuses them).
func (f *Facts) snapshotsNotTaken(s Settings) {
	switch {
	case s.snapshots == nil:
		f.snapshotsOff, f.snapshotsOffMessage = condition.ReasonSnapshotsOff, "spec.elasticsearch.snapshots is not set"
	case s.External():
		f.Errors = append(f.Errors, &condition.FieldError{Reason: condition.ReasonSnapshotsNeedManagedElasticsearch, Field: "elasticsearch.snapshots", Message: "is for the Elasticsearch the Monocle runs: with an external one (elasticsearch.url or urlSecretRef), its snapshots are its owner's business; no snapshot is taken"})
		f.snapshotsOff, f.snapshotsOffMessage = condition.ReasonSnapshotsNeedManagedElasticsearch, "no snapshot is taken of an external Elasticsearch"
	}
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
