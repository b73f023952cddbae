package pods

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// While the API rolls out, the earlier configs its old pods may mount stay,
// but no more than the bound: quick edits of a large config cannot grow the
// sync request past the body limit. A config a Deployment mounts always
// stays.
func TestStillMountedIsBounded(t *testing.T) {
	n := instance.For("m")
	config := func(i int, size int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n.MountedConfig(fmt.Sprintf("%010d", i)),
			CreationTimestamp: metav1.NewTime(time.Date(2026, 12, 1, 0, i, 0, 0, time.UTC))},
			Data: map[string]string{configFile: strings.Repeat("x", size)}}
	}
	deployment := func(mounts string, ready bool) *appsv1.Deployment {
		d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}}
		d.Spec.Template.Spec = withConfigVolume(mounts, corev1.PodSpec{})
		if ready {
			d.Status = appsv1.DeploymentStatus{UpdatedReplicas: 1, AvailableReplicas: 1, ReadyReplicas: 1}
		}
		return d
	}
	kept := func(obs wire.Children, current string) []string {
		var names []string
		for _, c := range stillMounted(n, obs, current) {
			names = append(names, strings.TrimPrefix(c.Object.GetName(), n.MountedConfigPrefix()))
		}
		slices.Sort(names)
		return names
	}
	obs := wire.Children{ConfigMaps: map[string]*corev1.ConfigMap{}, Deployments: map[string]*appsv1.Deployment{}}
	for i := range 8 {
		obs.ConfigMaps[n.MountedConfig(fmt.Sprintf("%010d", i))] = config(i, 100<<10)
	}
	current := n.MountedConfig(fmt.Sprintf("%010d", 7))
	// The crawler was held on config 1 (say its token was missing); the API
	// rolls to 7.
	obs.Deployments[n.API] = deployment(current, false)
	obs.Deployments[n.Crawler] = deployment(n.MountedConfig(fmt.Sprintf("%010d", 1)), true)
	// 1, mounted; of the others, the newest within 255 KiB: 6 and 5.
	if got, want := kept(obs, current), []string{"0000000001", "0000000005", "0000000006"}; !slices.Equal(got, want) {
		t.Errorf("rolling with 100 KiB configs: kept %v, want %v", got, want)
	}
	for i := range 8 {
		obs.ConfigMaps[n.MountedConfig(fmt.Sprintf("%010d", i))] = config(i, 1<<10)
	}
	if got, want := kept(obs, current), []string{"0000000001", "0000000004", "0000000005", "0000000006"}; !slices.Equal(got, want) {
		t.Errorf("rolling with small configs: kept %v, want %v (the newest 3)", got, want)
	}
	obs.Deployments[n.API] = deployment(current, true)
	if got, want := kept(obs, current), []string{"0000000001"}; !slices.Equal(got, want) {
		t.Errorf("rolled out: kept %v, want %v", got, want)
	}
}
