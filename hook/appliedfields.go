package hook

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metacontrollerManager is the field manager of Metacontroller's
// server-side apply (--apply-strategy=server-side-apply).
const metacontrollerManager = "metacontroller"

// appliedFields returns the part of an observed object (as a JSON map) that
// Metacontroller last applied server-side: the fields its managedFields
// entry owns, with their stored values. Applying exactly that again changes
// neither a value nor an owner, so the API server leaves the object, and its
// resourceVersion, as they are. ok is false when Metacontroller never
// applied the object server-side.
func appliedFields(obj metav1.Object, observed map[string]any) (fields map[string]any, ok bool) {
	for _, e := range obj.GetManagedFields() {
		if e.Manager != metacontrollerManager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var set map[string]any
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &set) != nil {
			return nil, false
		}
		pruned, _ := pruneTo(observed, set).(map[string]any)
		return pruned, pruned != nil
	}
	return nil, false
}

// pruneTo keeps of value what a FieldsV1 set names: "f:name" a field,
// "k:{...}" the list item with those key fields, "v:..." the set item of
// that value, "i:n" the item at that index; an empty set, the whole value.
func pruneTo(value any, set map[string]any) any {
	if len(set) == 0 || len(set) == 1 && set["."] != nil {
		return value
	}
	switch v := value.(type) {
	case map[string]any:
		out := map[string]any{}
		for key, sub := range set {
			name, found := strings.CutPrefix(key, "f:")
			if x, present := v[name]; found && present {
				subset, _ := sub.(map[string]any)
				out[name] = pruneTo(x, subset)
			}
		}
		return out
	case []any:
		var out []any
		for i, item := range v {
			for key, sub := range set {
				if listItemMatches(key, i, item) {
					subset, _ := sub.(map[string]any)
					out = append(out, pruneTo(item, subset))
					break
				}
			}
		}
		return out
	default:
		return value
	}
}

func listItemMatches(key string, index int, item any) bool {
	kind, arg, found := strings.Cut(key, ":")
	if !found {
		return false
	}
	switch kind {
	case "k":
		var keys map[string]any
		m, isMap := item.(map[string]any)
		if !isMap || json.Unmarshal([]byte(arg), &keys) != nil {
			return false
		}
		for k, want := range keys {
			if !reflect.DeepEqual(m[k], want) {
				return false
			}
		}
		return true
	case "v":
		var want any
		return json.Unmarshal([]byte(arg), &want) == nil && reflect.DeepEqual(item, want)
	case "i":
		n, err := strconv.Atoi(arg)
		return err == nil && n == index
	}
	return false
}
