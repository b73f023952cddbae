package hook

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Monocle's session cookies are Secure: JWT-Cookie, from servant-auth-server's
// defaultCookieSettings (cookieIsSecure = Secure), which
// src/Monocle/Main.hs:187 keeps, and Monocle, src/Monocle/Api/Server.hs:1013-1020
// (setCookieSecure = True). A browser drops them on an http:// page, so an
// OIDC login never sticks there: with enforce_auth the API and the crawler
// are held (LoginNeedsHTTPS), without it a note; a loopback host (the
// port-forward URL) is a secure context, where browsers keep them. An
// http:// public URL behind an Ingress with TLS is a note too: the UI
// opened at https:// calls it, mixed content.
func TestLoginNeedsHTTPS(t *testing.T) {
	n := instance.For("monocle-sample")
	oidc := func(enforce bool) string {
		return fmt.Sprintf("auth:\n  enforce_auth: %v\n  auth_provider:\n    oidc_provider_name: sso\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces: []\n", enforce)
	}
	secret := map[string]string{"MONOCLE_OIDC_SSO_CLIENT_SECRET": "s3cret"}
	const cookies = "Monocle's session cookies (JWT-Cookie, Monocle) are Secure, and browsers drop Secure cookies on an http:// page"
	const fix = "make the public URL https:// (spec.publicURL, or spec.ingress with a tlsSecretName and no publicURL)"
	const mixed = "the web UI opened at https:// calls the API at the public URL, which browsers block as mixed content"
	tests := map[string]struct {
		config, fields string
		reason         string
		says, not      []string
	}{
		"enforced, an http public URL: held": {
			config: oidc(true), fields: `{"publicURL":"http://monocle.example.com"}`, reason: condition.ReasonLoginNeedsHTTPS,
			says: []string{`the public URL "http://monocle.example.com" is http://, and the config enforces an OIDC login (auth.enforce_auth: true)`, cookies,
				"the API and the crawler keep their running templates until you " + fix + ", or turn enforce_auth off"},
		},
		"enforced, the seed's monoclePublicURL over http: held": {
			config: oidc(true), fields: `{"publicURL":"","monoclePublicURL":"http://monocle.example.com:8080"}`, reason: condition.ReasonLoginNeedsHTTPS,
			says: []string{`the public URL "http://monocle.example.com:8080" is http://`},
		},
		"enforced, an Ingress without TLS (its URL is http://): held": {
			config: oidc(true), fields: `{"publicURL":"","ingress":{"host":"monocle.example.com"}}`, reason: condition.ReasonLoginNeedsHTTPS,
			says: []string{`the public URL "http://monocle.example.com" is http://`},
		},
		"enforced, an Ingress with TLS (its URL is https://)": {
			config: oidc(true), fields: `{"publicURL":"","ingress":{"host":"monocle.example.com","tlsSecretName":"tls"}}`, reason: condition.ReasonApplied, not: []string{cookies, mixed},
		},
		"enforced, https": {
			config: oidc(true), fields: `{"publicURL":"https://monocle.example.com"}`, reason: condition.ReasonApplied, not: []string{cookies},
		},
		"enforced, localhost (the port-forward URL)": {
			config: oidc(true), fields: `{"publicURL":"http://localhost:8090"}`, reason: condition.ReasonApplied, not: []string{cookies},
		},
		"enforced, 127.0.0.1": {
			config: oidc(true), fields: `{"publicURL":"http://127.0.0.1:8090"}`, reason: condition.ReasonApplied, not: []string{cookies},
		},
		"enforced, [::1]": {
			config: oidc(true), fields: `{"publicURL":"http://[::1]:8090"}`, reason: condition.ReasonApplied, not: []string{cookies},
		},
		"not enforced, an http public URL: a note": {
			config: oidc(false), fields: `{"publicURL":"http://monocle.example.com"}`, reason: condition.ReasonApplied,
			says: []string{`note: the config logs in with OIDC and the public URL "http://monocle.example.com" is http://: ` + cookies, fix},
		},
		"no OIDC, an http public URL": {
			config: "workspaces: []\n", fields: `{"publicURL":"http://monocle.example.com"}`, reason: condition.ReasonApplied, not: []string{cookies},
		},
		"an http public URL behind an Ingress with TLS: a note": {
			config: "workspaces: []\n", fields: `{"publicURL":"http://monocle.example.com","ingress":{"host":"monocle.example.com","tlsSecretName":"tls"}}`, reason: condition.ReasonApplied,
			says: []string{`the public URL "http://monocle.example.com" is http://, but the Ingress serves "monocle.example.com" with TLS: ` + mixed,
				"set publicURL to its https:// URL, or remove it (the Ingress's URL is then https://)"},
		},
		"an http public URL behind an edge-TLS route: a note": {
			config: "workspaces: []\n", fields: `{"publicURL":"http://monocle.example.com","route":{"host":"monocle.example.com"}}`, reason: condition.ReasonApplied, says: []string{mixed},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before, a, c := steadyAfter(t, configSpec(t, tc.config, tc.fields), wire.Related{}, secret, tc.reason, tc.says)
			for _, s := range tc.not {
				if strings.Contains(c.Message, s) {
					t.Errorf("SpecApplied says %q: %s", s, c.Message)
				}
			}
			held := tc.reason != condition.ReasonApplied
			for _, name := range []string{n.API, n.Crawler} {
				if same := reflect.DeepEqual(a.child("Deployment", name)["spec"], before.child("Deployment", name)["spec"]); held && !same {
					t.Errorf("%s moved while held", name)
				}
			}
		})
	}

	// A new Monocle gets no API nor crawler: it would serve nothing but a
	// login that never sticks.
	req := fixture(t, "sync-v1-new-parent")
	req.Parent.Spec = json.RawMessage(configSpec(t, oidc(true), `{"publicURL":"http://monocle.example.com","secretRef":{"name":"tokens"}}`))
	req.Related = wire.Related{Secrets: map[string]*corev1.Secret{"tokens": {ObjectMeta: metav1.ObjectMeta{Name: "tokens"}, Data: map[string][]byte{"MONOCLE_OIDC_SSO_CLIENT_SECRET": []byte("s3cret")}}}}
	a := decodeAnswer(t, syncJSON(t, req))
	if c := a.Status.Condition(condition.ConditionSpecApplied); c.Reason != condition.ReasonLoginNeedsHTTPS || !strings.Contains(c.Message, "no API (and no crawler) is made") {
		t.Errorf("SpecApplied %+v", c)
	}
	if a.child("Deployment", n.API) != nil || a.child("Deployment", n.Crawler) != nil {
		t.Errorf("a new Monocle whose login cannot stick gets %v", a.names())
	}
}
