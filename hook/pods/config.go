package pods

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
)

// defaultConfig is the seed operator's: one workspace, no crawlers.
const defaultConfig = "workspaces:\n  - name: demo\n    crawlers: []\n"

// configData is the generated N-api ConfigMap's data: the observed data (an
// admin's edits are the config), with the spec's inline config.yaml, if
// any, over it, and the default one when there is neither.
func configData(observed *corev1.ConfigMap, inline string) map[string]string {
	data := map[string]string{}
	if observed != nil {
		maps.Copy(data, observed.Data)
	}
	if inline != "" {
		data[configFile] = inline
	}
	if _, ok := data[configFile]; !ok {
		data[configFile] = defaultConfig
	}
	return data
}

// validConfig is a config.yaml Monocle accepts, ready to mount.
type validConfig struct {
	text   string
	hash   string // names the mounted ConfigMap
	idents string // hash of every workspace's idents: names the update-idents Job
	// What Monocle reads once running (oncerunning.go).
	tokens monocleconfig.Tokens
	oidc   bool
	// enforceAuth and oidcSecret: monocleconfig.Config's EnforceAuth and
	// OIDCSecret.
	enforceAuth bool
	oidcSecret  string
	warnings    []monocleconfig.Problem
	// apiKeys are the variables the crawlers' key is read from, each once.
	apiKeys []string
}

// configSource is the config.yaml the user means: the one in their
// ConfigMap when the spec names one, else the generated N-api's.
func configSource(n instance.Names, s Settings, generated map[string]string, rel wire.Related) (string, *condition.FieldError) {
	if s.configMap == "" {
		return generated[configFile], nil
	}
	cm := rel.ConfigMaps[s.configMap]
	if cm == nil {
		return "", &condition.FieldError{Reason: condition.ReasonReferenceNotFound, Field: "configMapRef.name", Message: fmt.Sprintf("names ConfigMap %s, which does not exist: the API and the crawler keep their config", condition.Quote(s.configMap))}
	}
	text, ok := cm.Data[configFile]
	if !ok {
		return "", &condition.FieldError{Reason: condition.ReasonConfigInvalid, Field: "configMapRef.name", Message: fmt.Sprintf("names ConfigMap %s, which has no %s: the API and the crawler keep their config", condition.Quote(s.configMap), configFile)}
	}
	return text, nil
}

// MaxConfigJSON bounds a config.yaml by what Metacontroller can apply: its
// default apply keeps each child whole, JSON-encoded, in a last-applied
// annotation, and the API server caps a child's annotations at 256 KiB.
// The config, JSON-escaped as Metacontroller's encoding/json escapes it
// ("\n", "\u003c" for "<", ...), gets all of it but 1 KiB, left for the
// rest of its ConfigMap (names, labels, keys).
const MaxConfigJSON = monocleconfig.MaxBytes

// validateConfig checks a config.yaml exactly as Monocle's loader would at
// start, with env the environment variables the pods get. It is first
// bounded by size, before any parsing.
func validateConfig(n instance.Names, s Settings, text string, env func(string) bool) (validConfig, *condition.FieldError) {
	err := configFits(text)
	var cfg *monocleconfig.Config
	if err == nil {
		cfg, err = monocleconfig.Parse([]byte(text), env)
	}
	if err != nil {
		field, where := "config", ""
		switch {
		case s.configMap != "":
			field, where = "configMapRef.name", fmt.Sprintf("ConfigMap %s: ", condition.Quote(s.configMap))
		case s.config == "":
			field, where = "", fmt.Sprintf("ConfigMap %q (generated, edited by hand): ", n.API)
		}
		return validConfig{}, &condition.FieldError{Reason: condition.ReasonConfigInvalid, Field: field, Message: fmt.Sprintf("%s%s is refused by Monocle: %v; the API and the crawler keep their config", where, configFile, err)}
	}
	// Only the idents name the Job, so a comment, a crawler or a reformatting
	// does not run it again. Re-encoding the decoded values gives a
	// canonical form (sorted keys).
	type workspaceIdents struct {
		Name   string `json:"name"`
		Idents any    `json:"idents"`
	}
	idents := make([]workspaceIdents, len(cfg.Workspaces))
	var apiKeys []string
	for i, w := range cfg.Workspaces {
		idents[i] = workspaceIdents{w.Name, w.Idents}
		if !slices.Contains(apiKeys, w.APIKey) {
			apiKeys = append(apiKeys, w.APIKey)
		}
	}
	canonical, err := json.Marshal(idents)
	if err != nil {
		return validConfig{}, &condition.FieldError{Reason: condition.ReasonConfigInvalid, Field: "config", Message: "idents cannot be encoded: " + err.Error()}
	}
	return validConfig{
		text:        text,
		hash:        hashOf([]byte(text))[:instance.ConfigHashLength],
		idents:      hashOf(canonical)[:instance.IdentsHashLength],
		tokens:      cfg.Tokens,
		oidc:        cfg.OIDC,
		enforceAuth: cfg.EnforceAuth,
		oidcSecret:  cfg.OIDCSecret,
		warnings:    cfg.Warnings,
		apiKeys:     apiKeys,
	}, nil
}

// loginCookies is what an OIDC login needs of the public URL: Monocle's
// session cookies are Secure, JWT-Cookie (servant-auth-server's
// defaultCookieSettings, cookieIsSecure = Secure, which
// src/Monocle/Main.hs:187 keeps) and Monocle (src/Monocle/Api/Server.hs:1013-1020,
// setCookieSecure = True), and a browser drops a Secure cookie set on an
// http:// page (RFC 6265bis, 5.6): no login sticks, each page sends the
// user back to the provider. A loopback host (the port-forward URL,
// http://localhost:8090) is a secure context to browsers, which keep
// Secure cookies there. With enforce_auth the login is all Monocle serves:
// refused (hold), held as loginSecret holds; without it, a note.
func loginCookies(publicURL string, cfg validConfig, apiRuns bool) (hold *condition.FieldError, note string) {
	u, err := url.Parse(publicURL)
	if !cfg.oidc || err != nil || u.Scheme != "http" || loopback(u.Hostname()) {
		return nil, ""
	}
	const why = "Monocle's session cookies (JWT-Cookie, Monocle) are Secure, and browsers drop Secure cookies on an http:// page: a login never sticks, each page sends the user back to the OIDC provider"
	const fix = "make the public URL https:// (spec.publicURL, or spec.ingress with a tlsSecretName and no publicURL)"
	if !cfg.enforceAuth {
		return nil, fmt.Sprintf("the config logs in with OIDC and the public URL %s is http://: %s; %s", condition.Quote(publicURL), why, fix)
	}
	held := "no API (and no crawler) is made"
	if apiRuns {
		held = "the API and the crawler keep their running templates"
	}
	return &condition.FieldError{Reason: condition.ReasonLoginNeedsHTTPS, Message: fmt.Sprintf(
		"the public URL %s is http://, and the config enforces an OIDC login (auth.enforce_auth: true): %s; %s until you %s, or turn enforce_auth off",
		condition.Quote(publicURL), why, held, fix)}, ""
}

// loopback: host is one browsers count as a secure context over http
// (W3C Secure Contexts, potentially trustworthy origins).
func loopback(host string) bool {
	host = strings.ToLower(host)
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// configFits refuses a config Metacontroller could not apply.
func configFits(text string) error {
	if len(text) > MaxConfigJSON {
		return fmt.Errorf("%s is %d bytes, over the %d bytes Metacontroller can apply", configFile, len(text), MaxConfigJSON)
	}
	if n := jsonEscapedLen(text); n > MaxConfigJSON {
		return fmt.Errorf("%s is %d bytes once JSON-escaped (as Metacontroller stores it), over the %d bytes it can apply", configFile, n, MaxConfigJSON)
	}
	return nil
}

// jsonEscapedLen is the length of s in a JSON string, quotes left out, as
// encoding/json escapes it (HTML characters too), counted without encoding.
func jsonEscapedLen(s string) int {
	n := 0
	for i, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
			n += 6 // \u00XX, \u2028, \u2029
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\ufffd"):
			n += 6 // an invalid byte, written \ufffd
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

// hashData hashes a string or byte map in key order, for pod template
// annotations that roll the pods when the map changes.
func hashData[V ~string | ~[]byte](m map[string]V) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(m[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
