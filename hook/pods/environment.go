package pods

import (
	"fmt"
	"slices"
	"strings"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/command"
)

// Who sets a variable of the Monocle pods' environment.
const (
	// SetPinned: the hook sets it in the container's env, which wins over
	// any Secret's key of the name (envFrom).
	SetPinned = "pinned"
	// SetUser: the Secrets in the pods' environment may set it.
	SetUser = "the user's"
	// SetRefused: a key of the name in those Secrets holds the API and the
	// crawler (VariableRefused).
	SetRefused = "refused"
)

// Variable is one that Monocle 1.11.2's API or crawler, or what runs them,
// reads from its environment, and who sets it. A Name ending in "*" is
// every variable with that prefix.
type Variable struct {
	Name, ReadBy, Set, Why string
}

// Environment is every variable the API and the crawler read, as Monocle
// 1.11.2 reads them (src/CLI.hs:101-118, the usageApiEnv and
// usageCrawlerEnv parsers; envparse's def applies only to an unset
// variable, so a key set empty is a value), and what their libraries and
// runtime read. docs/configuration.md's table is this one (TestEnvironmentTable), and
// what the hook sets on the containers is its pinned rows
// (TestPinnedVariables).
var Environment = []Variable{
	{"MONOCLE_CONFIG", "API, crawler", SetPinned, "the mounted config's path (src/CLI.hs:102)"},
	{"MONOCLE_ELASTIC_URL", "API", SetPinned, "the spec's Elasticsearch (src/CLI.hs:103); the crawler never reads it"},
	{"MONOCLE_API_PORT", "API", SetPinned, "8080, the port of its probes, its Service and the crawler's URL (src/CLI.hs:104)"},
	{"MONOCLE_PUBLIC_URL", "API, crawler", SetPinned, "the API: the spec's public URL, normalized (src/CLI.hs:105); the crawler: the API's Service (src/CLI.hs:90)"},
	{"MONOCLE_WEBAPP_TITLE", "API", SetPinned, "the spec's webappTitle (default Monocle), escaped for the web UI's script (src/CLI.hs:106, src/Monocle/Main.hs:57)"},
	{"MONOCLE_WEBAPP_PATH", "API", SetPinned, "the image's web UI, /usr/share/monocle/webapp/: elsewhere the API exits at start (src/CLI.hs:107, src/Monocle/Main.hs:44-63)"},
	{"MONOCLE_CRAWLER_MONITORING", "crawler", SetPinned, "9001, the port of its probes (src/CLI.hs:110)"},
	{"http_proxy", "API", SetPinned, "empty on the API: its Elasticsearch requests are plain HTTP and may carry the URL's credentials, never through a proxy (src/Monocle/Env.hs:41, http-client's defaultManagerSettings reads it in any letter case, the exact name first); the crawler's is the user's"},
	{"API_PROXY", "crawler", SetPinned, "empty: the crawler reaches the API in the cluster, with the crawlers' key and the admin token (src/Monocle/Client.hs:84-86)"},
	{"MONOCLE_JWK_GEN_KEY", "API", SetUser, "the login signing key, 64 bytes or more; the hook generates one (src/CLI.hs:108; shorter: LoginKeyTooShort)"},
	{"MONOCLE_ADMIN_TOKEN", "API, crawler", SetUser, "the admin token (src/Monocle/Api/Server.hs:127); set empty with enforce_auth: AdminTokenEmpty"},
	{"CRAWLERS_API_KEY", "API, crawler", SetUser, "or the variable a workspace's crawlers_api_key names: the crawlers' key; the hook generates CRAWLERS_API_KEY (src/Monocle/Config.hs:185-198); set empty, anyone reaching the API could add documents (src/Monocle/Api/Server.hs:311): VariableRefused"},
	{"GITHUB_TOKEN", "crawler", SetUser, "and the other provider tokens a crawler names: GITLAB_TOKEN, GERRIT_PASSWORD, BUGZILLA_TOKEN (src/Macroscope/Main.hs:338-382; missing: CrawlerTokenMissing)"},
	{"MONOCLE_OIDC_<NAME>_CLIENT_SECRET", "API", SetUser, "the OIDC client secret (src/Monocle/Config.hs:293-325); missing with enforce_auth: LoginSecretMissing"},
	{"TLS_NO_VERIFY", "crawler", SetUser, "any value but 0 turns off the check of the providers' certificates (src/Monocle/Client.hs:45-50): a note says so"},
	{"TLS_CIPHERS", "crawler", SetUser, "an OpenSSL cipher list (src/Monocle/Client.hs:61)"},
	{"https_proxy", "API, crawler", SetUser, "in any letter case, with no_proxy: the proxy of the OIDC provider's and the code forges' https requests"},
	{"no_proxy", "API, crawler", SetUser, "in any letter case: where https_proxy is not used"},
	{"TZ", "API, crawler", SetUser, "the time zone of the log lines only (src/Monocle/Logging.hs:110)"},
	{"GHCRTS", "the Haskell runtime", SetRefused, "runtime options: the binary is built with -rtsopts (monocle.cabal), so -M16m ends the process and -S writes to a file it names"},
	{"PATH", "the container runtime, the image's wrapper", SetRefused, "replaces the image's: the wrapper runs env by name, so another program, or none, would run (nix/default.nix:506)"},
	{"LD_*", "the dynamic loader", SetRefused, "changes what code the processes load"},
	{"GLIBC_TUNABLES", "glibc", SetRefused, "changes how glibc allocates and runs"},
	{"GCONV_PATH", "glibc", SetRefused, "changes what code glibc loads to convert text"},
	{"LOCPATH", "glibc", SetRefused, "changes the locale files glibc reads"},
	{"LANG", "glibc, the Haskell runtime", SetRefused, "with LANGUAGE and LC_*: the image sets none, so Monocle reads its environment, arguments and files as ASCII; another locale changes how it decodes them"},
	{"LANGUAGE", "glibc", SetRefused, "as LANG"},
	{"LC_*", "glibc, the Haskell runtime", SetRefused, "as LANG"},
	{"SHELLOPTS", "the image's wrapper (sh)", SetRefused, "with BASHOPTS: options of the shell that splits Monocle's arguments (nix/default.nix); noglob or failglob change them"},
	{"BASHOPTS", "the image's wrapper (sh)", SetRefused, "as SHELLOPTS"},
	{"FAKEROOTKEY", "libfakeroot (the wrapper preloads it)", SetRefused, "with FAKED_MODE: state of the fakeroot the wrapper preloads (nix/default.nix:506)"},
	{"FAKED_MODE", "libfakeroot (the wrapper preloads it)", SetRefused, "as FAKEROOTKEY"},
}

// refusedVariable is the row that refuses a Secret's key of that name, or
// nil. Variable names are case-sensitive: PATH is refused, Path is not. It
// runs on every key of the pods' Secrets at each sync: a map lookup, then
// the few refused prefixes.
func refusedVariable(key string) *Variable {
	if v := environmentByName[key]; v != nil && v.Set == SetRefused {
		return v
	}
	for _, v := range refusedPrefixes {
		if strings.HasPrefix(key, strings.TrimSuffix(v.Name, "*")) {
			return v
		}
	}
	return nil
}

// environmentByName are Environment's rows of one name; refusedPrefixes
// its refused rows of a prefix (a Name ending in "*").
var environmentByName, refusedPrefixes = func() (map[string]*Variable, []*Variable) {
	byName := map[string]*Variable{}
	var prefixes []*Variable
	for i, v := range Environment {
		switch {
		case !strings.HasSuffix(v.Name, "*"):
			byName[v.Name] = &Environment[i]
		case v.Set == SetRefused:
			prefixes = append(prefixes, &Environment[i])
		}
	}
	return byName, prefixes
}()

// maxListedVariables bounds the keys a message names: a Secret may hold
// thousands.
const maxListedVariables = 5

// secretKey is one key of a Secret in the pods' environment.
type secretKey struct{ secret, key string }

// refusedVariables holds the API and the crawler, as loginSecret does, when
// a Secret in their environment sets a variable that changes how Monocle's
// processes run rather than what they do (Environment's refused rows), or
// sets the crawlers' key empty. sources are the Secrets' names, in envFrom
// order, with data their data; apiKeys the variables the config reads the
// crawlers' key from.
func refusedVariables(namespace string, sources []string, data []map[string][]byte, apiKeys []string, apiRuns bool) *condition.FieldError {
	var refused []secretKey
	var why []string
	for i, d := range data {
		var keys []string
		for key := range d {
			if refusedVariable(key) != nil {
				keys = append(keys, key)
			}
		}
		slices.Sort(keys)
		for _, key := range keys {
			refused = append(refused, secretKey{sources[i], key})
			if v := refusedVariable(key); len(why) < maxListedVariables && !slices.Contains(why, v.Name+": "+v.Why) {
				why = append(why, v.Name+": "+v.Why)
			}
		}
	}
	var empty []secretKey
	for _, name := range apiKeys {
		if i := lastSource(data, name); i >= 0 && len(data[i][name]) == 0 && !slices.Contains(empty, secretKey{sources[i], name}) {
			empty = append(empty, secretKey{sources[i], name})
		}
	}
	if len(refused) == 0 && len(empty) == 0 {
		return nil
	}
	var parts []string
	if len(refused) > 0 {
		parts = append(parts, fmt.Sprintf("%s would change how Monocle's processes run (%s)", nameKeys(refused), strings.Join(why, "; ")))
	}
	if len(empty) > 0 {
		// src/Monocle/Api/Server.hs:311, 398: the key a crawler sends is
		// compared with the API's, so an empty one is anyone's.
		parts = append(parts, fmt.Sprintf("%s, the crawlers' API key, is empty: anyone reaching the API could add and commit documents", nameKeys(empty)))
	}
	held := "no API (and no crawler) is made"
	if apiRuns {
		held = "the API and the crawler keep their running templates"
	}
	all := append(refused, empty...)
	first := all[0].secret
	var keys []string
	for _, k := range all {
		if k.secret == first && len(keys) < maxListedVariables {
			keys = append(keys, k.key)
		}
	}
	rest := ""
	if len(keys) < len(all) {
		rest = " (the rest are named once these are gone)"
	}
	return &condition.FieldError{Reason: condition.ReasonVariableRefused, Message: fmt.Sprintf("%s; %s until the keys are removed%s: run %s",
		strings.Join(parts, "; "), held, rest, removeKeys(namespace, first, keys))}
}

// lastSource is the index of the Secret whose key name the pods get
// (envFrom: the later wins), or -1.
func lastSource(data []map[string][]byte, name string) int {
	for i := len(data) - 1; i >= 0; i-- {
		if _, ok := data[i][name]; ok {
			return i
		}
	}
	return -1
}

// nameKeys names at most maxListedVariables keys, each with its Secret.
func nameKeys(keys []secretKey) string {
	var parts []string
	for _, k := range keys[:min(len(keys), maxListedVariables)] {
		parts = append(parts, fmt.Sprintf("key %s of Secret %s", condition.Quote(k.key), condition.Quote(k.secret)))
	}
	if more := len(keys) - len(parts); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, ", ")
}

// removeKeys is the command that removes keys from secret.
func removeKeys(namespace, secret string, keys []string) string {
	ops := make([]string, len(keys))
	for i, key := range keys {
		if !command.Key(key) {
			return "(no command: " + condition.Quote(key) + " is not a Secret's key)"
		}
		ops[i] = `{"op":"remove","path":"/data/` + key + `"}`
	}
	return condition.Kubectl(namespace, []string{secret}, "patch", "secret", secret, "--type=json", "-p", "["+strings.Join(ops, ",")+"]")
}

// environmentNotes say what a Secret in the pods' environment sets that is
// not used as written: a pinned variable, and TLS_NO_VERIFY set to
// anything but 0.
func environmentNotes(sources []string, data []map[string][]byte) []string {
	var notes []string
	var shadowed []secretKey
	for _, v := range Environment {
		if i := lastSource(data, v.Name); i >= 0 && v.Set == SetPinned {
			shadowed = append(shadowed, secretKey{sources[i], v.Name})
		}
	}
	if len(shadowed) > 0 {
		notes = append(notes, fmt.Sprintf("%s: the hook sets it in the pods, over the Secret's (see docs/configuration.md's environment table)", nameKeys(shadowed)))
	}
	// src/Monocle/Client.hs:45-50: Just x | x /= "0" -> Insecure.
	if i := lastSource(data, "TLS_NO_VERIFY"); i >= 0 && string(data[i]["TLS_NO_VERIFY"]) != "0" {
		notes = append(notes, fmt.Sprintf("key TLS_NO_VERIFY of Secret %s is set and not 0: the crawler does not check the certificates of the code forges it crawls (Monocle reads any other value, empty or false too, as off)", condition.Quote(sources[i])))
	}
	return notes
}
