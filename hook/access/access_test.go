package access

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Resolve: the public URL given (publicURL over monoclePublicURL), else the
// Ingress's (https with TLS or the seed's route), else the port-forward
// one; written as Monocle 1.11.2 serves it (see servedURL), or refused
// naming the field.
func TestResolve(t *testing.T) {
	tests := map[string]struct {
		spec      v1alpha1.MonocleSpec
		publicURL string
		ingress   string // the Ingress's host, "" for none
		field     string // the refused field, "" when it resolves
	}{
		"nothing: the port-forward URL":       {publicURL: DefaultPublicURL},
		"publicURL":                           {spec: v1alpha1.MonocleSpec{PublicURL: "https://m.example.com"}, publicURL: "https://m.example.com"},
		"publicURL over monoclePublicURL":     {spec: v1alpha1.MonocleSpec{PublicURL: "https://a.example.com", MonoclePublicURL: "https://b.example.com"}, publicURL: "https://a.example.com"},
		"monoclePublicURL, the seed's field":  {spec: v1alpha1.MonocleSpec{MonoclePublicURL: "http://b.example.com"}, publicURL: "http://b.example.com"},
		"a trailing slash dropped":            {spec: v1alpha1.MonocleSpec{PublicURL: "https://m.example.com//"}, publicURL: "https://m.example.com"},
		"the scheme lowercase":                {spec: v1alpha1.MonocleSpec{PublicURL: "HTTPS://m.example.com"}, publicURL: "https://m.example.com"},
		"an Ingress without TLS":              {spec: v1alpha1.MonocleSpec{Ingress: &v1alpha1.IngressSpec{Host: "m.example.com"}}, publicURL: "http://m.example.com", ingress: "m.example.com"},
		"an Ingress with TLS":                 {spec: v1alpha1.MonocleSpec{Ingress: &v1alpha1.IngressSpec{Host: "m.example.com", TLSSecretName: "tls"}}, publicURL: "https://m.example.com", ingress: "m.example.com"},
		"the seed's route: edge TLS":          {spec: v1alpha1.MonocleSpec{Route: &v1alpha1.RouteSpec{Host: "r.example.com"}}, publicURL: "https://r.example.com", ingress: "r.example.com"},
		"publicURL over the Ingress's":        {spec: v1alpha1.MonocleSpec{PublicURL: "https://p.example.com", Ingress: &v1alpha1.IngressSpec{Host: "m.example.com"}}, publicURL: "https://p.example.com", ingress: "m.example.com"},
		"an Ingress without a host":           {spec: v1alpha1.MonocleSpec{Ingress: &v1alpha1.IngressSpec{}}, field: "ingress.host"},
		"not a URL":                           {spec: v1alpha1.MonocleSpec{PublicURL: "m.example.com"}, field: "publicURL"},
		"ftp":                                 {spec: v1alpha1.MonocleSpec{MonoclePublicURL: "ftp://m.example.com"}, field: "monoclePublicURL"},
		"a path":                              {spec: v1alpha1.MonocleSpec{PublicURL: "https://m.example.com/monocle"}, field: "publicURL"},
		"credentials":                         {spec: v1alpha1.MonocleSpec{PublicURL: "https://u:p@m.example.com"}, field: "publicURL"},
		"a query":                             {spec: v1alpha1.MonocleSpec{PublicURL: "https://m.example.com?x"}, field: "publicURL"},
		"a quote, for the UI's inline script": {spec: v1alpha1.MonocleSpec{PublicURL: `https://m".example.com`}, field: "publicURL"},
		"a non-ASCII host":                    {spec: v1alpha1.MonocleSpec{PublicURL: "https://mönocle.example.com"}, field: "publicURL"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, ferr := Resolve(&tc.spec)
			if tc.field != "" {
				if ferr == nil || ferr.Field != tc.field {
					t.Fatalf("Resolve = %+v, %v; want a refusal of %s", s, ferr, tc.field)
				}
				return
			}
			if ferr != nil {
				t.Fatal(ferr)
			}
			if s.PublicURL != tc.publicURL {
				t.Errorf("public URL %q, want %q", s.PublicURL, tc.publicURL)
			}
			if host := ""; s.ingress != nil {
				host = s.ingress.Host
				if host != tc.ingress {
					t.Errorf("Ingress host %q, want %q", host, tc.ingress)
				}
			} else if tc.ingress != "" {
				t.Errorf("no Ingress, want one for %q", tc.ingress)
			}
		})
	}
}

// Answer: the Service N-api always; its ClientIP affinity when the API's
// OIDC replicas need it, or, held, as observed; the Ingress with TLS when
// asked; and the notes on what the hook cannot choose.
func TestAnswer(t *testing.T) {
	n := instance.For("m")
	sticky := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n.API}, Spec: corev1.ServiceSpec{SessionAffinity: corev1.ServiceAffinityClientIP}}
	tests := map[string]struct {
		spec     v1alpha1.MonocleSpec
		observed *corev1.Service
		sessions Sessions
		clientIP bool
		tls      []networkingv1.IngressTLS // nil: no TLS; ingress says whether there is one
		ingress  bool
		notes    []string // a word of each note, in order
	}{
		"no Ingress, one replica":                   {},
		"OIDC with 1 replica: no affinity":          {sessions: Sessions{Sticky: 1}},
		"OIDC with 3 replicas: ClientIP":            {sessions: Sessions{Sticky: 3}, clientIP: true},
		"held, ClientIP observed: kept":             {observed: sticky, sessions: Sessions{AsObserved: true}, clientIP: true},
		"held, none observed: none":                 {sessions: Sessions{AsObserved: true}},
		"held, ClientIP observed, 3 replicas asked": {observed: sticky, sessions: Sessions{AsObserved: true, Sticky: 3}, clientIP: true},
		"an Ingress with TLS": {spec: v1alpha1.MonocleSpec{Ingress: &v1alpha1.IngressSpec{Host: "m.example.com", TLSSecretName: "tls", ClassName: "nginx"}},
			ingress: true, tls: []networkingv1.IngressTLS{{Hosts: []string{"m.example.com"}, SecretName: "tls"}}},
		"an Ingress and an http public URL: mixed content": {spec: v1alpha1.MonocleSpec{PublicURL: "http://m.example.com", Ingress: &v1alpha1.IngressSpec{Host: "m.example.com", TLSSecretName: "tls"}},
			ingress: true, tls: []networkingv1.IngressTLS{{Hosts: []string{"m.example.com"}, SecretName: "tls"}}, notes: []string{"mixed content"}},
		"OIDC replicas behind an Ingress: its own affinity": {spec: v1alpha1.MonocleSpec{Ingress: &v1alpha1.IngressSpec{Host: "m.example.com"}}, sessions: Sessions{Sticky: 2},
			clientIP: true, ingress: true, notes: []string{"nginx.ingress.kubernetes.io/affinity"}},
		"OIDC replicas behind ingress-nginx with cookie affinity": {spec: v1alpha1.MonocleSpec{Ingress: &v1alpha1.IngressSpec{Host: "m.example.com",
			Annotations: map[string]v1alpha1.AnnotationValue{"nginx.ingress.kubernetes.io/affinity": "cookie"}}}, sessions: Sessions{Sticky: 2}, clientIP: true, ingress: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, ferr := Resolve(&tc.spec)
			if ferr != nil {
				t.Fatal(ferr)
			}
			obs := wire.Children{Services: map[string]*corev1.Service{}}
			if tc.observed != nil {
				obs.Services[n.API] = tc.observed
			}
			out, notes := Answer(n, s, obs, tc.sessions)
			if out.Service == nil || out.Service.Name != n.API {
				t.Fatalf("Service %+v, want %s", out.Service, n.API)
			}
			if got := out.Service.Spec.SessionAffinity == corev1.ServiceAffinityClientIP; got != tc.clientIP || got != (out.Service.Spec.SessionAffinityConfig != nil) {
				t.Errorf("affinity %q %+v, want ClientIP %v (with its timeout)", out.Service.Spec.SessionAffinity, out.Service.Spec.SessionAffinityConfig, tc.clientIP)
			}
			if (out.Ingress != nil) != tc.ingress {
				t.Fatalf("Ingress %+v, want one: %v", out.Ingress, tc.ingress)
			}
			if out.Ingress != nil {
				rule := out.Ingress.Spec.Rules[0]
				if out.Ingress.Name != n.API || rule.Host != tc.spec.Ingress.Host || rule.HTTP.Paths[0].Backend.Service.Name != n.API ||
					len(out.Ingress.Spec.TLS) != len(tc.tls) || (len(tc.tls) > 0 && out.Ingress.Spec.TLS[0].SecretName != tc.tls[0].SecretName) {
					t.Errorf("Ingress %+v", out.Ingress)
				}
				if c := tc.spec.Ingress.ClassName; c != "" && (out.Ingress.Spec.IngressClassName == nil || *out.Ingress.Spec.IngressClassName != c) {
					t.Errorf("IngressClassName %v, want %s", out.Ingress.Spec.IngressClassName, c)
				}
			}
			if len(notes) != len(tc.notes) {
				t.Fatalf("notes %q, want %d", notes, len(tc.notes))
			}
			for i, word := range tc.notes {
				if !strings.Contains(notes[i], word) {
					t.Errorf("note %q does not say %q", notes[i], word)
				}
			}
		})
	}
}
