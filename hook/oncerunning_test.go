package hook

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/applied"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Configs whose crawler reads a token: a GitHub one, on which Monocle's
// crawler process exits when it is missing, and a Bugzilla one, which it
// then skips.
const (
	githubConfig   = "workspaces:\n  - name: demo\n    crawlers:\n      - name: gh\n        update_since: '2024-01-01'\n        provider: {github_organization: change-metrics}\n"
	bugzillaConfig = "workspaces:\n  - name: demo\n    crawlers:\n      - name: bz\n        update_since: '2024-01-01'\n        provider: {bugzilla_url: 'https://bugzilla.redhat.com', bugzilla_products: [Fedora]}\n"
)

// configSpec is baseSpec with an inline config and more fields.
func configSpec(t *testing.T, config, fields string) string {
	t.Helper()
	spec := withSpec(t, `{"config":`+jsonString(config)+`}`)
	if fields != "" {
		var base, extra map[string]any
		json.Unmarshal([]byte(spec), &base)
		if err := json.Unmarshal([]byte(fields), &extra); err != nil {
			t.Fatal(err)
		}
		for k, v := range extra {
			base[k] = v
		}
		b, _ := json.Marshal(base)
		spec = string(b)
	}
	return spec
}

func apiVolume(t *testing.T, a answer) string {
	t.Helper()
	d := a.child("Deployment", "monocle-sample-api")
	if d == nil {
		t.Fatal("no API Deployment")
	}
	vol := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["volumes"].([]any)[0]
	return nestedString(vol.(map[string]any), "configMap", "name")
}

// A token whose absence makes Monocle's crawler process exit holds the
// crawler (a new one is not made); the rest applies. One whose absence
// only skips its crawler is a note.
func TestCrawlerTokenMissing(t *testing.T) {
	n := instance.For("monocle-sample")
	const addGenerated = `write each token, without a final newline, to its file ("GITHUB_TOKEN" to ./token-1) and run kubectl -n default create secret generic monocle-sample-api --from-file=GITHUB_TOKEN=./token-1 --dry-run=client -o json | kubectl -n default patch secret monocle-sample-api --type=merge --patch-file=/dev/stdin`
	tokens := func(data map[string]string) wire.Related {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens"}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return wire.Related{Secrets: map[string]*corev1.Secret{"tokens": s}}
	}
	tests := map[string]struct {
		spec      string
		related   wire.Related
		generated map[string]string // keys added to the observed generated Secret
		// held: the crawler answered as it ran; reason: SpecApplied's
		held   bool
		reason string
		says   []string // in SpecApplied's message
	}{
		"GitHub without its token: held": {
			spec: configSpec(t, githubConfig, ""), held: true, reason: condition.ReasonCrawlerTokenMissing,
			says: []string{"workspaces[0].crawlers[0] reads GITHUB_TOKEN", "every crawler of this Monocle stops", "the crawler keeps its running template", `Secret "monocle-sample-api" has "GITHUB_TOKEN"`, addGenerated},
		},
		"GitHub with its token in the generated Secret": {
			spec: configSpec(t, githubConfig, ""), generated: map[string]string{"GITHUB_TOKEN": "ghp_x"}, reason: "Applied",
		},
		"GitHub with its token in the user's Secret": {
			spec: configSpec(t, githubConfig, `{"secretRef":{"name":"tokens"}}`), related: tokens(map[string]string{"GITHUB_TOKEN": "ghp_x"}), reason: "Applied",
		},
		"GitHub without its token, with a user's Secret: put there": {
			spec: configSpec(t, githubConfig, `{"secretRef":{"name":"tokens"}}`), related: tokens(nil), held: true, reason: condition.ReasonCrawlerTokenMissing,
			says: []string{`Secret "tokens" has "GITHUB_TOKEN"`, "kubectl -n default create secret generic tokens --from-file=GITHUB_TOKEN=./token-1 --dry-run=client -o json | kubectl -n default patch secret tokens --type=merge --patch-file=/dev/stdin"},
		},
		"GitHub without its token, crawler off: nothing to hold": {
			spec: configSpec(t, githubConfig, `{"crawler":{"enabled":false}}`), reason: "Applied",
		},
		"Bugzilla without its token: skipped, a note": {
			spec: configSpec(t, bugzillaConfig, ""), reason: "Applied",
			says: []string{"note: workspaces[0].crawlers[0] reads BUGZILLA_TOKEN", "Monocle skips this crawler", "--from-file=BUGZILLA_TOKEN=./token-1"},
		},
		"a variable no Secret key can be": {
			spec: configSpec(t, strings.Replace(githubConfig, "{github_organization", "{github_token: 'MY TOKEN', github_organization", 1), ""), held: true, reason: condition.ReasonCrawlerTokenMissing,
			says: []string{`"MY TOKEN" cannot be a Secret's key`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before, after, _ := steadyAfter(t, tc.spec, tc.related, tc.generated, tc.reason, tc.says)
			crawler := after.child("Deployment", n.Crawler)
			switch {
			case strings.Contains(tc.spec, `"enabled":false`):
				if crawler != nil {
					t.Error("a crawler that is off is answered")
				}
			case tc.held != reflect.DeepEqual(crawler["spec"], before.child("Deployment", n.Crawler)["spec"]):
				t.Errorf("held %v, crawler answered %v", tc.held, crawler)
			}
			// The API runs the new config in every case.
			if got, want := apiVolume(t, after), n.MountedConfig(mustValidConfig(t, mustConfig(t, tc.spec)).hash); got != want {
				t.Errorf("the API mounts %s, want %s", got, want)
			}
			if tc.held && after.child("ConfigMap", apiVolume(t, before)) == nil {
				t.Error("the config the held crawler mounts is left out")
			}
		})
	}
}

func mustConfig(t *testing.T, spec string) string {
	var s struct{ Config string }
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatal(err)
	}
	return s.Config
}

// A new Monocle gets no crawler until the token is there; then the crawler
// is made and the API rolls once (its template hashes the Secret), and
// nothing else changes.
func TestCrawlerMadeOnceTheTokenIsThere(t *testing.T) {
	n := instance.For("monocle-sample")
	c := newCluster(t, readFixture(t, "sync-v1-new-parent"))
	c.parent = setSpec(t, c.parent, configSpec(t, githubConfig, ""))
	// Its first answer's golden file: TestReadySaysWhy.
	for range 3 {
		c.apply(t, syncJSON(t, c.request(t)))
		c.markReady()
	}
	if c.children["Deployment.apps/v1"][n.Crawler] != nil {
		t.Fatal("a crawler was made without its token")
	}
	if cond := decodeAnswer(t, syncJSON(t, c.request(t))).Status.Condition(condition.ConditionSpecApplied); cond.Reason != condition.ReasonCrawlerTokenMissing || !strings.Contains(cond.Message, "no crawler is made") {
		t.Fatalf("SpecApplied %+v", cond)
	}

	// What the printed command does: a key added to the generated Secret.
	c.children["Secret.v1"][n.API]["data"].(map[string]any)["GITHUB_TOKEN"] = "Z2hwX3g="
	created, updated, deleted := c.apply(t, syncJSON(t, c.request(t)))
	if want := []string{"Deployment.apps/v1/" + n.Crawler}; !slices.Equal(created, want) {
		t.Errorf("created %v, want %v", created, want)
	}
	// The Secret's last-applied copy takes the key the hook now answers.
	if want := []string{"Deployment.apps/v1/" + n.API, "Secret.v1/" + n.API}; !slices.Equal(updated, want) {
		t.Errorf("updated %v, want %v", updated, want)
	}
	if len(deleted) > 0 {
		t.Errorf("deleted %v", deleted)
	}
	c.markReady()
	if created, updated, deleted := c.apply(t, syncJSON(t, c.request(t))); len(created)+len(updated)+len(deleted) > 0 {
		t.Errorf("not settled: created %v, updated %v, deleted %v", created, updated, deleted)
	}
}

// A login key under 64 bytes, from either Secret, is reported; where the
// API signs with it (an admin token, OIDC), an existing API and crawler
// keep their templates: Monocle would draw a random key per process.
func TestLoginKeyTooShort(t *testing.T) {
	n := instance.For("monocle-sample")
	const secretValue = "k3y-v4lue"
	user := func(key string, set bool) wire.Related {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens"}, Data: map[string][]byte{"MONOCLE_ADMIN_TOKEN": []byte("a")}}
		if set {
			s.Data[jwkKeyName] = []byte(key)
		}
		return wire.Related{Secrets: map[string]*corev1.Secret{"tokens": s}}
	}
	long := strings.Repeat("é", 32) // 64 bytes, 32 characters
	const oidc = "auth:\n  auth_provider:\n    oidc_provider_name: sso\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces: []\n"
	tests := map[string]struct {
		spec      string
		related   wire.Related
		generated string // the observed generated Secret's key, if not ""
		held      bool
		says      []string
	}{
		"the generated Secret's, edited short, with OIDC": {
			spec: configSpec(t, oidc, ""), generated: secretValue, held: true,
			says: []string{`key MONOCLE_JWK_GEN_KEY of Secret "monocle-sample-api" is 9 bytes`, "the API and the crawler keep their running templates",
				`kubectl -n default patch secret monocle-sample-api --type=json -p '[{"op":"remove","path":"/data/MONOCLE_JWK_GEN_KEY"}]'`},
		},
		"the generated Secret's, edited short, nothing signing: a note": {
			spec: baseSpec, generated: secretValue,
			says: []string{"note: key MONOCLE_JWK_GEN_KEY", "nothing is held"},
		},
		"the user's, empty, with an admin token": {
			spec: withSpec(t, `{"secretRef":{"name":"tokens"}}`), related: user("", true), held: true,
			says: []string{`of Secret "tokens" is 0 bytes`, "kubectl -n default patch secret tokens --type=json"},
		},
		"the user's, short, over a good generated one": {
			spec: withSpec(t, `{"secretRef":{"name":"tokens"}}`), related: user(secretValue, true), held: true,
			says: []string{`of Secret "tokens" is 9 bytes`},
		},
		"the user's, 64 bytes of 32 characters, over a short generated one": {
			spec: withSpec(t, `{"secretRef":{"name":"tokens"}}`), related: user(long, true), generated: secretValue,
		},
		"the user's Secret without one: the generated one": {
			spec: withSpec(t, `{"secretRef":{"name":"tokens"}}`), related: user("", false),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := steady(t, tc.spec)
			req.Related = tc.related
			if tc.generated != "" {
				req.Children.Secrets[n.API].Data[jwkKeyName] = []byte(tc.generated)
			}
			body := syncJSON(t, req)
			if name == "the generated Secret's, edited short, with OIDC" {
				golden(t, "steady-login-key-short", body)
			}
			a := decodeAnswer(t, body)
			c := a.Status.Condition(condition.ConditionSpecApplied)
			switch {
			case tc.held && c.Reason != condition.ReasonLoginKeyTooShort, !tc.held && c.Status != metav1.ConditionTrue:
				t.Fatalf("SpecApplied %+v", c)
			}
			for _, s := range tc.says {
				if !strings.Contains(c.Message, s) {
					t.Errorf("SpecApplied's message %q does not say %q", c.Message, s)
				}
			}
			if strings.Contains(c.Message, secretValue) {
				t.Error("the message shows the key")
			}
			// Held: the API and the crawler answered as last applied, their
			// running templates.
			for _, name := range []string{n.API, n.Crawler} {
				var last map[string]any
				json.Unmarshal([]byte(req.Children.Deployments[name].Annotations[applied.Annotation]), &last)
				if got := a.child("Deployment", name); reflect.DeepEqual(got["spec"], last["spec"]) != tc.held && tc.held {
					t.Errorf("%s is not answered as it runs", name)
				}
			}
		})
	}

	// A new Monocle gets its API, with the condition.
	req := fixture(t, "sync-v1-new-parent")
	req.Parent.Spec = json.RawMessage(withSpec(t, `{"secretRef":{"name":"tokens"}}`))
	req.Related = user(secretValue, true)
	a := decodeAnswer(t, syncJSON(t, req))
	if c := a.Status.Condition(condition.ConditionSpecApplied); c.Reason != condition.ReasonLoginKeyTooShort || !strings.Contains(c.Message, "the API is made with it") {
		t.Errorf("SpecApplied %+v", c)
	}
	if a.child("Deployment", n.API) == nil {
		t.Error("no API")
	}
}

// With OIDC, each API process keeps its logins' state: more than one
// replica gets a Service with ClientIP affinity, and an Ingress without
// affinity annotations a note.
func TestOIDCLoginsStick(t *testing.T) {
	n := instance.For("monocle-sample")
	const oidc = "auth:\n  auth_provider:\n    oidc_provider_name: sso\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces: []\n"
	tests := map[string]struct {
		config, fields string
		sticky         bool
		note           bool
	}{
		"OIDC, 2 replicas":                           {config: oidc, fields: `{"api":{"replicas":2}}`, sticky: true},
		"OIDC, 1 replica":                            {config: oidc},
		"no OIDC, 2 replicas":                        {config: defaultConfig, fields: `{"api":{"replicas":2}}`},
		"OIDC, 2 replicas, an Ingress":               {config: oidc, fields: `{"api":{"replicas":2},"ingress":{"host":"m.example.com"}}`, sticky: true, note: true},
		"OIDC, 2 replicas, an Ingress with affinity": {config: oidc, fields: `{"api":{"replicas":2},"ingress":{"host":"m.example.com","annotations":{"nginx.ingress.kubernetes.io/affinity":"cookie"}}}`, sticky: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := steady(t, configSpec(t, tc.config, tc.fields))
			req.Children.Secrets[n.API].Data["MONOCLE_OIDC_SSO_CLIENT_SECRET"] = []byte("s")
			a := decodeAnswer(t, syncJSON(t, req))
			spec := a.child("Service", n.API)["spec"].(map[string]any)
			got, _ := json.Marshal([]any{spec["sessionAffinity"], spec["sessionAffinityConfig"]})
			want := `[null,null]`
			if tc.sticky {
				want = `["ClientIP",{"clientIP":{"timeoutSeconds":10800}}]`
			}
			if string(got) != want {
				t.Errorf("affinity %s, want %s", got, want)
			}
			c := a.Status.Condition(condition.ConditionSpecApplied)
			if c.Status != metav1.ConditionTrue || strings.Contains(c.Message, "nginx.ingress.kubernetes.io/affinity") != tc.note {
				t.Errorf("SpecApplied %+v, note %v", c, tc.note)
			}
		})
	}

	// Back to one replica: Metacontroller's merge removes both fields.
	c := converged(t)
	c.parent = setSpec(t, c.parent, configSpec(t, oidc, `{"api":{"replicas":2}}`))
	body := syncJSON(t, c.request(t))
	golden(t, "steady-oidc-replicas", body)
	c.apply(t, body)
	if got := c.children["Service.v1"][n.API]["spec"].(map[string]any)["sessionAffinity"]; got != "ClientIP" {
		t.Fatalf("sessionAffinity %v", got)
	}
	c.parent = setSpec(t, c.parent, configSpec(t, oidc, ""))
	c.apply(t, syncJSON(t, c.request(t)))
	spec := c.children["Service.v1"][n.API]["spec"].(map[string]any)
	if spec["sessionAffinity"] != nil || spec["sessionAffinityConfig"] != nil {
		t.Errorf("affinity left: %v %v", spec["sessionAffinity"], spec["sessionAffinityConfig"])
	}
}

// crawlers_api_key names a variable the API and the crawler must both have,
// with one value: the crawler sends its own, the API compares with its own.
func TestCrawlersAPIKeyIsOneValue(t *testing.T) {
	tests := map[string]string{
		"PATH":                "",
		"HOME":                "",
		"CRAWLERS_API_KEY":    "",
		"HOSTNAME":            "each pod's own name",
		"MONOCLE_PUBLIC_URL":  "do not all get with one value",
		"MONOCLE_ELASTIC_URL": "do not all get with one value",
		// Pinned on one container only (Environment).
		"MONOCLE_API_PORT": "do not all get with one value",
		"API_PROXY":        "do not all get with one value",
	}
	for key, refused := range tests {
		t.Run(key, func(t *testing.T) {
			config := "workspaces:\n  - name: demo\n    crawlers_api_key: " + key + "\n    crawlers: []\n"
			req := steady(t, configSpec(t, config, ""))
			// A Secret's key of the name changes nothing: the container's
			// own env wins over envFrom.
			// (PATH, the image's, is refused as a Secret's key.)
			if key != "PATH" {
				req.Children.Secrets["monocle-sample-api"].Data[key] = []byte("x")
			}
			c := decodeAnswer(t, syncJSON(t, req)).Status.Condition(condition.ConditionSpecApplied)
			if refused == "" && c.Status != metav1.ConditionTrue || refused != "" && (c.Reason != condition.ReasonConfigInvalid || !strings.Contains(c.Message, refused)) {
				t.Errorf("SpecApplied %+v", c)
			}
		})
	}
}

// A config that enforces login, with the OIDC client secret missing or
// empty, would make Monocle serve every workspace to anyone
// (src/Monocle/Config.hs:297-318: AuthSystemFailed, no provider;
// src/Monocle/Api/Server.hs:103-112: no provider, no check): it fails
// closed. A running API keeps its template, a new Monocle gets no API until
// the Secret has it, and then gets one.
func TestLoginSecretMissing(t *testing.T) {
	n := instance.For("monocle-sample")
	oidc := func(name string, enforce bool) string {
		return fmt.Sprintf("auth:\n  enforce_auth: %v\n  auth_provider:\n    oidc_provider_name: %q\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces: []\n", enforce, name)
	}
	user := func(data map[string]string) wire.Related {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens"}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return wire.Related{Secrets: map[string]*corev1.Secret{"tokens": s}}
	}
	const variable = "MONOCLE_OIDC_SSO_CLIENT_SECRET"
	withUser := `{"secretRef":{"name":"tokens"}}`
	tests := map[string]struct {
		spec      string
		related   wire.Related
		generated map[string]string // keys added to the observed generated Secret
		reason    string            // SpecApplied's
		says      []string
	}{
		"enforced, no secret: held": {
			spec: configSpec(t, oidc("sso", true), ""), reason: condition.ReasonLoginSecretMissing,
			says: []string{`from "MONOCLE_OIDC_SSO_CLIENT_SECRET", which its pods do not get`, "serve every workspace to anyone", "the API and the crawler keep their running templates",
				"kubectl -n default create secret generic monocle-sample-api --from-file=MONOCLE_OIDC_SSO_CLIENT_SECRET=./token-1 --dry-run=client -o json | kubectl -n default patch secret monocle-sample-api --type=merge --patch-file=/dev/stdin"},
		},
		"enforced, in the generated Secret": {
			spec: configSpec(t, oidc("sso", true), ""), generated: map[string]string{variable: "s3cret"}, reason: "Applied",
		},
		"enforced, empty in the generated Secret: held": {
			spec: configSpec(t, oidc("sso", true), ""), generated: map[string]string{variable: ""}, reason: condition.ReasonLoginSecretMissing,
		},
		"enforced, in the user's Secret": {
			spec: configSpec(t, oidc("sso", true), withUser), related: user(map[string]string{variable: "s3cret"}), reason: "Applied",
		},
		"enforced, empty in the user's Secret over the generated one's (envFrom: the later wins): held": {
			spec: configSpec(t, oidc("sso", true), withUser), related: user(map[string]string{variable: ""}), generated: map[string]string{variable: "s3cret"},
			reason: condition.ReasonLoginSecretMissing, says: []string{`until the Secret "tokens" has it`, "create secret generic tokens --from-file=MONOCLE_OIDC_SSO_CLIENT_SECRET=./token-1"},
		},
		"enforced, a provider name with a space": {
			spec: configSpec(t, oidc("my sso", true), ""), reason: condition.ReasonLoginSecretMissing, says: []string{`"MONOCLE_OIDC_MY_SSO_CLIENT_SECRET"`},
		},
		// Server.hs:122-131: a token equal to an empty MONOCLE_ADMIN_TOKEN
		// gets a login with no expiry.
		"enforced, an empty admin token: held": {
			spec: configSpec(t, oidc("sso", true), withUser), related: user(map[string]string{variable: "s3cret", "MONOCLE_ADMIN_TOKEN": ""}),
			reason: condition.ReasonAdminTokenEmpty,
			says: []string{`key MONOCLE_ADMIN_TOKEN of Secret "tokens" is empty`, "anyone who sends an empty admin token a login",
				`kubectl -n default patch secret tokens --type=json -p '[{"op":"remove","path":"/data/MONOCLE_ADMIN_TOKEN"}]'`},
		},
		"enforced, an empty admin token in the generated Secret: held": {
			spec: configSpec(t, oidc("sso", true), ""), generated: map[string]string{variable: "s3cret", "MONOCLE_ADMIN_TOKEN": ""},
			reason: condition.ReasonAdminTokenEmpty, says: []string{`of Secret "monocle-sample-api" is empty`},
		},
		"enforced, an admin token set": {
			spec: configSpec(t, oidc("sso", true), withUser), related: user(map[string]string{variable: "s3cret", "MONOCLE_ADMIN_TOKEN": "s3cret-admin"}), reason: "Applied",
		},
		"not enforced, an empty admin token": {
			spec: configSpec(t, oidc("sso", false), withUser), related: user(map[string]string{variable: "s3cret", "MONOCLE_ADMIN_TOKEN": ""}), reason: "Applied",
		},
		"not enforced, no secret: a note": {
			spec: configSpec(t, oidc("sso", false), ""), reason: "Applied", says: []string{"it starts without login (AuthSystemFailed)"},
		},
		// Config.hs:290: an empty mandatory setting is AuthSystemFailed too.
		"enforced, an empty OIDC setting: the config is refused": {
			spec: configSpec(t, strings.Replace(oidc("sso", true), "oidc_client_id: monocle", "oidc_client_id: ''", 1), ""), reason: condition.ReasonConfigInvalid,
			says: []string{"enforces login (enforce_auth: true), but an OIDC setting"},
		},
		// Config.hs:323: Data.Text.toUpper; the variable must be a Secret key.
		"a provider name no variable of a Secret can follow": {
			spec: configSpec(t, oidc("sso/é", true), ""), reason: condition.ReasonConfigInvalid, says: []string{"oidc_provider_name", "is not a name the hook can follow"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before, a, c := steadyAfter(t, tc.spec, tc.related, tc.generated, tc.reason, tc.says)
			if strings.Contains(c.Message, "s3cret") {
				t.Error("the message shows the secret")
			}
			held := tc.reason != "Applied"
			for _, name := range []string{n.API, n.Crawler} {
				if same := reflect.DeepEqual(a.child("Deployment", name)["spec"], before.child("Deployment", name)["spec"]); same != held {
					t.Errorf("%s answered as it runs: %v, want %v", name, same, held)
				}
			}
		})
	}

	// A new Monocle: no API, no crawler, until the secret is there.
	req := fixture(t, "sync-v1-new-parent")
	req.Parent.Spec = json.RawMessage(configSpec(t, oidc("sso", true), withUser))
	req.Related = user(nil)
	a := decodeAnswer(t, syncJSON(t, req))
	if c := a.Status.Condition(condition.ConditionSpecApplied); c.Reason != condition.ReasonLoginSecretMissing || !strings.Contains(c.Message, "no API (and no crawler) is made") {
		t.Errorf("SpecApplied %+v", c)
	}
	if a.child("Deployment", n.API) != nil || a.child("Deployment", n.Crawler) != nil {
		t.Errorf("a new Monocle that would serve without login gets %v", a.names())
	}
	req.Related = user(map[string]string{variable: "s3cret"})
	a = decodeAnswer(t, syncJSON(t, req))
	if c := a.Status.Condition(condition.ConditionSpecApplied); c.Status != metav1.ConditionTrue {
		t.Errorf("with the secret: SpecApplied %+v", c)
	}
	if a.child("Deployment", n.API) == nil || a.child("Deployment", n.Crawler) == nil {
		t.Errorf("with the secret: %v", a.names())
	}
}

// steadyAfter answers a converged Monocle given spec, related objects and
// keys added to its generated Secret (before: its answer with baseSpec), and
// fails unless SpecApplied has reason and says each of says.
func steadyAfter(t *testing.T, spec string, related wire.Related, generated map[string]string, reason string, says []string) (before, after answer, c metav1.Condition) {
	t.Helper()
	before = decodeAnswer(t, syncJSON(t, steady(t, baseSpec)))
	req := steady(t, spec)
	req.Related = related
	for k, v := range generated {
		req.Children.Secrets[instance.For("monocle-sample").API].Data[k] = []byte(v)
	}
	after = decodeAnswer(t, syncJSON(t, req))
	c = after.Status.Condition(condition.ConditionSpecApplied)
	if c.Reason != reason {
		t.Fatalf("SpecApplied %+v, want reason %s", c, reason)
	}
	for _, s := range says {
		if !strings.Contains(c.Message, s) {
			t.Errorf("SpecApplied's message %q does not say %q", c.Message, s)
		}
	}
	return before, after, c
}
