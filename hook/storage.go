package hook

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Elasticsearch's volume: the claim template, its growth and its retention.

// dataClaim is written whole, as the server stores it (apiVersion, kind,
// volumeMode, status): Metacontroller replaces a list without a merge key
// whole, so any difference would be a rewrite on every sync.
func dataClaim(s settings) corev1.PersistentVolumeClaim {
	claim := corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: s.elastic.size}},
			VolumeMode:  ptr.To(corev1.PersistentVolumeFilesystem),
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	if s.elastic.class != "" {
		claim.Spec.StorageClassName = ptr.To(s.elastic.class)
	}
	return claim
}

// storageChange judges the size and class asked for Elasticsearch's volume
// against the volume. The StatefulSet's volumeClaimTemplates are immutable
// and are never touched: growth is the admin's one command on the claim
// (the StorageClass must allow expansion), shrinking and a class change are
// refused.
func storageChange(namespace string, n names, s settings, sts *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim) *fieldError {
	for _, t := range sts.Spec.VolumeClaimTemplates {
		if t.Name != "data" {
			continue
		}
		if class := ptr.Deref(t.Spec.StorageClassName, ""); s.elastic.class != "" && class != s.elastic.class {
			return &fieldError{ReasonImmutableField, s.elastic.classField, fmt.Sprintf("is %q but Elasticsearch's volume was created with %q, which cannot change: %q is kept", s.elastic.class, class, class)}
		}
		if !s.elastic.sizeAsked {
			return nil
		}
		current := t.Spec.Resources.Requests[corev1.ResourceStorage]
		if claim != nil {
			current = claim.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		want := s.elastic.size
		switch current.Cmp(want) {
		case 1:
			return &fieldError{ReasonStorageShrinkRefused, s.elastic.sizeField, fmt.Sprintf("is %s but volume %s has %s: a volume cannot shrink, %s is kept", want.String(), n.dataClaim(), current.String(), current.String())}
		case -1:
			return &fieldError{ReasonVolumeExpansionRequired, s.elastic.sizeField, fmt.Sprintf(
				"is %s but volume %s has %s. To grow it (its StorageClass must allow volume expansion), run: kubectl -n %s patch pvc %s --type merge -p '{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"%s\"}}}}'",
				want.String(), n.dataClaim(), current.String(), namespace, n.dataClaim(), want.String())}
		}
	}
	return nil
}

// storageStatus reports the size asked and the volume's capacity.
func storageStatus(n names, s settings, sts *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim) *StorageStatus {
	st := &StorageStatus{Claim: n.dataClaim(), Requested: s.elastic.size.String()}
	if !s.elastic.sizeAsked && sts != nil {
		for _, t := range sts.Spec.VolumeClaimTemplates {
			if t.Name == "data" {
				q := t.Spec.Resources.Requests[corev1.ResourceStorage]
				st.Requested = q.String()
			}
		}
	}
	if claim != nil {
		if c, ok := claim.Status.Capacity[corev1.ResourceStorage]; ok {
			st.Capacity = c.String()
		}
	}
	return st
}

// retained: the StatefulSet's volume outlives it.
func retained(sts *appsv1.StatefulSet) bool {
	p := sts.Spec.PersistentVolumeClaimRetentionPolicy
	return p == nil || p.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType
}
