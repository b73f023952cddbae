package v1alpha1

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Core converts a value of core_types.go's bounded types (or a map of
// bounded strings) to Kubernetes' own type Out, for the pods the hook
// builds. The two share their JSON (the CRD's types are Kubernetes' with
// bounds), so it converts through it: a field added to both needs no code
// here. nil stays nil.
func Core[Out, In any](in In) Out {
	var out Out
	if v := reflect.ValueOf(in); !v.IsValid() || v.IsZero() {
		// Unset, as most optional fields are: no JSON to make.
		return out
	}
	b, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		panic(fmt.Sprintf("%T does not convert to %T: %v", in, out, err))
	}
	return out
}
