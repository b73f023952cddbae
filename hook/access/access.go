// Package access is the part of a Monocle through which the API is
// reached: its Service N-api, the Ingress, and the public URL the API and
// the web UI are told. Resolve reads its section of the spec; Answer gives
// its children, with the Service's session affinity as the workloads'
// part says (condition.Sessions), and its notes.
package access

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/check"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

const (
	// DefaultPublicURL is the seed operator's default: the UI reached through
	// `kubectl port-forward svc/N-api 8090:8080`. Not the Service's URL: a
	// browser cannot resolve a cluster Service name.
	DefaultPublicURL = "http://localhost:8090"
)

// Settings are the checked spec of how the API is reached.
type Settings struct {
	PublicURL string           // as Monocle can serve it
	ingress   *ingressSettings // nil: no Ingress
}

// ingressSettings is the spec's Ingress with the seed's route.host folded
// in: the seed always made an edge-TLS Route, so a route.host gets TLS too.
type ingressSettings struct {
	v1alpha1.IngressSpec
	annotations map[string]string
	edgeTLS     bool
}

// Children are the API's Service and its Ingress (nil when there is none).
type Children struct {
	Service *corev1.Service
	Ingress *networkingv1.Ingress
}

// Answer gives the API's Service and Ingress, and notes on what the hook
// cannot choose for the sessions.
func Answer(n instance.Names, s Settings, obs wire.Children, sessions condition.Sessions) (out Children, notes []string) {
	out.Service = child.Service(n, n.API, child.ComponentAPI, instance.APIPort)
	switch {
	case sessions.AsObserved:
		if svc := obs.Services[n.API]; svc != nil && svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
			clientIPAffinity(out.Service) // as the API's config wants it
		}
	case sessions.Sticky > 1:
		clientIPAffinity(out.Service)
		if note := ingressAffinityNote(s, sessions.Sticky); note != "" {
			notes = append(notes, note)
		}
	}
	if s.ingress != nil {
		out.Ingress = makeIngress(n, s.ingress)
		if note := mixedContentNote(s); note != "" {
			notes = append(notes, note)
		}
	}
	return out, notes
}

// mixedContentNote tells of an http:// public URL while the Ingress serves
// the UI with TLS: the UI opened at https:// (where an Ingress controller
// such as ingress-nginx redirects http:// once the Ingress has TLS) calls
// the API at the public URL (web/src/components/WebApi.res:20), which a
// browser blocks as mixed content from an https:// page, and OIDC's Secure
// session cookies are dropped on it.
func mixedContentNote(s Settings) string {
	if !strings.HasPrefix(s.PublicURL, "http://") || (s.ingress.TLSSecretName == "" && !s.ingress.edgeTLS) {
		return ""
	}
	return fmt.Sprintf("the public URL %s is http://, but the Ingress serves %s with TLS: the web UI opened at https:// calls the API at the public URL, "+
		"which browsers block as mixed content (and drop Monocle's Secure login cookies on): set publicURL to its https:// URL, or remove it (the Ingress's URL is then https://)",
		condition.Quote(s.PublicURL), condition.Quote(s.ingress.Host))
}

// Resolve reads the Ingress and the public URL: given, else the Ingress's,
// else the port-forward one. Its refusals: an Ingress without a host, a
// public URL Monocle cannot serve, and Ingress or Route values the API
// server would refuse.
func Resolve(spec *v1alpha1.MonocleSpec) (Settings, condition.FieldErrors) {
	var s Settings
	var errs condition.FieldErrors
	if spec.Ingress != nil {
		errs = condition.Refusals(validateIngress(*spec.Ingress, field.NewPath("ingress")))
	}
	if spec.Route != nil {
		errs = append(errs, condition.Refusals(check.IngressHost(spec.Route.Host, field.NewPath("route", "host")))...)
	}
	urlField, urlValue := "publicURL", spec.PublicURL
	if urlValue == "" && spec.MonoclePublicURL != "" {
		urlField, urlValue = "monoclePublicURL", spec.MonoclePublicURL
	}
	in := ingressSettings{IngressSpec: ptr.Deref(spec.Ingress, v1alpha1.IngressSpec{})}
	if in.Host == "" && spec.Route != nil && spec.Route.Host != "" {
		in.Host, in.edgeTLS = spec.Route.Host, true // the seed's OpenShift route
	}
	if spec.Ingress != nil && in.Host == "" {
		return Settings{}, append(errs, condition.Invalid("ingress.host", "is required for an Ingress"))
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
		errs = append(errs, ferr)
	}
	if len(errs) > 0 {
		return Settings{}, errs
	}
	s.PublicURL = publicURL
	return s, nil
}

// maxIngressAnnotations bounds the annotations copied into the Ingress (the
// CRD's rule): they are in its metadata and again, JSON-escaped, in
// Metacontroller's last-applied copy, and all of an object's annotations
// must fit 256 KiB.
const maxIngressAnnotations = 16 << 10

// validateIngress is the API server's check of the values an Ingress
// takes of spec.ingress.
func validateIngress(in v1alpha1.IngressSpec, p *field.Path) field.ErrorList {
	errs := check.IngressHost(in.Host, p.Child("host"))
	errs = append(errs, check.DNSSubdomain(in.ClassName, p.Child("className"))...)
	errs = append(errs, check.DNSSubdomain(in.TLSSecretName, p.Child("tlsSecretName"))...)
	annotations := v1alpha1.Core[map[string]string](in.Annotations)
	errs = append(errs, check.Annotations(annotations, p.Child("annotations"))...)
	total := 0
	for k, v := range annotations {
		total += len(k) + len(v)
	}
	if total > maxIngressAnnotations {
		errs = append(errs, field.TooLong(p.Child("annotations"), "", maxIngressAnnotations))
	}
	const classAnnotation = "kubernetes.io/ingress.class"
	if v, ok := annotations[classAnnotation]; ok && in.ClassName != "" && v != in.ClassName {
		errs = append(errs, field.Invalid(p.Child("annotations").Key(classAnnotation), v, "must match `ingressClassName` when both are specified"))
	}
	return errs
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

// makeIngress routes the public host to the API Service.
func makeIngress(n instance.Names, in *ingressSettings) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{
		TypeMeta:   wire.TypeIngress,
		ObjectMeta: metav1.ObjectMeta{Name: n.API, Labels: n.Labels(child.ComponentAPI), Annotations: in.annotations},
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{
				Host: in.Host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     "/",
						PathType: ptr.To(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: n.API,
							Port: networkingv1.ServiceBackendPort{Name: "http"},
						}},
					}},
				}},
			}},
		},
	}
	if in.ClassName != "" {
		ing.Spec.IngressClassName = ptr.To(in.ClassName)
	}
	if in.TLSSecretName != "" || in.edgeTLS {
		// No secret: the controller's default certificate, as the seed's
		// edge Route used the router's.
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{in.Host}, SecretName: in.TLSSecretName}}
	}
	return ing
}

// ingressAffinityNote tells what the hook cannot choose: an Ingress
// controller sends traffic to the pods itself, past the Service's affinity,
// and each has its own annotations for it. Only the one it names is known
// to be enough.
func ingressAffinityNote(s Settings, replicas int32) string {
	if s.ingress == nil || s.ingress.annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie" {
		return ""
	}
	return fmt.Sprintf("with OIDC and %d API replicas, a login must come back to the replica that began it: the API Service has sessionAffinity ClientIP, "+
		"but an Ingress controller reaches the pods past it; set its own affinity annotations in spec.ingress.annotations "+
		"(for ingress-nginx, nginx.ingress.kubernetes.io/affinity: cookie)", replicas)
}

// clientIPAffinity is the Service's affinity as the API server stores it
// (it defaults the timeout): answered whole, so that going back to None
// removes both.
func clientIPAffinity(svc *corev1.Service) {
	svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	svc.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To(corev1.DefaultClientIPServiceAffinitySeconds)}}
}
