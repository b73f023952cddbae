package access

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

func ingress(host, tls string) *v1alpha1.IngressSpec {
	return &v1alpha1.IngressSpec{Host: host, TLSSecretName: tls}
}

func TestResolvePublicURL(t *testing.T) {
	tests := []struct {
		name      string
		spec      v1alpha1.MonocleSpec
		want      string
		wantField string // the field of the error, "" for none
	}{
		{name: "default port-forward", want: DefaultPublicURL},
		{name: "given", spec: v1alpha1.MonocleSpec{PublicURL: "https://m.example.org"}, want: "https://m.example.org"},
		{name: "trailing slash dropped", spec: v1alpha1.MonocleSpec{PublicURL: "https://m.example.org/"}, want: "https://m.example.org"},
		{name: "scheme lowercased", spec: v1alpha1.MonocleSpec{PublicURL: "HTTPS://m.example.org"}, want: "https://m.example.org"},
		{name: "seed's field", spec: v1alpha1.MonocleSpec{MonoclePublicURL: "http://old:8080"}, want: "http://old:8080"},
		{name: "publicURL before the seed's", spec: v1alpha1.MonocleSpec{PublicURL: "http://new", MonoclePublicURL: "http://old"}, want: "http://new"},
		{name: "from the Ingress", spec: v1alpha1.MonocleSpec{Ingress: ingress("m.example.org", "")}, want: "http://m.example.org"},
		{name: "from the Ingress with TLS", spec: v1alpha1.MonocleSpec{Ingress: ingress("m.example.org", "tls")}, want: "https://m.example.org"},
		{name: "from the seed's route, edge TLS", spec: v1alpha1.MonocleSpec{Route: &v1alpha1.RouteSpec{Host: "r.example.org"}}, want: "https://r.example.org"},
		{name: "given before the Ingress", spec: v1alpha1.MonocleSpec{PublicURL: "http://x", Ingress: ingress("m", "")}, want: "http://x"},
		{name: "Ingress without host", spec: v1alpha1.MonocleSpec{Ingress: &v1alpha1.IngressSpec{}}, wantField: "ingress.host"},
		{name: "not http", spec: v1alpha1.MonocleSpec{PublicURL: "ftp://m"}, wantField: "publicURL"},
		{name: "no host", spec: v1alpha1.MonocleSpec{PublicURL: "m.example.org"}, wantField: "publicURL"},
		{name: "path", spec: v1alpha1.MonocleSpec{PublicURL: "https://m/monocle"}, wantField: "publicURL"},
		{name: "query", spec: v1alpha1.MonocleSpec{PublicURL: "https://m/?x"}, wantField: "publicURL"},
		{name: "fragment", spec: v1alpha1.MonocleSpec{PublicURL: "https://m#x"}, wantField: "publicURL"},
		{name: "credentials", spec: v1alpha1.MonocleSpec{PublicURL: "https://u:p@m"}, wantField: "publicURL"},
		{name: "quote in host", spec: v1alpha1.MonocleSpec{PublicURL: `https://m"x`}, wantField: "publicURL"},
		{name: "non-ASCII host", spec: v1alpha1.MonocleSpec{PublicURL: "https://bücher.example"}, wantField: "publicURL"},
		{name: "seed's field named", spec: v1alpha1.MonocleSpec{MonoclePublicURL: "ftp://m"}, wantField: "monoclePublicURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, errs := Resolve(&tt.spec)
			ferr := errs.First()
			if tt.wantField != "" {
				if ferr == nil || ferr.Field != tt.wantField || ferr.Reason != condition.ReasonInvalidSpec {
					t.Fatalf("Resolve = %+v, %v; want an InvalidSpec error on %s", s, ferr, tt.wantField)
				}
				return
			}
			if ferr != nil || s.PublicURL != tt.want {
				t.Fatalf("Resolve = %q, %v; want %q", s.PublicURL, ferr, tt.want)
			}
		})
	}
}

func TestAnswer(t *testing.T) {
	n := instance.For("demo")
	observed := func(affinity corev1.ServiceAffinity) wire.Children {
		svc := &corev1.Service{Spec: corev1.ServiceSpec{SessionAffinity: affinity}}
		return wire.Children{Services: map[string]*corev1.Service{n.API: svc}}
	}
	nginxCookie := &v1alpha1.IngressSpec{Host: "m", Annotations: map[string]v1alpha1.AnnotationValue{"nginx.ingress.kubernetes.io/affinity": "cookie"}}
	tests := []struct {
		name       string
		spec       v1alpha1.MonocleSpec
		obs        wire.Children
		sessions   condition.Sessions
		sticky     bool     // the Service has ClientIP affinity
		ingressTLS []string // nil: no Ingress; else the TLS hosts
		notes      []string // a part of each note
	}{
		{name: "Service alone"},
		{name: "one replica not sticky", sessions: condition.Sessions{Sticky: 1}},
		{name: "OIDC replicas sticky", sessions: condition.Sessions{Sticky: 2}, sticky: true},
		{name: "sticky with an Ingress: note", spec: v1alpha1.MonocleSpec{Ingress: ingress("m", "")}, sessions: condition.Sessions{Sticky: 3},
			sticky: true, ingressTLS: []string{}, notes: []string{"3 API replicas"}},
		{name: "sticky with nginx cookie: no note", spec: v1alpha1.MonocleSpec{Ingress: nginxCookie}, sessions: condition.Sessions{Sticky: 3},
			sticky: true, ingressTLS: []string{}},
		{name: "held: keeps observed ClientIP", obs: observed(corev1.ServiceAffinityClientIP), sessions: condition.Sessions{AsObserved: true}, sticky: true},
		{name: "held: keeps observed None", obs: observed(corev1.ServiceAffinityNone), sessions: condition.Sessions{AsObserved: true, Sticky: 2}},
		{name: "held: no observed Service", sessions: condition.Sessions{AsObserved: true}},
		{name: "Ingress with TLS", spec: v1alpha1.MonocleSpec{Ingress: ingress("m", "tls")}, ingressTLS: []string{"m"}},
		{name: "Ingress TLS, http public URL: note", spec: v1alpha1.MonocleSpec{PublicURL: "http://m", Ingress: ingress("m", "tls")},
			ingressTLS: []string{"m"}, notes: []string{"mixed content"}},
		{name: "route edge TLS", spec: v1alpha1.MonocleSpec{Route: &v1alpha1.RouteSpec{Host: "r"}}, ingressTLS: []string{"r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, errs := Resolve(&tt.spec)
			if errs != nil {
				t.Fatal(errs.First())
			}
			out, notes := Answer(n, s, tt.obs, tt.sessions)
			svc := out.Service
			if svc == nil || svc.Name != n.API {
				t.Fatalf("Service = %+v; want %s", svc, n.API)
			}
			if got := svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP; got != tt.sticky {
				t.Errorf("ClientIP affinity = %v; want %v", got, tt.sticky)
			}
			if tt.sticky && (svc.Spec.SessionAffinityConfig == nil || *svc.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != corev1.DefaultClientIPServiceAffinitySeconds) {
				t.Errorf("affinity config = %+v; want the server's default timeout", svc.Spec.SessionAffinityConfig)
			}
			if !tt.sticky && (svc.Spec.SessionAffinity != "" || svc.Spec.SessionAffinityConfig != nil) {
				t.Errorf("affinity = %q %+v; want none answered", svc.Spec.SessionAffinity, svc.Spec.SessionAffinityConfig)
			}
			checkIngress(t, n, out, tt.ingressTLS)
			if len(notes) != len(tt.notes) {
				t.Fatalf("notes = %q; want %d", notes, len(tt.notes))
			}
			for i, want := range tt.notes {
				if !strings.Contains(notes[i], want) {
					t.Errorf("note %d = %q; want it to say %q", i, notes[i], want)
				}
			}
		})
	}
}

func checkIngress(t *testing.T, n instance.Names, out Children, tlsHosts []string) {
	t.Helper()
	ing := out.Ingress
	if tlsHosts == nil {
		if ing != nil {
			t.Errorf("Ingress = %+v; want none", ing)
		}
		return
	}
	if ing == nil || ing.Name != n.API || ing.Kind != "Ingress" || len(ing.Spec.Rules) != 1 {
		t.Fatalf("Ingress = %+v; want one rule, named %s", ing, n.API)
	}
	backend := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
	if backend.Name != n.API || backend.Port.Name != "http" {
		t.Errorf("backend = %+v; want %s:http", backend, n.API)
	}
	if len(tlsHosts) == 0 && len(ing.Spec.TLS) != 0 || len(tlsHosts) > 0 && (len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].Hosts[0] != tlsHosts[0]) {
		t.Errorf("TLS = %+v; want hosts %v", ing.Spec.TLS, tlsHosts)
	}
}
