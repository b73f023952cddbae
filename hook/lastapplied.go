package hook

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// lastApplied answers every observed child with what the hook last answered
// for it, so that a spec the hook cannot honour deletes nothing and rolls
// nothing. Metacontroller's default apply keeps that answer in an
// annotation; a child without one (server-side apply keeps none) is answered
// as observed, less what the server owns. The data of the Secret and the
// ConfigMap is always the observed data: it holds an admin's edits, which
// the hook keeps in every answer.
func lastApplied(env Env, observed []wire.Observed) ([]wire.Child, error) {
	var children []wire.Child
	for _, c := range observed {
		if err := env.done(); err != nil {
			return nil, err
		}
		child, err := lastAppliedChild(c.Object, c.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Object.GetName(), err)
		}
		children = append(children, child)
	}
	return children, nil
}

// serverOwnedMetadata is what the API server writes into metadata.
var serverOwnedMetadata = []string{"uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "ownerReferences", "selfLink"}

// lastAppliedChild is a child answered as last applied, as a JSON map: the
// answer's encoding writes it, and checkBoundary reads what it will write.
func lastAppliedChild(obj metav1.Object, typ metav1.TypeMeta) (map[string]any, error) {
	child, observed, err := lastAppliedObject(obj, typ)
	if err != nil {
		return nil, err
	}
	if observed != nil {
		// No annotation: what Metacontroller applied server-side, else the
		// observed object less what the server writes.
		if child == nil {
			child = observed
			delete(child, "status")
			for _, f := range serverOwnedMetadata {
				unstructured.RemoveNestedField(child, "metadata", f)
			}
			// A copy that did not name obj: Metacontroller writes its own.
			unstructured.RemoveNestedField(child, "metadata", "annotations", lastAppliedAnnotation)
		}
		// metadata, if there, is a map: both are obj's JSON.
		_ = unstructured.SetNestedField(child, obj.GetName(), "metadata", "name")
	}
	// Metacontroller fails a sync whose children lack either.
	child["apiVersion"], child["kind"] = typ.APIVersion, typ.Kind
	switch o := obj.(type) {
	case *corev1.Secret:
		observedData(child, o.Data)
	case *corev1.ConfigMap:
		observedData(child, o.Data)
	}
	return child, nil
}

// observedData sets the data of a Secret or ConfigMap child to the observed
// data. stringData, if an earlier hook wrote one, is already in data.
func observedData[V any](child map[string]any, data map[string]V) {
	delete(child, "stringData")
	delete(child, "data")
	if len(data) > 0 {
		child["data"] = data
	}
}

// lastAppliedObject is what Metacontroller last applied of obj, under
// either apply strategy: the object in its last-applied annotation, else
// (server-side apply keeps no annotation) the fields its managedFields
// entry owns; nil when neither. observed is obj as a JSON map, read when
// there is no annotation.
//
// Whoever may edit the child may write the annotation, and Metacontroller
// applies the answer with its own rights wherever the answer puts it: an
// annotation that is not JSON, or names another kind, namespace or name
// than obj's own, counts as none. The managedFields path takes every value
// from obj itself, and its name is set from obj.
func lastAppliedObject(obj metav1.Object, typ metav1.TypeMeta) (applied, observed map[string]any, err error) {
	annotation := obj.GetAnnotations()[lastAppliedAnnotation]
	if annotation != "" && json.Unmarshal([]byte(annotation), &applied) == nil && sameObject(applied, obj, typ) {
		return applied, nil, nil
	}
	observed, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, nil, err
	}
	return appliedFields(obj, observed), observed, nil
}

// sameObject: applied names obj, of type typ. A namespace is obj's own or
// none (Metacontroller then sets the parent's, which obj is in).
// Each is a string or absent: any other value is not an identity.
func sameObject(applied map[string]any, obj metav1.Object, typ metav1.TypeMeta) bool {
	is := func(want string, path ...string) bool {
		s, _, err := unstructured.NestedString(applied, path...)
		return err == nil && s == want
	}
	return is(typ.APIVersion, "apiVersion") && is(typ.Kind, "kind") && is(obj.GetName(), "metadata", "name") &&
		(is("", "metadata", "namespace") || is(obj.GetNamespace(), "metadata", "namespace"))
}

// lastAppliedHas reports whether what Metacontroller last applied of obj,
// of type typ, under either apply strategy, sets the field at path.
func lastAppliedHas(obj metav1.Object, typ metav1.TypeMeta, path ...string) bool {
	applied, _, _ := lastAppliedObject(obj, typ)
	v, _, _ := unstructured.NestedFieldNoCopy(applied, path...)
	return v != nil
}

// heldByPods lists the observed children that read the config or run the
// Monocle image: the API and the crawler, their ConfigMaps, and the
// update-idents Jobs.
func heldByPods(n instance.Names, obs wire.Children) []wire.Observed {
	return slices.DeleteFunc(obs.All(), func(c wire.Observed) bool {
		name := c.Object.GetName()
		switch c.Type {
		case wire.TypeConfigMap:
			return name != n.API && !strings.HasPrefix(name, n.MountedConfigPrefix())
		case wire.TypeDeployment:
			return name != n.API && name != n.Crawler
		case wire.TypeJob:
			return !strings.HasPrefix(name, n.UpdateIdentsPrefix())
		}
		return true
	})
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
func stillMounted(n instance.Names, obs wire.Children, current string) []wire.Observed {
	keep := map[string]bool{}
	rolling := false
	for _, name := range []string{n.API, n.Crawler} {
		if d := obs.Deployments[name]; d != nil {
			keep[mountedConfigOf(d)] = true
			rolling = rolling || !condition.DeploymentReady(d)
		}
	}
	for _, job := range obs.Jobs {
		if !condition.JobCondition(job, batchv1.JobComplete) && !condition.JobCondition(job, batchv1.JobFailed) {
			keep[volumeConfigMap(job.Spec.Template.Spec.Volumes)] = true
		}
	}
	held := wire.Children{ConfigMaps: map[string]*corev1.ConfigMap{}}
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
	return held.All()
}

// The earlier configs kept only for a rollout: with the largest Monocle the
// CRD admits (its request's size: TestLargestMonocle, BENCHMARKS.md), one
// more config of the largest size (255 KiB, and its last-applied copy)
// stays under the 4 MiB body limit.
const (
	maxRolloutConfigs     = 3
	maxRolloutConfigBytes = MaxConfigJSON
)
