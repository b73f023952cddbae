package elastic

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Elasticsearch's volume: the claim template, its growth and its retention.

// volumeClaimTemplate is one of the StatefulSet's (the data volume, the
// snapshot volume), written whole, as the server stores it (apiVersion,
// kind, volumeMode, status): Metacontroller replaces a list without a merge
// key whole, so any difference would be a rewrite on every sync.
func volumeClaimTemplate(name string, size resource.Quantity, class string) corev1.PersistentVolumeClaim {
	claim := corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
			VolumeMode:  ptr.To(corev1.PersistentVolumeFilesystem),
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	if class != "" {
		claim.Spec.StorageClassName = ptr.To(class)
	}
	return claim
}

// volumeAsked is what the spec asks of one of Elasticsearch's volumes.
type volumeAsked struct {
	template, claim string // the claim template's name, and its PVC's
	size            resource.Quantity
	// sizeAsked: a size is set in the spec. A default size (like an unset
	// class) applies at creation only: never held against a volume.
	sizeAsked         bool
	sizeField         string
	class, classField string
}

// dataClaimFor is the data volume's claim template for a new StatefulSet.
// volume, when not nil, is the data volume the StatefulSet will mount again
// (its StatefulSet was recreated, or Elasticsearch comes back from external):
// the template then says its size and class, so that the template, the
// volume and status.storage agree.
func dataClaimFor(s Settings, volume *corev1.PersistentVolumeClaim) corev1.PersistentVolumeClaim {
	claim := volumeClaimTemplate("data", s.size, s.class)
	if volume == nil {
		return claim
	}
	if q, ok := volume.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		claim.Spec.Resources.Requests[corev1.ResourceStorage] = q
	}
	if class := ptr.Deref(volume.Spec.StorageClassName, ""); class != "" {
		claim.Spec.StorageClassName = ptr.To(class)
	}
	return claim
}

// storageChange judges the size and class asked for Elasticsearch's
// volumes against the volumes. The StatefulSet's volumeClaimTemplates are
// immutable and are never touched: growth is the admin's one command on the
// claim (the StorageClass must allow expansion), shrinking and a class
// change are refused. claims are the related PVCs, by name.
func storageChange(namespace string, n instance.Names, s Settings, sts *appsv1.StatefulSet, claims map[string]*corev1.PersistentVolumeClaim) []*condition.FieldError {
	// The data volume, and the snapshot volume when snapshots are on.
	asked := []volumeAsked{{"data", n.DataClaim(), s.size, s.sizeAsked, s.sizeField, s.class, s.classField}}
	if snap := s.snapshots; snap != nil {
		asked = append(asked, volumeAsked{instance.SnapshotsVolume, n.SnapshotsClaim(), snap.size, snap.sizeAsked,
			"elasticsearch.snapshots.storageSize", snap.class, "elasticsearch.snapshots.storageClassName"})
	}
	var errs []*condition.FieldError
	for _, v := range asked {
		if e := volumeChange(namespace, v, claimTemplate(sts.Spec.VolumeClaimTemplates, v.template), claims[v.claim]); e != nil {
			errs = append(errs, e)
		}
	}
	return errs
}

func volumeChange(namespace string, v volumeAsked, t, claim *corev1.PersistentVolumeClaim) *condition.FieldError {
	if t == nil {
		return nil
	}
	if class := ptr.Deref(t.Spec.StorageClassName, ""); v.class != "" && class != v.class {
		return &condition.FieldError{Reason: condition.ReasonImmutableField, Field: v.classField, Message: fmt.Sprintf("is %s but volume %s was created with %s, which cannot change: %s is kept", condition.Quote(v.class), v.claim, condition.Quote(class), condition.Quote(class))}
	}
	if !v.sizeAsked {
		return nil
	}
	current := t.Spec.Resources.Requests[corev1.ResourceStorage]
	if claim != nil {
		current = claim.Spec.Resources.Requests[corev1.ResourceStorage]
	}
	switch current.Cmp(v.size) {
	case 1:
		return &condition.FieldError{Reason: condition.ReasonStorageShrinkRefused, Field: v.sizeField, Message: fmt.Sprintf("is %s but volume %s has %s: a volume cannot shrink, %s is kept", v.size.String(), v.claim, current.String(), current.String())}
	case -1:
		return &condition.FieldError{Reason: condition.ReasonVolumeExpansionRequired, Field: v.sizeField, Message: fmt.Sprintf(
			"is %s but volume %s has %s. To grow it (its StorageClass must allow volume expansion), run: %s",
			v.size.String(), v.claim, current.String(), condition.Kubectl(namespace, []string{v.claim},
				"patch", "pvc", v.claim, "--type", "merge", "-p", `{"spec":{"resources":{"requests":{"storage":"`+v.size.String()+`"}}}}`))}
	}
	return nil
}

// storageStatus reports the size asked and the volume's capacity.
func storageStatus(n instance.Names, s Settings, sts *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim) *v1alpha1.StorageStatus {
	st := &v1alpha1.StorageStatus{Claim: n.DataClaim(), Requested: s.size.String(), Capacity: capacity(claim)}
	if !s.sizeAsked {
		// A default size is never held against a volume: what the
		// volume was made with is what is requested.
		t := claim
		if sts != nil {
			t = claimTemplate(sts.Spec.VolumeClaimTemplates, "data")
		}
		if t != nil {
			if q, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
				st.Requested = q.String()
			}
		}
	}
	return st
}

// capacity is a volume's capacity, "" when it is not known.
func capacity(claim *corev1.PersistentVolumeClaim) string {
	if claim == nil {
		return ""
	}
	if c, ok := claim.Status.Capacity[corev1.ResourceStorage]; ok {
		return c.String()
	}
	return ""
}
