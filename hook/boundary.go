package hook

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// ErrOutsideMonocle marks an answer that would put a child outside its
// Monocle. Metacontroller applies every child with its own cluster-wide
// rights, in the child's own namespace (it sets the parent's only when the
// answer leaves it empty): the answer is the boundary between whoever may
// write in one namespace and everything Metacontroller may write. It is a
// bug of the hook, never a tenant's doing (FuzzBoundary holds that), and the
// request fails rather than answer it.
var ErrOutsideMonocle = errors.New("a child outside its Monocle")

// checkBoundary is the last guard of every answer: each child is of a kind
// of ChildKinds, in the parent's namespace (or none), and named as the hook
// names this Monocle's children or as an observed child of that kind.
func checkBoundary(children []wire.Child, namespace string, n instance.Names, obs wire.Children) error {
	for _, child := range children {
		id, err := identity(child)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrOutsideMonocle, printable.Escape(condition.Cut(err.Error(), condition.MaxQuoted)))
		}
		switch {
		// What a child says is quoted: it may be anything.
		case !slices.ContainsFunc(wire.ChildKinds, func(k wire.ChildKind) bool { return k.TypeMeta == id.TypeMeta }):
			return fmt.Errorf("%w: %s %s is of no kind of child", ErrOutsideMonocle, condition.Quote(id.APIVersion), condition.Quote(id.Kind))
		case id.Namespace != "" && id.Namespace != namespace:
			return fmt.Errorf("%w: %s %s in namespace %s is outside namespace %s", ErrOutsideMonocle, id.Kind, condition.Quote(id.Name), condition.Quote(id.Namespace), condition.Quote(namespace))
		case !ownName(n, id.Name) && !obs.Has(id.TypeMeta, id.Name):
			return fmt.Errorf("%w: %s %s is named neither by the hook nor by an observed child", ErrOutsideMonocle, id.Kind, condition.Quote(id.Name))
		}
	}
	return nil
}

// childIdentity is what Metacontroller reads of a child to apply it.
type childIdentity struct {
	metav1.TypeMeta
	Namespace, Name string
}

// identity reads a child's: a typed object's fields, or those of a JSON
// map (a child answered as last applied), each a string or absent.
func identity(child wire.Child) (childIdentity, error) {
	if m, ok := child.(map[string]any); ok {
		var errs []error
		str := func(path ...string) string {
			s, _, err := unstructured.NestedString(m, path...)
			errs = append(errs, err)
			return s
		}
		id := childIdentity{metav1.TypeMeta{APIVersion: str("apiVersion"), Kind: str("kind")}, str("metadata", "namespace"), str("metadata", "name")}
		return id, errors.Join(errs...)
	}
	obj, ok := child.(interface {
		metav1.Object
		runtime.Object
	})
	if !ok {
		return childIdentity{}, fmt.Errorf("a child of Go type %T", child)
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	return childIdentity{metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, obj.GetNamespace(), obj.GetName()}, nil
}

// ownName: name is one the hook gives a child of this Monocle. A hashed
// name has its hash's exact length, so that no other Monocle's child (of
// Monocle N-config-x, say) passes for one.
func ownName(n instance.Names, name string) bool {
	hashed := func(prefix string, length int) bool {
		hash, ok := strings.CutPrefix(name, prefix)
		return ok && len(hash) == length && strings.Trim(hash, "0123456789abcdef") == ""
	}
	switch name {
	case n.API, n.Elastic, n.Crawler, n.Snapshots:
		return true
	}
	return hashed(n.MountedConfigPrefix(), instance.ConfigHashLength) || hashed(n.UpdateIdentsPrefix(), instance.IdentsHashLength)
}
