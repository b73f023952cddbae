package hook

import (
	"encoding/json"
	"maps"
	"slices"
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
// the canonical JSON of what it names, so that pruning a list costs one
// lookup per item: an object may hold thousands of finalizers.
type listKeys struct {
	byValue map[string]map[string]any // "v:": the item's JSON
	byIndex map[int]map[string]any    // "i:"
	// "k:": by the JSON of the named fields' values, per set of field names
	// (a list's items are keyed by the same fields).
	byFields map[string]map[string]map[string]any
	fields   map[string][]string
}

func indexListKeys(set map[string]any) listKeys {
	ix := listKeys{byValue: map[string]map[string]any{}, byIndex: map[int]map[string]any{},
		byFields: map[string]map[string]map[string]any{}, fields: map[string][]string{}}
	for key, sub := range set {
		subset, _ := sub.(map[string]any)
		kind, arg, _ := strings.Cut(key, ":")
		switch kind {
		case "k":
			var keys map[string]any
			if json.Unmarshal([]byte(arg), &keys) != nil {
				continue
			}
			names := slices.Sorted(maps.Keys(keys))
			id := strings.Join(names, "\x00")
			if ix.byFields[id] == nil {
				ix.byFields[id], ix.fields[id] = map[string]map[string]any{}, names
			}
			ix.byFields[id][canonical(keys)] = subset
		case "v":
			var want any
			if json.Unmarshal([]byte(arg), &want) == nil {
				ix.byValue[canonical(want)] = subset
			}
		case "i":
			if n, err := strconv.Atoi(arg); err == nil {
				ix.byIndex[n] = subset
			}
		}
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
			if subset, ok := ix.byFields[id][canonical(keys)]; ok {
				return subset, true
			}
		}
	}
	if len(ix.byValue) > 0 {
		if subset, ok := ix.byValue[canonical(item)]; ok {
			return subset, true
		}
	}
	subset, ok := ix.byIndex[index]
	return subset, ok
}

// canonical is a decoded JSON value's JSON: maps' keys sorted, so that
// equal values give equal strings.
func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
