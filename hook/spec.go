package hook

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

const (
	DefaultImage        = "quay.io/change-metrics/monocle:1.11.2"
	DefaultElasticImage = elastic.DefaultImage
	// DefaultPublicURL is the seed operator's default: the UI reached through
	// `kubectl port-forward svc/N-api 8090:8080`. Not the Service's URL: a
	// browser cannot resolve a cluster Service name.
	DefaultPublicURL = "http://localhost:8090"
)

// Spec is the Monocle spec, as the CRD (generated from it) defines it.
type Spec = v1alpha1.MonocleSpec

// settings is a spec with its defaults applied and its values checked: all
// that the child constructors read.
type settings struct {
	publicURL   string
	webappTitle string
	image       string
	elastic     elastic.Settings
	apiReplicas int32
	apiRes      corev1.ResourceRequirements
	crawler     bool
	crawlerRes  corev1.ResourceRequirements
	ingress     *ingressSettings // nil: no Ingress
	config      string           // inline config.yaml; "" when not given
	configMap   string           // a user-owned ConfigMap to mount instead of N-api
	secret      string           // a user-owned Secret added to the pods' environment
	scheduling  child.Scheduling
	// notes on values applied that are unwise, for SpecApplied's message.
	notes []string
}

// ingressSettings is the spec's Ingress with the seed's route.host folded
// in: the seed always made an edge-TLS Route, so a route.host gets TLS too.
type ingressSettings struct {
	v1alpha1.IngressSpec
	annotations map[string]string
	edgeTLS     bool
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
	for _, resolve := range []func(*Spec, *settings) *condition.FieldError{resolvePublicURL, checkImages} {
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

// resolvePublicURL sets the Ingress and the public URL: given, else the
// Ingress's, else the port-forward one.
func resolvePublicURL(spec *Spec, s *settings) *condition.FieldError {
	urlField, urlValue := "publicURL", spec.PublicURL
	if urlValue == "" && spec.MonoclePublicURL != "" {
		urlField, urlValue = "monoclePublicURL", spec.MonoclePublicURL
	}
	in := ingressSettings{IngressSpec: ptr.Deref(spec.Ingress, v1alpha1.IngressSpec{})}
	if in.Host == "" && spec.Route != nil && spec.Route.Host != "" {
		in.Host, in.edgeTLS = spec.Route.Host, true // the seed's OpenShift route
	}
	if spec.Ingress != nil && in.Host == "" {
		return condition.Invalid("ingress.host", "is required for an Ingress")
	}
	if in.Host != "" {
		in.annotations = v1alpha1.Core[map[string]string](in.Annotations)
		s.ingress = new(in) // a copy: in stays on the stack when there is no Ingress
		if urlValue == "" {
			scheme := "http"
			if in.TLSSecretName != "" || in.edgeTLS {
				scheme = "https"
			}
			urlValue = scheme + "://" + in.Host
		}
	}
	publicURL, ferr := servedURL(urlField, cmp.Or(urlValue, DefaultPublicURL))
	if ferr != nil {
		return ferr
	}
	s.publicURL = publicURL
	return nil
}

// servedURL is the public URL as Monocle 1.11.2 can serve it, or why not.
// The API writes it verbatim into a JavaScript string of the web UI's
// inline script (src/Monocle/Main.hs:57, web/public/index.html:11), and the
// UI appends "/api/2/..." to it (web/src/components/WebApi.res:20): a
// trailing slash makes every call "//api/2/...", which no route matches
// (the UI then shows no data), so it is dropped, as Monocle's own OIDC
// code does (src/Monocle/Config.hs:323). A path cannot be served: the UI
// loads its bundle from /dist and reads its first path segment as the
// workspace (web/src/App.res:338). Monocle's getURL takes only a lowercase
// "http://" or "https://" (src/CLI.hs:128-132, else it prepends
// "http://"), so the scheme is written lowercase.
func servedURL(field, value string) (string, *condition.FieldError) {
	u, err := url.Parse(value)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", condition.Invalid(field, "%s is not an http or https URL", condition.Quote(value))
	}
	switch {
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(value, "#"):
		return "", condition.Invalid(field, "%s has credentials, a query or a fragment: Monocle's web UI appends /api/2/... to it as written", condition.Quote(value))
	case strings.Trim(u.Path, "/") != "":
		return "", condition.Invalid(field, "%s has a path: Monocle 1.11.2 serves its web UI at the root of a host only (its bundle is loaded from /dist)", condition.Quote(value))
	case !scriptSafe(u.Host) || strings.ContainsFunc(u.Host, func(r rune) bool { return r >= utf8.RuneSelf }) || strings.Contains(u.Host, "__TITLE__"):
		return "", condition.Invalid(field, "%s has a character Monocle's web UI cannot take in its inline script (a quote, a backslash, <, a control or non-ASCII character: write an IDN host in its xn-- form)", condition.Quote(value))
	}
	return u.Scheme + "://" + u.Host, nil
}

// scriptSafe: s can stand inside a double-quoted JavaScript string of an
// inline <script> as it is. Control characters and line terminators
// (U+2028 and U+2029 too, which browsers before ES2019 refuse in a
// string), quotes, backslashes and < (which could end the element) are not.
// (A host must also be ASCII: Monocle's image sets no locale, so a process
// reads a non-ASCII byte of its environment as U+FFFD.)
func scriptSafe(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r == '<' || r == '\u2028' || r == '\u2029' || (r >= 0x80 && r <= 0x9f)
	})
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
