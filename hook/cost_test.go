package hook

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
)

// Cost charges the largest config Sync may parse: the spec's, the user's
// ConfigMap's, or the generated ConfigMap's, keyed as either hook version
// keys it; never a mounted copy's, one of another namespace, or a config
// of a spec that does not decode.
func TestCost(t *testing.T) {
	small := "workspaces: []\n"
	large := "workspaces:\n" + strings.Repeat("- name: w\n  crawlers: []\n", 200)
	configMap := func(namespace, name, config string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string]string{"config.yaml": config}}
	}
	request := func(spec string, children, related map[string]*corev1.ConfigMap) *wire.SyncRequest {
		req := &wire.SyncRequest{Parent: &wire.Parent{Metadata: metav1.ObjectMeta{Namespace: "team", Name: "demo"}, Spec: json.RawMessage(spec)}}
		req.Children.ConfigMaps = children
		req.Related.ConfigMaps = related
		return req
	}
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	smallCost, largeCost := monocleconfig.ParseCostOf([]byte(small)), monocleconfig.ParseCostOf([]byte(large))
	if smallCost >= largeCost {
		t.Fatalf("the test's configs cost %d and %d: the large one must cost more", smallCost, largeCost)
	}
	for _, tc := range []struct {
		name string
		req  *wire.SyncRequest
		want int64
	}{
		{"no parent", &wire.SyncRequest{}, 0},
		{"the spec's config", request(`{"config":`+quoted(large)+`}`, nil, nil), largeCost},
		{"a spec that does not decode", request(`{"config":7}`, nil, nil), monocleconfig.ParseCostOf(nil)},
		{"the generated ConfigMap, v1's key", request(`{"config":`+quoted(small)+`}`,
			map[string]*corev1.ConfigMap{"demo-api": configMap("", "demo-api", large)}, nil), largeCost},
		{"the generated ConfigMap, v2's key", request(`{}`,
			map[string]*corev1.ConfigMap{"team/demo-api": configMap("team", "demo-api", large)}, nil), largeCost},
		{"a mounted copy", request(`{"config":`+quoted(small)+`}`,
			map[string]*corev1.ConfigMap{"team/demo-config-0": configMap("team", "demo-config-0", large)}, nil), smallCost},
		{"another namespace's", request(`{"config":`+quoted(small)+`}`,
			map[string]*corev1.ConfigMap{"other/demo-api": configMap("other", "demo-api", large)}, nil), smallCost},
		{"a null child", request(`{"config":`+quoted(small)+`}`, map[string]*corev1.ConfigMap{"demo-api": nil}, nil), smallCost},
		{"the user's ConfigMap", request(`{"config":`+quoted(small)+`}`, nil,
			map[string]*corev1.ConfigMap{"team/mine": configMap("team", "mine", large), "team/null": nil}), largeCost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cost(tc.req); got != tc.want {
				t.Errorf("Cost = %d, want %d", got, tc.want)
			}
		})
	}
}
