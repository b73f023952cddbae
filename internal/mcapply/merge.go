// Package mcapply does what Metacontroller (v4.17) does with a hook's answer
// under its default apply strategy: a client-side three-way merge of the
// desired child into the observed one, through the last answer it keeps in
// an annotation. Tests use it to play Metacontroller's part honestly; the
// service does not.
package mcapply

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// LastAppliedAnnotation holds the last desired object Metacontroller applied.
const LastAppliedAnnotation = "metacontroller.k8s.io/last-applied-configuration"

// systemMetadata are the read-only fields Metacontroller reverts after the
// merge, so that a hook setting them never causes an update.
var systemMetadata = []string{"selfLink", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"}

// Update returns the object Metacontroller would send to the API server to
// bring observed to desired, and whether it differs from observed (when it
// does not, Metacontroller sends nothing).
func Update(observed, desired map[string]any) (map[string]any, bool, error) {
	var lastApplied map[string]any
	if s, _ := nested(observed, "metadata", "annotations", LastAppliedAnnotation).(string); s != "" {
		if err := json.Unmarshal([]byte(s), &lastApplied); err != nil {
			return nil, false, fmt.Errorf("annotation %s: %w", LastAppliedAnnotation, err)
		}
	}
	desired = deepCopy(desired).(map[string]any)
	if ann, ok := nested(desired, "metadata", "annotations").(map[string]any); ok {
		delete(ann, LastAppliedAnnotation)
	}

	merged := merge(deepCopy(observed), lastApplied, desired).(map[string]any)
	for _, f := range systemMetadata {
		revert(merged, observed, "metadata", f)
	}
	revert(merged, observed, "status")
	if err := SetLastApplied(merged, desired); err != nil {
		return nil, false, err
	}
	return merged, !reflect.DeepEqual(merged, observed), nil
}

// SetLastApplied records desired in obj's annotation, as Metacontroller does
// on create and update.
func SetLastApplied(obj, desired map[string]any) error {
	b, err := json.Marshal(desired)
	if err != nil {
		return err
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann[LastAppliedAnnotation] = string(b)
	return nil
}

// merge applies the change from lastApplied to desired onto dst: keys that
// were applied before and are no longer desired are removed, desired keys
// are set, objects merge key by key, lists of objects sharing a merge key
// merge item by item, and any other list or value is replaced.
func merge(dst, lastApplied, desired any) any {
	switch d := dst.(type) {
	case map[string]any:
		des, ok := desired.(map[string]any)
		if !ok && desired != nil {
			return desired
		}
		// A null does not replace an object: like Metacontroller, only the
		// fields last applied are removed from it (so a null never removes
		// what the server defaulted).
		last, _ := lastApplied.(map[string]any)
		return mergeMaps(d, last, des)
	case []any:
		des, ok := desired.([]any)
		if !ok {
			return desired
		}
		last, _ := lastApplied.([]any)
		key := listMapKey(d, last, des)
		if key == "" {
			return desired
		}
		return mergeListMap(key, d, last, des)
	default:
		return desired
	}
}

func mergeMaps(dst, last, des map[string]any) map[string]any {
	for k := range last {
		if _, ok := des[k]; !ok {
			delete(dst, k)
		}
	}
	for k, v := range des {
		dst[k] = merge(dst[k], last[k], v)
	}
	return dst
}

// mergeKeys are the fields Metacontroller guesses a list is keyed by, the
// first one every item has.
var mergeKeys = []string{"containerPort", "port", "mountPath", "name", "uid", "ip", "path"}

func listMapKey(lists ...[]any) string {
	var common map[string]bool
	for _, l := range lists {
		for _, item := range l {
			obj, ok := item.(map[string]any)
			if !ok {
				return ""
			}
			if common == nil {
				common = map[string]bool{}
				for k := range obj {
					common[k] = true
				}
				continue
			}
			for k := range common {
				if _, ok := obj[k]; !ok {
					delete(common, k)
				}
			}
		}
	}
	for _, k := range mergeKeys {
		if common[k] {
			return k
		}
	}
	return ""
}

func mergeListMap(key string, dst, last, des []any) []any {
	index := func(l []any) map[string]any {
		m := make(map[string]any, len(l))
		for _, item := range l {
			m[fmt.Sprint(item.(map[string]any)[key])] = item
		}
		return m
	}
	merged := mergeMaps(index(dst), index(last), index(des))
	// Items already in dst keep their order; new ones follow desired's.
	out := make([]any, 0, len(merged))
	seen := map[string]bool{}
	for _, l := range [][]any{dst, des} {
		for _, item := range l {
			k := fmt.Sprint(item.(map[string]any)[key])
			if v, ok := merged[k]; ok && !seen[k] {
				out = append(out, v)
				seen[k] = true
			}
		}
	}
	return out
}

func nested(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// revert sets path in dst to its value in orig, or removes it if orig has none.
func revert(dst, orig map[string]any, path ...string) {
	parentPath, last := path[:len(path)-1], path[len(path)-1]
	origParent, _ := nested(orig, parentPath...).(map[string]any)
	v, found := origParent[last]
	dstParent, _ := nested(dst, parentPath...).(map[string]any)
	switch {
	case found && dstParent != nil:
		dstParent[last] = deepCopy(v)
	case !found && dstParent != nil:
		delete(dstParent, last)
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	default:
		return v
	}
}
