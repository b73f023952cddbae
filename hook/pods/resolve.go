package pods

import (
	"cmp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// DefaultImage is Monocle's, which the API, the crawler and the
// update-idents Job run unless the spec names another.
const DefaultImage = "quay.io/change-metrics/monocle:1.11.2"

// Settings are the pods' section of the spec (image, api, crawler, config,
// configMapRef, secretRef, webappTitle, and the scheduling) with their
// defaults applied and their values checked: all that the pods' children
// read of the spec.
type Settings struct {
	webappTitle string
	image       string
	// APIReplicas: the API's replicas.
	APIReplicas int32
	apiRes      corev1.ResourceRequirements
	crawler     bool
	crawlerRes  corev1.ResourceRequirements
	config      string // inline config.yaml; "" when not given
	configMap   string // a user-owned ConfigMap to mount instead of N-api
	secret      string // a user-owned Secret added to the pods' environment
	scheduling  child.Scheduling
}

// Resolve reads the pods' section of the spec; sched is the spec's
// scheduling, checked. Its one check is of the replicas: the image is
// checked after the API's access (CheckImage), in the order of the spec's
// checks, so that a spec gets the same first error.
func Resolve(spec *v1alpha1.MonocleSpec, sched child.Scheduling) (Settings, *condition.FieldError) {
	s := Settings{
		webappTitle: spec.WebappTitle,
		image:       cmp.Or(spec.Image, DefaultImage),
		APIReplicas: ptr.Deref(spec.API.Replicas, 1),
		apiRes:      resourcesOr(spec.API.Resources, instance.Resources("100m", "256Mi", "1Gi")),
		crawler:     ptr.Deref(spec.Crawler.Enabled, true),
		crawlerRes:  resourcesOr(spec.Crawler.Resources, instance.Resources("50m", "128Mi", "512Mi")),
		config:      spec.Config,
		configMap:   ptr.Deref(spec.ConfigMapRef, v1alpha1.LocalRef{}).Name,
		secret:      ptr.Deref(spec.SecretRef, v1alpha1.LocalRef{}).Name,
		scheduling:  sched,
	}
	if s.APIReplicas < 0 {
		return Settings{}, condition.Invalid("api.replicas", "must not be negative")
	}
	return s, nil
}

// CheckImage: the API server takes a template whose image has spaces
// around it, and refuses each of its pods.
func (s Settings) CheckImage() *condition.FieldError {
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
