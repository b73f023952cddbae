package condition

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FieldErrors are the refusals a part finds in its section of a spec, in
// the order its checks ran.
type FieldErrors []*FieldError

// First is the refusal of the first field path (of one field, the first
// found): what InvalidSpec names, whatever order the parts checked in.
func (errs FieldErrors) First() *FieldError {
	if len(errs) == 0 {
		return nil
	}
	return slices.MinFunc(errs, func(a, b *FieldError) int { return strings.Compare(a.Field, b.Field) })
}

// Refusals are the API server's errors for values a spec copies into its
// children (hook/check), each as the refusal of its field.
func Refusals(errs field.ErrorList) FieldErrors {
	if len(errs) == 0 {
		return nil
	}
	out := make(FieldErrors, len(errs))
	for i, e := range errs {
		msg := e.Type.String()
		if v, ok := e.BadValue.(string); ok && e.Type != field.ErrorTypeRequired {
			msg += " " + Quote(v)
		}
		if e.Detail != "" {
			msg += ": " + e.Detail
		}
		out[i] = Invalid(e.Field, "%s (the API server would refuse the children)", msg)
	}
	return out
}
