package pods

import (
	"cmp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/check"
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
// scheduling, checked. Its refusals: negative replicas, an image the API
// server would take and each pod refuse, and the values it copies into the
// pods that the API server would refuse.
func Resolve(spec *v1alpha1.MonocleSpec, sched child.Scheduling) (Settings, condition.FieldErrors) {
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
	var errs condition.FieldErrors
	if s.APIReplicas < 0 {
		errs = append(errs, condition.Invalid("api.replicas", "must not be negative"))
	}
	// The API server takes a template whose image has spaces around it,
	// and refuses each of its pods.
	if strings.ContainsAny(s.image, " \t\n") || strings.TrimSpace(s.image) != s.image {
		errs = append(errs, condition.Invalid("image", "%s is not an image reference", condition.Quote(s.image)))
	}
	var refused field.ErrorList
	if spec.API.Resources != nil {
		refused = append(refused, check.Resources(s.apiRes, field.NewPath("api", "resources"))...)
	}
	if spec.Crawler.Resources != nil {
		refused = append(refused, check.Resources(s.crawlerRes, field.NewPath("crawler", "resources"))...)
	}
	// The names of the objects a pod reads (envFrom, a volume) are DNS
	// subdomains. Checked only when set: every sync runs this, and a path
	// costs allocations.
	if s.configMap != "" {
		refused = append(refused, check.DNSSubdomain(s.configMap, field.NewPath("configMapRef", "name"))...)
	}
	if s.secret != "" {
		refused = append(refused, check.DNSSubdomain(s.secret, field.NewPath("secretRef", "name"))...)
	}
	if errs = append(errs, condition.Refusals(refused)...); len(errs) > 0 {
		return Settings{}, errs
	}
	return s, nil
}

func resourcesOr(r *v1alpha1.ResourceRequirements, def corev1.ResourceRequirements) corev1.ResourceRequirements {
	if r == nil {
		return def
	}
	return v1alpha1.Core[corev1.ResourceRequirements](r)
}
