package pods

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/child"
)

// Resolve and CheckImage: the pods' section with its defaults, or the
// refused field. Each row is a spec, as its JSON.
func TestResolve(t *testing.T) {
	tests := map[string]struct {
		spec                     string
		image                    string
		replicas                 int32
		crawler                  bool
		apiMemory, crawlerMemory string // limits
		configMap, secret        string
		refused                  string
	}{
		"nothing: the defaults": {spec: `{}`, image: DefaultImage, replicas: 1, crawler: true, apiMemory: "1Gi", crawlerMemory: "512Mi"},
		"an image, 3 API replicas, no crawler": {spec: `{"image":"quay.io/x/monocle:2","api":{"replicas":3},"crawler":{"enabled":false}}`,
			image: "quay.io/x/monocle:2", replicas: 3, apiMemory: "1Gi", crawlerMemory: "512Mi"},
		"no API replica": {spec: `{"api":{"replicas":0}}`, image: DefaultImage, crawler: true, apiMemory: "1Gi", crawlerMemory: "512Mi"},
		"resources given, whole": {spec: `{"api":{"resources":{"limits":{"memory":"2Gi"}}},"crawler":{"resources":{"requests":{"cpu":"1"}}}}`,
			image: DefaultImage, replicas: 1, crawler: true, apiMemory: "2Gi", crawlerMemory: "0"},
		"a ConfigMap and a Secret of the user's": {spec: `{"configMapRef":{"name":"cfg"},"secretRef":{"name":"tokens"}}`,
			image: DefaultImage, replicas: 1, crawler: true, apiMemory: "1Gi", crawlerMemory: "512Mi", configMap: "cfg", secret: "tokens"},
		"negative replicas":     {spec: `{"api":{"replicas":-1}}`, refused: "api.replicas"},
		"an image with a space": {spec: `{"image":" quay.io/x/monocle:2"}`, refused: "image"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var spec v1alpha1.MonocleSpec
			if err := json.Unmarshal([]byte(tc.spec), &spec); err != nil {
				t.Fatal(err)
			}
			s, ferr := Resolve(&spec, child.Scheduling{})
			if ferr == nil {
				ferr = s.CheckImage()
			}
			if tc.refused != "" {
				if ferr == nil || ferr.Field != tc.refused {
					t.Fatalf("Resolve: %v, want a refusal of %s", ferr, tc.refused)
				}
				return
			}
			if ferr != nil {
				t.Fatal(ferr)
			}
			apiMem, crawlerMem := s.apiRes.Limits[corev1.ResourceMemory], s.crawlerRes.Limits[corev1.ResourceMemory]
			if s.image != tc.image || s.APIReplicas != tc.replicas || s.crawler != tc.crawler || apiMem.String() != tc.apiMemory ||
				crawlerMem.String() != tc.crawlerMemory || s.configMap != tc.configMap || s.secret != tc.secret {
				t.Errorf("got image %s, replicas %d, crawler %v, memory %s/%s, configMap %q, secret %q", s.image, s.APIReplicas, s.crawler,
					apiMem.String(), crawlerMem.String(), s.configMap, s.secret)
			}
		})
	}
}
