package hook

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lastApplied answers every observed child with what the hook last answered
// for it, so that a spec the hook cannot honour deletes nothing and rolls
// nothing. Metacontroller's default apply keeps that answer in an
// annotation; a child without one (server-side apply keeps none) is answered
// as observed, less what the server owns. The data of the Secret and the
// ConfigMap is always the observed data: it holds an admin's edits, which
// the hook keeps in every answer.
func lastApplied(obs observed) ([]Child, error) {
	var children []Child
	for _, c := range obs.all() {
		child, err := lastAppliedChild(c.obj, c.typ)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.obj.GetName(), err)
		}
		children = append(children, child)
	}
	return children, nil
}

// observedChild is an observed child and its type.
type observedChild struct {
	obj metav1.Object
	typ metav1.TypeMeta
}

// all lists every observed child, by type then by name.
func (obs observed) all() (out []observedChild) {
	for _, g := range []struct {
		typ  metav1.TypeMeta
		objs []metav1.Object
	}{
		{typeSecret, sorted(obs.secrets)}, {typeConfigMap, sorted(obs.configMaps)},
		{typeService, sorted(obs.services)}, {typeStatefulSet, sorted(obs.statefulSets)},
		{typeDeployment, sorted(obs.deployments)}, {typeJob, sorted(obs.jobs)}, {typeIngress, sorted(obs.ingresses)},
	} {
		for _, o := range g.objs {
			out = append(out, observedChild{o, g.typ})
		}
	}
	return out
}

// sorted lists observed children by name.
func sorted[T any, P interface {
	*T
	metav1.Object
}](m map[string]P) []metav1.Object {
	out := make([]metav1.Object, 0, len(m))
	for _, name := range sortedKeys(m) {
		out = append(out, m[name])
	}
	return out
}

// serverOwnedMetadata is what the API server writes into metadata.
var serverOwnedMetadata = []string{"uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "ownerReferences", "selfLink"}

func lastAppliedChild(obj metav1.Object, typ metav1.TypeMeta) (json.RawMessage, error) {
	child := lastAppliedObject(obj)
	if child == nil {
		observedJSON, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		var observed map[string]any
		if err := json.Unmarshal(observedJSON, &observed); err != nil {
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
