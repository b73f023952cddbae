package hook

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/access"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/hook/pods"
)

const (
	DefaultImage        = pods.DefaultImage
	DefaultElasticImage = elastic.DefaultImage
	DefaultPublicURL    = access.DefaultPublicURL
	// MaxConfigJSON bounds a config.yaml by what Metacontroller can apply
	// (hook/pods).
	MaxConfigJSON = pods.MaxConfigJSON
)

// Spec is the Monocle spec, as the CRD (generated from it) defines it.
type Spec = v1alpha1.MonocleSpec

// settings is a spec with its defaults applied and its values checked: all
// that the child constructors read.
type settings struct {
	access  access.Settings
	pods    pods.Settings
	elastic elastic.Settings
	// notes on values applied that are unwise, for SpecApplied's message.
	notes []string
}

// decodeSpec reads a raw spec; a spec of the wrong shape is a fieldError.
func decodeSpec(raw json.RawMessage) (Spec, *condition.FieldError) {
	var spec Spec
	if len(bytes.TrimSpace(raw)) == 0 {
		return spec, nil
	}
	// null decodes to the empty spec.
	if err := json.Unmarshal(raw, &spec); err != nil {
		if typeErr, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && typeErr.Field != "" {
			return spec, condition.Invalid(typeErr.Field, "must be a %s, not a JSON %s", typeErr.Type, typeErr.Value)
		}
		return spec, condition.Invalid("", "spec is not valid: %v", err)
	}
	return spec, nil
}

// resolveSpec decodes and checks a raw spec. The CRD schema already rejects
// most bad values; this is the hook's own guard for objects written before
// the schema, or with validation off.
func resolveSpec(raw json.RawMessage) (settings, *condition.FieldError) {
	if ferr := checkBounds(raw); ferr != nil {
		return settings{}, ferr
	}
	spec, ferr := decodeSpec(raw)
	if ferr != nil {
		return settings{}, ferr
	}
	// Each part resolves its section, its checks included; the refusals
	// are collected, and the first by field path is the one named, so that
	// a spec gets the same first error whatever order the parts ran in.
	sched, errs := child.ResolveScheduling(&spec)
	var s settings
	var partErrs condition.FieldErrors
	s.pods, partErrs = pods.Resolve(&spec, sched)
	errs = append(errs, partErrs...)
	s.access, partErrs = access.Resolve(&spec)
	errs = append(errs, partErrs...)
	var note string
	s.elastic, note, partErrs = elastic.Resolve(&spec, sched)
	if errs = append(errs, partErrs...); len(errs) > 0 {
		return settings{}, errs.First()
	}
	if note != "" {
		s.notes = append(s.notes, note)
	}
	return s, nil
}
