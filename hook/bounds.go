package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/crd"
	"github.com/change-metrics/monocle-hook/hook/condition"
)

// bounds is the part of the CRD's schema that bounds a spec's size: each
// string's length, list's items and map's entries. A Monocle stored before
// a bound existed keeps its values (CRD ratcheting keeps them on update
// too), so the hook checks them again before it decodes the spec.
type bounds struct {
	MaxLength            *int               `json:"maxLength"`
	MaxItems             *int               `json:"maxItems"`
	MaxProperties        *int               `json:"maxProperties"`
	Properties           map[string]*bounds `json:"properties"`
	Items                *bounds            `json:"items"`
	AdditionalProperties *bounds            `json:"additionalProperties"`
}

// specBounds is read once from the CRD embedded in the binary.
var specBounds = sync.OnceValue(func() *bounds {
	var doc struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema bounds `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(crd.YAML, &doc); err != nil || len(doc.Spec.Versions) != 1 {
		panic(fmt.Sprintf("the embedded CRD has no one version's schema: %v", err))
	}
	spec := doc.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if spec == nil {
		panic("the embedded CRD's schema has no spec")
	}
	return spec
})

// checkBounds walks a raw spec token by token against the CRD's bounds: it
// builds nothing, so a spec of a million empty affinity terms costs no more
// than its bytes, and it stops at the first value over a bound. Strings are
// counted in characters, as the API server counts them.
func checkBounds(raw []byte) *condition.FieldError {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return walkBounds(json.NewDecoder(bytes.NewReader(raw)), specBounds(), "")
}

func walkBounds(dec *json.Decoder, b *bounds, path string) *condition.FieldError {
	tok, err := dec.Token()
	if err != nil {
		return condition.Invalid(path, "is not valid JSON: %v", err)
	}
	if b == nil {
		b = &bounds{} // a field the schema does not know: walked, not bounded
	}
	switch t := tok.(type) {
	case string:
		if b.MaxLength != nil && len(t) > *b.MaxLength {
			if n := utf8.RuneCountInString(t); n > *b.MaxLength {
				return condition.Invalid(path, "is %d characters long, over the CRD's %d", n, *b.MaxLength)
			}
		}
	case json.Delim:
		limit, what := b.MaxItems, "items"
		if t == '{' {
			limit, what = b.MaxProperties, "entries"
		}
		for i := 0; dec.More(); i++ {
			if limit != nil && i == *limit {
				return condition.Invalid(path, "has more than the CRD's %d %s", *limit, what)
			}
			child, sub := b.Items, ""
			if t == '[' {
				sub = path + "[" + strconv.Itoa(i) + "]"
			} else {
				key, err := dec.Token()
				if err != nil {
					return condition.Invalid(path, "is not valid JSON: %v", err)
				}
				k, _ := key.(string)
				child, sub = b.Properties[k], joinField(path, k)
				if child == nil && b.AdditionalProperties != nil {
					child, sub = b.AdditionalProperties, path+"["+condition.Quote(k)+"]"
				}
			}
			if err := walkBounds(dec, child, sub); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // the closing ] or }
			return condition.Invalid(path, "is not valid JSON: %v", err)
		}
	}
	return nil
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
