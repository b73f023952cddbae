// Package applied answers a child as Metacontroller last applied it, under
// either of its apply strategies: the object in its last-applied annotation
// (three-way merge), else the fields its managedFields entry owns
// (server-side apply). A spec or config the hook cannot honour holds the
// children it concerns this way, so that nothing moves.
package applied

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/change-metrics/monocle-hook/hook/wire"
)

// Annotation is where Metacontroller's default (three-way merge) apply
// keeps what the hook last answered for a child.
const Annotation = "metacontroller.k8s.io/last-applied-configuration"

// Children answers every observed child with what the hook last answered
// for it, so that a spec the hook cannot honour deletes nothing and rolls
// nothing. Metacontroller's default apply keeps that answer in an
// annotation; a child without one (server-side apply keeps none) is answered
// as observed, less what the server owns. The data of the Secret and the
// ConfigMap is always the observed data: it holds an admin's edits, which
// the hook keeps in every answer.
// ctx is the request's: once it is done, Children stops and returns its
// error. Nil: never done.
func Children(ctx context.Context, observed []wire.Observed) ([]wire.Child, error) {
	var children []wire.Child
	for _, c := range observed {
		if ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		child, err := Child(c.Object, c.Type)
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

// Child is a child answered as last applied, as a JSON map: the
// answer's encoding writes it, and checkBoundary reads what it will write.
func Child(obj metav1.Object, typ metav1.TypeMeta) (map[string]any, error) {
	child, observed, err := Object(obj, typ)
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
			unstructured.RemoveNestedField(child, "metadata", "annotations", Annotation)
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

// Object is what Metacontroller last applied of obj, under
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
func Object(obj metav1.Object, typ metav1.TypeMeta) (applied, observed map[string]any, err error) {
	annotation := obj.GetAnnotations()[Annotation]
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

// Has reports whether what Metacontroller last applied of obj,
// of type typ, under either apply strategy, sets the field at path.
func Has(obj metav1.Object, typ metav1.TypeMeta, path ...string) bool {
	applied, _, _ := Object(obj, typ)
	v, _, _ := unstructured.NestedFieldNoCopy(applied, path...)
	return v != nil
}
