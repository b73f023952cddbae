package elastic

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

func withES(es v1alpha1.ElasticsearchSpec) v1alpha1.MonocleSpec {
	return v1alpha1.MonocleSpec{Elasticsearch: es}
}

func memLimit(s string) *v1alpha1.ResourceRequirements {
	return &v1alpha1.ResourceRequirements{Limits: v1alpha1.ResourceList{corev1.ResourceMemory: v1alpha1.Quantity{Quantity: resource.MustParse(s)}}}
}

func TestResolve(t *testing.T) {
	daily := &v1alpha1.SnapshotsSpec{Schedule: "0 3 * * *", Keep: ptr.To[int32](7)}
	tests := []struct {
		name  string
		spec  v1alpha1.MonocleSpec
		check func(t *testing.T, s Settings, note string)
	}{
		{name: "defaults", check: func(t *testing.T, s Settings, note string) {
			if s.External() || s.image != DefaultImage || s.size.String() != DefaultStorageSize || s.sizeAsked ||
				s.Heap != "512m" || !s.NetworkPolicy || s.snapshots != nil || note != "" {
				t.Errorf("Settings = %+v, %q", s, note)
			}
			if mem := s.Resources.Limits[corev1.ResourceMemory]; mem.String() != "1Gi" {
				t.Errorf("memory = %s; want 1Gi", mem.String())
			}
		}},
		{name: "url as Monocle reads it", spec: withES(v1alpha1.ElasticsearchSpec{URL: "es:9200/"}), check: func(t *testing.T, s Settings, _ string) {
			if !s.External() || s.URL != "http://es:9200" {
				t.Errorf("URL = %q, external %v; want http://es:9200", s.URL, s.External())
			}
		}},
		{name: "urlSecretRef", spec: withES(v1alpha1.ElasticsearchSpec{URLSecretRef: &v1alpha1.SecretKeySelector{Name: "es", Key: "url"}}),
			check: func(t *testing.T, s Settings, _ string) {
				if !s.External() || s.URLSecret == nil || s.URLSecret.Name != "es" || s.URLSecret.Key != "url" {
					t.Errorf("URLSecret = %+v; want es/url", s.URLSecret)
				}
			}},
		{name: "spec-wide storage", spec: v1alpha1.MonocleSpec{StorageSize: "20Gi", StorageClassName: "slow"}, check: func(t *testing.T, s Settings, _ string) {
			if s.size.String() != "20Gi" || !s.sizeAsked || s.sizeField != "storageSize" || s.class != "slow" || s.classField != "storageClassName" {
				t.Errorf("storage = %s %v %s %s %s", s.size.String(), s.sizeAsked, s.sizeField, s.class, s.classField)
			}
		}},
		{name: "elasticsearch's storage first", spec: v1alpha1.MonocleSpec{StorageSize: "20Gi", StorageClassName: "slow",
			Elasticsearch: v1alpha1.ElasticsearchSpec{StorageSize: "30Gi", StorageClassName: "fast"}}, check: func(t *testing.T, s Settings, _ string) {
			if s.size.String() != "30Gi" || s.sizeField != "elasticsearch.storageSize" || s.class != "fast" || s.classField != "elasticsearch.storageClassName" {
				t.Errorf("storage = %s %s %s %s", s.size.String(), s.sizeField, s.class, s.classField)
			}
		}},
		{name: "heap half the memory", spec: withES(v1alpha1.ElasticsearchSpec{Resources: memLimit("4Gi")}), check: func(t *testing.T, s Settings, _ string) {
			if s.Heap != "2048m" {
				t.Errorf("heap = %s; want 2048m", s.Heap)
			}
		}},
		{name: "heap over half: note", spec: withES(v1alpha1.ElasticsearchSpec{Heap: "3g", Resources: memLimit("4Gi")}), check: func(t *testing.T, s Settings, note string) {
			if s.Heap != "3g" || note == "" {
				t.Errorf("heap = %s, note %q; want 3g and a note", s.Heap, note)
			}
		}},
		{name: "snapshots on the data size", spec: withES(v1alpha1.ElasticsearchSpec{StorageSize: "15Gi", Snapshots: daily}), check: func(t *testing.T, s Settings, _ string) {
			if sn := s.snapshots; sn == nil || sn.schedule != "0 3 * * *" || sn.keep != 7 || sn.size.String() != "15Gi" || sn.sizeAsked {
				t.Errorf("snapshots = %+v", s.snapshots)
			}
		}},
		{name: "snapshots' own size", spec: withES(v1alpha1.ElasticsearchSpec{Snapshots: &v1alpha1.SnapshotsSpec{
			Schedule: "@daily", Keep: ptr.To[int32](1), StorageSize: "5Gi", StorageClassName: "cold", TimeZone: "Europe/Paris"}}),
			check: func(t *testing.T, s Settings, _ string) {
				if sn := s.snapshots; sn == nil || sn.size.String() != "5Gi" || !sn.sizeAsked || sn.class != "cold" || sn.timeZone != "Europe/Paris" {
					t.Errorf("snapshots = %+v", s.snapshots)
				}
			}},
		{name: "network policy off", spec: v1alpha1.MonocleSpec{NetworkPolicy: &v1alpha1.NetworkPolicySpec{Enabled: ptr.To(false)}},
			check: func(t *testing.T, s Settings, _ string) {
				if s.NetworkPolicy {
					t.Error("NetworkPolicy on; want off")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, note, errs := Resolve(&tt.spec, child.Scheduling{})
			if errs != nil {
				t.Fatal(errs.First())
			}
			tt.check(t, s, note)
		})
	}
}

func TestResolveErrors(t *testing.T) {
	snap := func(f func(*v1alpha1.SnapshotsSpec)) v1alpha1.MonocleSpec {
		s := v1alpha1.SnapshotsSpec{Schedule: "@daily", Keep: ptr.To[int32](3)}
		f(&s)
		return withES(v1alpha1.ElasticsearchSpec{Snapshots: &s})
	}
	tests := []struct {
		name, field string
		spec        v1alpha1.MonocleSpec
	}{
		{"image with a space", "elasticsearch.image", withES(v1alpha1.ElasticsearchSpec{Image: "es :7"})},
		{"https url", "elasticsearch.url", withES(v1alpha1.ElasticsearchSpec{URL: "https://es:9200"})},
		{"url with a query", "elasticsearch.url", withES(v1alpha1.ElasticsearchSpec{URL: "es:9200?x"})},
		{"urlSecretRef without key", "elasticsearch.urlSecretRef", withES(v1alpha1.ElasticsearchSpec{URLSecretRef: &v1alpha1.SecretKeySelector{Name: "es"}})},
		{"size not a quantity", "elasticsearch.storageSize", withES(v1alpha1.ElasticsearchSpec{StorageSize: "ten"})},
		{"spec-wide size zero", "storageSize", v1alpha1.MonocleSpec{StorageSize: "0"}},
		{"heap not a JVM size", "elasticsearch.heap", withES(v1alpha1.ElasticsearchSpec{Heap: "1Gi"})},
		{"heap too small", "elasticsearch.heap", withES(v1alpha1.ElasticsearchSpec{Heap: "128m"})},
		{"heap too large", "elasticsearch.heap", withES(v1alpha1.ElasticsearchSpec{Heap: "32g"})},
		{"heap over the memory", "elasticsearch.heap", withES(v1alpha1.ElasticsearchSpec{Heap: "2g", Resources: memLimit("2Gi")})},
		{"memory too small", "elasticsearch.resources.limits.memory", withES(v1alpha1.ElasticsearchSpec{Resources: memLimit("256Mi")})},
		{"snapshots without keep", "elasticsearch.snapshots.keep", snap(func(s *v1alpha1.SnapshotsSpec) { s.Keep = nil })},
		{"snapshots keep zero", "elasticsearch.snapshots.keep", snap(func(s *v1alpha1.SnapshotsSpec) { s.Keep = ptr.To[int32](0) })},
		{"snapshots bad schedule", "elasticsearch.snapshots.schedule", snap(func(s *v1alpha1.SnapshotsSpec) { s.Schedule = "every day" })},
		{"snapshots bad time zone", "elasticsearch.snapshots.timeZone", snap(func(s *v1alpha1.SnapshotsSpec) { s.TimeZone = "Mars/Olympus" })},
		{"snapshots size zero", "elasticsearch.snapshots.storageSize", snap(func(s *v1alpha1.SnapshotsSpec) { s.StorageSize = "0Gi" })},
		// The API server's rules for what the children take of the spec.
		{"resources the API server refuses", "elasticsearch.resources.requests[cpu]", withES(v1alpha1.ElasticsearchSpec{Resources: &v1alpha1.ResourceRequirements{
			Requests: v1alpha1.ResourceList{corev1.ResourceCPU: v1alpha1.Quantity{Quantity: resource.MustParse("-1")}}}})},
		{"a class no claim can have", "storageClassName", v1alpha1.MonocleSpec{StorageClassName: "Fast_SSD"}},
		{"a class of Elasticsearch's no claim can have", "elasticsearch.storageClassName", withES(v1alpha1.ElasticsearchSpec{StorageClassName: "Fast_SSD"})},
		{"a snapshots class no claim can have", "elasticsearch.snapshots.storageClassName", snap(func(s *v1alpha1.SnapshotsSpec) { s.StorageClassName = "Fast_SSD" })},
		{"urlSecretRef's key no Secret can have", "elasticsearch.urlSecretRef.key", withES(v1alpha1.ElasticsearchSpec{URLSecretRef: &v1alpha1.SecretKeySelector{Name: "es", Key: "a/b"}})},
		{"a peer of no kind", "networkPolicy.elasticsearchPeers[0]", v1alpha1.MonocleSpec{NetworkPolicy: &v1alpha1.NetworkPolicySpec{ElasticsearchPeers: make([]v1alpha1.NetworkPolicyPeer, 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, errs := Resolve(&tt.spec, child.Scheduling{})
			ferr := errs.First()
			if ferr == nil || ferr.Field != tt.field || ferr.Reason != condition.ReasonInvalidSpec {
				t.Fatalf("error = %+v; want InvalidSpec on %s", ferr, tt.field)
			}
		})
	}
}

// storageChange: growth is the admin's command, shrinking and a class
// change are refused, a default size is never held against a volume.
func TestStorageChange(t *testing.T) {
	n := instance.For("demo")
	sts := func(size, class string) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{}
		s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{volumeClaimTemplate("data", resource.MustParse(size), class)}
		return s
	}
	tests := []struct {
		name   string
		spec   v1alpha1.MonocleSpec
		sts    *appsv1.StatefulSet
		reason string // "" for no error
		field  string
	}{
		{name: "same", spec: v1alpha1.MonocleSpec{StorageSize: "10Gi"}, sts: sts("10Gi", "")},
		{name: "default size not held", sts: sts("50Gi", "")},
		{name: "grow", spec: v1alpha1.MonocleSpec{StorageSize: "20Gi"}, sts: sts("10Gi", ""), reason: condition.ReasonVolumeExpansionRequired, field: "storageSize"},
		{name: "shrink", spec: withES(v1alpha1.ElasticsearchSpec{StorageSize: "5Gi"}), sts: sts("10Gi", ""), reason: condition.ReasonStorageShrinkRefused, field: "elasticsearch.storageSize"},
		{name: "class change", spec: v1alpha1.MonocleSpec{StorageClassName: "fast"}, sts: sts("10Gi", "slow"), reason: condition.ReasonImmutableField, field: "storageClassName"},
		{name: "class unset kept", sts: sts("10Gi", "slow")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, refused := Resolve(&tt.spec, child.Scheduling{})
			if refused != nil {
				t.Fatal(refused.First())
			}
			errs := storageChange("ns", n, s, tt.sts, nil)
			if tt.reason == "" {
				if len(errs) != 0 {
					t.Fatalf("errors = %v; want none", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Reason != tt.reason || errs[0].Field != tt.field {
				t.Fatalf("errors = %+v; want %s on %s", errs, tt.reason, tt.field)
			}
		})
	}
}
