package condition

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// First is the refusal of the first field path, whatever order the checks
// found them in; of one field, the first found.
func TestFieldErrorsFirst(t *testing.T) {
	a, b, b2, top := Invalid("api.replicas", "a"), Invalid("image", "b"), Invalid("image", "b2"), Invalid("", "top")
	for _, tc := range []struct {
		name string
		errs FieldErrors
		want *FieldError
	}{
		{"none", nil, nil},
		{"one", FieldErrors{b}, b},
		{"in path order", FieldErrors{a, b}, a},
		{"in the other order", FieldErrors{b, a}, a},
		{"one field twice: the first found", FieldErrors{b2, b}, b2},
		{"the whole spec first", FieldErrors{b, a, top}, top},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.errs.First(); got != tc.want {
				t.Errorf("First = %v, want %v", got, tc.want)
			}
		})
	}
}

// Refusals says each API server error as InvalidSpec on its field, a
// string value quoted, except a Required one's.
func TestRefusals(t *testing.T) {
	got := Refusals(field.ErrorList{
		field.Invalid(field.NewPath("storageClassName"), "Fast_SSD", "a lowercase RFC 1123 subdomain"),
		field.Required(field.NewPath("affinity", "x"), "must be set"),
	})
	want := []string{
		`spec.storageClassName Invalid value "Fast_SSD": a lowercase RFC 1123 subdomain (the API server would refuse the children)`,
		`spec.affinity.x Required value: must be set (the API server would refuse the children)`,
	}
	if len(got) != len(want) {
		t.Fatalf("Refusals = %v, want %d", got, len(want))
	}
	for i := range want {
		if got[i].Error() != want[i] || got[i].Reason != ReasonInvalidSpec {
			t.Errorf("refusal %d = %s %q, want InvalidSpec %q", i, got[i].Reason, got[i].Error(), want[i])
		}
	}
	if Refusals(nil) != nil {
		t.Error("Refusals(nil) is not nil")
	}
}
