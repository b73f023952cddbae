package hook

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/access"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

const (
	DefaultImage        = "quay.io/change-metrics/monocle:1.11.2"
	DefaultElasticImage = elastic.DefaultImage
	DefaultPublicURL    = access.DefaultPublicURL
)

// Spec is the Monocle spec, as the CRD (generated from it) defines it.
type Spec = v1alpha1.MonocleSpec

// settings is a spec with its defaults applied and its values checked: all
// that the child constructors read.
type settings struct {
	access      access.Settings
	webappTitle string
	image       string
	elastic     elastic.Settings
	apiReplicas int32
	apiRes      corev1.ResourceRequirements
	crawler     bool
	crawlerRes  corev1.ResourceRequirements
	config      string // inline config.yaml; "" when not given
	configMap   string // a user-owned ConfigMap to mount instead of N-api
	secret      string // a user-owned Secret added to the pods' environment
	scheduling  child.Scheduling
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
	sched := child.Scheduling{
		NodeSelector:     v1alpha1.Core[map[string]string](spec.NodeSelector),
		Tolerations:      v1alpha1.Core[[]corev1.Toleration](spec.Tolerations),
		Affinity:         v1alpha1.Core[*corev1.Affinity](spec.Affinity),
		ImagePullSecrets: v1alpha1.Core[[]corev1.LocalObjectReference](spec.ImagePullSecrets),
	}
	if ferr := validateChildValues(&spec, sched); ferr != nil {
		return settings{}, ferr
	}
	s := settings{
		webappTitle: spec.WebappTitle,
		image:       cmp.Or(spec.Image, DefaultImage),
		apiReplicas: ptr.Deref(spec.API.Replicas, 1),
		apiRes:      resourcesOr(spec.API.Resources, instance.Resources("100m", "256Mi", "1Gi")),
		crawler:     ptr.Deref(spec.Crawler.Enabled, true),
		crawlerRes:  resourcesOr(spec.Crawler.Resources, instance.Resources("50m", "128Mi", "512Mi")),
		config:      spec.Config,
		configMap:   ptr.Deref(spec.ConfigMapRef, v1alpha1.LocalRef{}).Name,
		secret:      ptr.Deref(spec.SecretRef, v1alpha1.LocalRef{}).Name,
		scheduling:  sched,
	}
	if s.apiReplicas < 0 {
		return settings{}, condition.Invalid("api.replicas", "must not be negative")
	}
	// In the order of the checks, so that a spec gets the same first error.
	for _, resolve := range []func(*Spec, *settings) *condition.FieldError{resolveAccess, checkImages} {
		if ferr := resolve(&spec, &s); ferr != nil {
			return settings{}, ferr
		}
	}
	var note string
	if s.elastic, note, ferr = elastic.Resolve(&spec, sched); ferr != nil {
		return settings{}, ferr
	}
	if note != "" {
		s.notes = append(s.notes, note)
	}
	return s, nil
}

// resolveAccess reads how the API is reached: the Ingress and the public
// URL (hook/access).
func resolveAccess(spec *Spec, s *settings) (ferr *condition.FieldError) {
	s.access, ferr = access.Resolve(spec)
	return ferr
}

// checkImages: the API server takes a template whose image has spaces
// around it, and refuses each of its pods.
func checkImages(_ *Spec, s *settings) *condition.FieldError {
	if strings.ContainsAny(s.image, " \t\n") || strings.TrimSpace(s.image) != s.image {
		return condition.Invalid("image", "%s is not an image reference", condition.Quote(s.image))
	}
	return nil
}

func resourcesOr(r *v1alpha1.ResourceRequirements, def corev1.ResourceRequirements) corev1.ResourceRequirements {
	if r == nil {
		return def
	}
	return v1alpha1.Core[corev1.ResourceRequirements](r)
}
