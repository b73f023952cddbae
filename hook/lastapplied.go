package hook

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/internal/instance"
)

// lastApplied answers every observed child with what the hook last answered
// for it, so that a spec the hook cannot honour deletes nothing and rolls
// nothing. Metacontroller's default apply keeps that answer in an
// annotation; a child without one (server-side apply keeps none) is answered
// as observed, less what the server owns. The data of the Secret and the
// ConfigMap is always the observed data: it holds an admin's edits, which
// the hook keeps in every answer.
func lastApplied(env Env, observed []observedChild) ([]Child, error) {
	var children []Child
	for _, c := range observed {
		if err := env.done(); err != nil {
			return nil, err
		}
		child, err := lastAppliedChild(c.obj, c.typ)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.obj.GetName(), err)
		}
		children = append(children, child)
	}
	return children, nil
}

// serverOwnedMetadata is what the API server writes into metadata.
var serverOwnedMetadata = []string{"uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "ownerReferences", "selfLink"}

func lastAppliedChild(obj metav1.Object, typ metav1.TypeMeta) (json.RawMessage, error) {
	child := lastAppliedObject(obj)
	if child == nil {
		observed, err := asMap(obj)
		if err != nil {
			return nil, err
		}
		// Server-side apply keeps no annotation: what Metacontroller applied
		// is what its managedFields entry owns. Else, the observed object
		// less what the server writes.
		var applied bool
		if child, applied = appliedFields(obj, observed); !applied {
			child = observed
			delete(child, "status")
			if md, ok := child["metadata"].(map[string]any); ok {
				for _, f := range serverOwnedMetadata {
					delete(md, f)
				}
			}
		}
		md, _ := child["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			child["metadata"] = md
		}
		md["name"] = obj.GetName()
	}
	// Metacontroller fails a sync whose children lack either.
	child["apiVersion"], child["kind"] = typ.APIVersion, typ.Kind
	var data any
	switch o := obj.(type) {
	case *corev1.Secret:
		if len(o.Data) > 0 {
			data = o.Data
		}
	case *corev1.ConfigMap:
		if len(o.Data) > 0 {
			data = o.Data
		}
	default:
		return json.Marshal(child)
	}
	// stringData, if an earlier hook wrote one, is already in data.
	delete(child, "stringData")
	if data == nil {
		delete(child, "data")
	} else {
		child["data"] = data
	}
	return json.Marshal(child)
}

// lastAppliedObject is the object in obj's last-applied annotation, or nil
// when there is none. An annotation someone broke by hand counts as none.
func lastAppliedObject(obj metav1.Object) map[string]any {
	annotation := obj.GetAnnotations()[lastAppliedAnnotation]
	if annotation == "" {
		return nil
	}
	var child map[string]any
	if json.Unmarshal([]byte(annotation), &child) != nil {
		return nil
	}
	return child
}

// lastAppliedHas reports whether what Metacontroller last applied of obj,
// under either apply strategy, sets the field at path.
func lastAppliedHas(obj metav1.Object, path ...string) bool {
	applied := lastAppliedObject(obj)
	if applied == nil {
		observed, err := asMap(obj)
		if err != nil {
			return false
		}
		applied, _ = appliedFields(obj, observed)
	}
	var v any = applied
	for _, p := range path {
		m, _ := v.(map[string]any)
		if v = m[p]; v == nil {
			return false
		}
	}
	return true
}

func asMap(obj metav1.Object) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// heldByPods lists the observed children that read the config or run the
// Monocle image: the API and the crawler, their ConfigMaps, and the
// update-idents Jobs.
func heldByPods(n instance.Names, obs Children) []observedChild {
	held := Children{ConfigMaps: map[string]*corev1.ConfigMap{}, Deployments: map[string]*appsv1.Deployment{}, Jobs: map[string]*batchv1.Job{}}
	for name, cm := range obs.ConfigMaps {
		if name == n.API || strings.HasPrefix(name, n.MountedConfigPrefix()) {
			held.ConfigMaps[name] = cm
		}
	}
	for _, name := range []string{n.API, n.Crawler} {
		if d := obs.Deployments[name]; d != nil {
			held.Deployments[name] = d
		}
	}
	for name, job := range obs.Jobs {
		if strings.HasPrefix(name, n.UpdateIdentsPrefix()) {
			held.Jobs[name] = job
		}
	}
	return held.all()
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
func stillMounted(n instance.Names, obs Children, current string) []observedChild {
	keep := map[string]bool{}
	rolling := false
	for _, name := range []string{n.API, n.Crawler} {
		if d := obs.Deployments[name]; d != nil {
			keep[mountedConfigOf(d)] = true
			rolling = rolling || !deploymentReady(d)
		}
	}
	for _, job := range obs.Jobs {
		if !jobCondition(job, batchv1.JobComplete) && !jobCondition(job, batchv1.JobFailed) {
			keep[volumeConfigMap(job.Spec.Template.Spec.Volumes)] = true
		}
	}
	held := Children{ConfigMaps: map[string]*corev1.ConfigMap{}}
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
	return held.all()
}

// The earlier configs kept only for a rollout: with the largest Monocle the
// CRD admits (a 3.3 MB request), one more config of the largest size (255
// KiB, and its last-applied copy) stays under the 4 MiB body limit.
const (
	maxRolloutConfigs     = 3
	maxRolloutConfigBytes = MaxConfigJSON
)
