package applied

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Manager is the field manager of Metacontroller's
// server-side apply (--apply-strategy=server-side-apply).
const Manager = "metacontroller"

// appliedFields returns the part of an observed object (as a JSON map) that
// Metacontroller last applied server-side: the fields its managedFields
// entry owns, with their stored values. Applying exactly that again changes
// neither a value nor an owner, so the API server leaves the object, and its
// resourceVersion, as they are. nil when Metacontroller never applied the
// object server-side.
func appliedFields(obj metav1.Object, observed map[string]any) map[string]any {
	for _, e := range obj.GetManagedFields() {
		if e.Manager != Manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var set map[string]any
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &set) != nil {
			return nil
		}
		pruned, _ := pruneTo(observed, set).(map[string]any)
		return pruned
	}
	return nil
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
		index := indexListKeys(set)
		var out []any
		for i, item := range v {
			if subset, ok := index.match(i, item); ok {
				out = append(out, pruneTo(item, subset))
			}
		}
		return out
	default:
		return value
	}
}

// listKeys are a list's FieldsV1 keys, each decoded once and indexed by
// its kind and the canonical JSON of what it names, so that pruning a list
// costs one lookup per item: an object may hold thousands of finalizers.
type listKeys struct {
	subsets map[string]map[string]any // by "k:", "v:" or "i:" and that JSON
	// The field names of the "k:" keys, per set of names (a list's items
	// are keyed by the same fields).
	fields    map[string][]string
	hasValues bool // "v:" keys: only then is each item's JSON looked up
}

func indexListKeys(set map[string]any) listKeys {
	ix := listKeys{subsets: map[string]map[string]any{}, fields: map[string][]string{}}
	for key, sub := range set {
		kind, arg, _ := strings.Cut(key, ":")
		// What each names is JSON: an object, a value, an index.
		var named any
		if !slices.Contains([]string{"k", "v", "i"}, kind) || json.Unmarshal([]byte(arg), &named) != nil {
			continue
		}
		if keys, ok := named.(map[string]any); ok && kind == "k" {
			names := slices.Sorted(maps.Keys(keys))
			ix.fields[strings.Join(names, "\x00")] = names
		}
		ix.hasValues = ix.hasValues || kind == "v"
		subset, _ := sub.(map[string]any)
		ix.subsets[kind+":"+canonical(named)] = subset
	}
	return ix
}

// match is the subset of the key naming item, the index-th of its list.
func (ix listKeys) match(index int, item any) (map[string]any, bool) {
	if m, isMap := item.(map[string]any); isMap {
		for _, id := range slices.Sorted(maps.Keys(ix.fields)) {
			names := ix.fields[id]
			keys := make(map[string]any, len(names))
			for _, name := range names {
				keys[name] = m[name]
			}
			if subset, ok := ix.subsets["k:"+canonical(keys)]; ok {
				return subset, true
			}
		}
	}
	if ix.hasValues {
		if subset, ok := ix.subsets["v:"+canonical(item)]; ok {
			return subset, true
		}
	}
	subset, ok := ix.subsets["i:"+strconv.Itoa(index)]
	return subset, ok
}

// canonical is a decoded JSON value's JSON: maps' keys sorted, so that
// equal values give equal strings.
func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
