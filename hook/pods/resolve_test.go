package pods

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

func quantity(s string) v1alpha1.Quantity { return v1alpha1.Quantity{Quantity: resource.MustParse(s)} }

func TestResolve(t *testing.T) {
	twoCPU := &v1alpha1.ResourceRequirements{Requests: v1alpha1.ResourceList{corev1.ResourceCPU: quantity("2")}}
	twoCPUCore := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	sched := child.Scheduling{NodeSelector: map[string]string{"disk": "ssd"}}
	tests := []struct {
		name string
		spec v1alpha1.MonocleSpec
		want func(*Settings) // the defaults' Settings as this spec changes them
	}{
		{name: "defaults"},
		{name: "replicas", spec: v1alpha1.MonocleSpec{API: v1alpha1.APISpec{Replicas: ptr.To[int32](3)}},
			want: func(s *Settings) { s.APIReplicas = 3 }},
		{name: "zero replicas kept", spec: v1alpha1.MonocleSpec{API: v1alpha1.APISpec{Replicas: ptr.To[int32](0)}},
			want: func(s *Settings) { s.APIReplicas = 0 }},
		{name: "image", spec: v1alpha1.MonocleSpec{Image: "registry.local/monocle:dev"},
			want: func(s *Settings) { s.image = "registry.local/monocle:dev" }},
		{name: "API resources replace the default whole", spec: v1alpha1.MonocleSpec{API: v1alpha1.APISpec{Resources: twoCPU}},
			want: func(s *Settings) { s.apiRes = twoCPUCore }},
		{name: "crawler resources", spec: v1alpha1.MonocleSpec{Crawler: v1alpha1.CrawlerSpec{Resources: twoCPU}},
			want: func(s *Settings) { s.crawlerRes = twoCPUCore }},
		{name: "crawler off", spec: v1alpha1.MonocleSpec{Crawler: v1alpha1.CrawlerSpec{Enabled: ptr.To(false)}},
			want: func(s *Settings) { s.crawler = false }},
		{name: "secrets and config", spec: v1alpha1.MonocleSpec{
			SecretRef: &v1alpha1.LocalRef{Name: "tokens"}, ConfigMapRef: &v1alpha1.LocalRef{Name: "cfg"}, Config: "workspaces: []", WebappTitle: "T",
		}, want: func(s *Settings) {
			s.secret, s.configMap, s.config, s.webappTitle = "tokens", "cfg", "workspaces: []", "T"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := Settings{
				image:       DefaultImage,
				APIReplicas: 1,
				apiRes:      instance.Resources("100m", "256Mi", "1Gi"),
				crawler:     true,
				crawlerRes:  instance.Resources("50m", "128Mi", "512Mi"),
				scheduling:  sched,
			}
			if tt.want != nil {
				tt.want(&want)
			}
			got, errs := Resolve(&tt.spec, sched)
			if errs != nil {
				t.Fatal(errs.First())
			}
			// Quantities compare by value (Semantic), the rest as it is.
			for _, r := range []struct{ got, want *corev1.ResourceRequirements }{{&got.apiRes, &want.apiRes}, {&got.crawlerRes, &want.crawlerRes}} {
				if !equality.Semantic.DeepEqual(*r.got, *r.want) {
					t.Errorf("resources = %+v; want %+v", *r.got, *r.want)
				}
				*r.got, *r.want = corev1.ResourceRequirements{}, corev1.ResourceRequirements{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Resolve =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name  string
		spec  v1alpha1.MonocleSpec
		field string
	}{
		{name: "negative replicas", spec: v1alpha1.MonocleSpec{API: v1alpha1.APISpec{Replicas: ptr.To[int32](-1)}}, field: "api.replicas"},
		{name: "image with a space", spec: v1alpha1.MonocleSpec{Image: "monocle :1"}, field: "image"},
		{name: "image with a final newline", spec: v1alpha1.MonocleSpec{Image: "monocle:1\n"}, field: "image"},
		{name: "image with a leading tab", spec: v1alpha1.MonocleSpec{Image: "\tmonocle:1"}, field: "image"},
		// The API server's rules for what the pods take of the spec.
		{name: "API resources the API server refuses", spec: v1alpha1.MonocleSpec{API: v1alpha1.APISpec{Resources: &v1alpha1.ResourceRequirements{
			Requests: v1alpha1.ResourceList{corev1.ResourceCPU: v1alpha1.Quantity{Quantity: resource.MustParse("-1")}}}}}, field: "api.resources.requests[cpu]"},
		{name: "crawler resources the API server refuses", spec: v1alpha1.MonocleSpec{Crawler: v1alpha1.CrawlerSpec{Resources: &v1alpha1.ResourceRequirements{
			Limits: v1alpha1.ResourceList{"gpu": v1alpha1.Quantity{Quantity: resource.MustParse("1")}}}}}, field: "crawler.resources.limits[gpu]"},
		{name: "a ConfigMap no ConfigMap can be", spec: v1alpha1.MonocleSpec{ConfigMapRef: &v1alpha1.LocalRef{Name: "My_Config"}}, field: "configMapRef.name"},
		{name: "a Secret no Secret can be", spec: v1alpha1.MonocleSpec{SecretRef: &v1alpha1.LocalRef{Name: "My_Secret"}}, field: "secretRef.name"},
		// Every refusal is found: the first by field path is the first.
		{name: "two refusals", spec: v1alpha1.MonocleSpec{Image: "monocle :1", API: v1alpha1.APISpec{Replicas: ptr.To[int32](-1)}}, field: "api.replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Resolve(&tt.spec, child.Scheduling{})
			ferr := errs.First()
			if ferr == nil || ferr.Field != tt.field || ferr.Reason != condition.ReasonInvalidSpec {
				t.Fatalf("error = %+v; want InvalidSpec on %s", ferr, tt.field)
			}
		})
	}
	for _, image := range []string{"", "quay.io/x/monocle@sha256:abc"} {
		if _, errs := Resolve(&v1alpha1.MonocleSpec{Image: image}, child.Scheduling{}); errs != nil {
			t.Errorf("image %q: %v; want none", image, errs.First())
		}
	}
}
