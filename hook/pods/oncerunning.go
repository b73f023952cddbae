package pods

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
)

// What Monocle reads once running, past its config loader: the crawler's
// provider tokens, the API's login key, and where OIDC logins keep state.

// minLoginKey is the length from which Monocle signs logins with
// MONOCLE_JWK_GEN_KEY (src/Monocle/Api/Jwt.hs, doGenJwk: BS.length key >= 64,
// in UTF-8 bytes); a shorter one is replaced by a random key per process.
const minLoginKey = 64

// listed caps the crawlers and variables a message names.
const listed = 5

// minListed is the least room a CrawlerTokenMissing message keeps for the
// tokens it lists before its command: the first of them, cut.
const minListed = 200

// missingTokens holds the crawler when a missing token would make its
// process exit (hold), and notes those that only skip their crawler. A
// crawler that is off reads no token.
func missingTokens(namespace string, n instance.Names, s Settings, tokens monocleconfig.Tokens, crawlerRuns bool) (hold *condition.FieldError, notes []string) {
	if !s.crawler || tokens.Count == 0 {
		return nil, nil
	}
	var exits, skips []monocleconfig.MissingToken
	for _, m := range tokens.Missing {
		if m.Exits {
			exits = append(exits, m)
		} else {
			skips = append(skips, m)
		}
	}
	// A token goes in the user's own Secret when the spec names one (the
	// pods read it too), else in the generated one, whose keys the hook keeps.
	secret := cmp.Or(s.secret, n.API)
	if tokens.Exits {
		held := "no crawler is made"
		if crawlerRuns {
			held = "the crawler keeps its running template"
		}
		// The message is cut to maxMessage: the command is never what
		// is cut (a command cut short runs something else, or nothing),
		// but the list of tokens before it.
		head := fmt.Sprintf("; %s until the Secret %s has %s: ", held, condition.Quote(secret), variables(exits))
		add := addKeys(namespace, secret, exits, condition.MaxMessage-len(head)-minListed)
		list := listTokens(exits, tokens.Count-len(tokens.Missing))
		hold = &condition.FieldError{Reason: condition.ReasonCrawlerTokenMissing, Field: "", Message: condition.Cut(list, max(condition.MaxMessage-len(head)-len(add)-1, 0)) + head + add}
	}
	if len(skips) > 0 {
		// A note is not cut (only the whole condition is, far longer).
		notes = append(notes, fmt.Sprintf("%s; the Secret %s can have %s: %s", listTokens(skips, 0), condition.Quote(secret), variables(skips), addKeys(namespace, secret, skips, condition.MaxMessage)))
	}
	return hold, notes
}

// listTokens names the first few tokens, and counts the others, with
// unlisted more.
func listTokens(tokens []monocleconfig.MissingToken, unlisted int) string {
	parts := make([]string, 0, listed+1)
	for _, m := range tokens[:min(len(tokens), listed)] {
		parts = append(parts, m.String())
	}
	if more := len(tokens) - min(len(tokens), listed) + unlisted; more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more missing tokens", more))
	}
	return strings.Join(parts, "; ")
}

// keysOf is the distinct variables of tokens, in order, at most listed,
// and how many others there are.
func keysOf(tokens []monocleconfig.MissingToken) (keys []string, more int) {
	for _, m := range tokens {
		switch {
		case slices.Contains(keys, m.Variable):
		case len(keys) < listed:
			keys = append(keys, m.Variable)
		default:
			more++ // an upper bound: the others are not deduplicated
		}
	}
	return keys, more
}

func variables(tokens []monocleconfig.MissingToken) string {
	keys, more := keysOf(tokens)
	for i, k := range keys {
		keys[i] = condition.Quote(k)
	}
	if more > 0 {
		keys = append(keys, fmt.Sprintf("up to %d more variables (the same command adds them)", more))
	}
	return strings.Join(keys, ", ")
}

// addKeys is the command that adds the tokens' variables to a Secret, each
// from a file of the project's own naming (./token-1, ./token-2, ...), and
// says which token goes in which: the token is never typed on a command
// line, and no command reads a file whose name the config chose (a
// variable named .kube would read ~/.kube pasted at home). It takes the
// most variables whose text fits in budget bytes, and says how many more
// there are; when not one fits, it prints no command.
func addKeys(namespace, secret string, tokens []monocleconfig.MissingToken, budget int) string {
	keys, more := keysOf(tokens)
	for _, k := range keys {
		if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
			// envFrom takes a Secret's keys as they are: no key can be
			// a variable of that name.
			return fmt.Sprintf("%s cannot be a Secret's key (%s): name another variable in the config", condition.Quote(k), errs[0])
		}
	}
	for n := len(keys); n > 0; n-- {
		if text := addKeysCommand(namespace, secret, keys[:n], more+len(keys)-n); len(text) <= budget {
			return text
		}
	}
	return "(no command: the names are too long to print one whole in this message)"
}

// addKeysCommand is addKeys' text for keys, and more variables left out.
func addKeysCommand(namespace, secret string, keys []string, more int) string {
	files := make([]string, len(keys))
	args := []string{"create", "secret", "generic", secret}
	for i, k := range keys {
		file := "./token-" + strconv.Itoa(i+1)
		files[i] = condition.Quote(k) + " to " + file
		args = append(args, "--from-file="+k+"="+file)
	}
	also := ""
	if more > 0 {
		also = fmt.Sprintf(" (then the same for up to %d more variables)", more)
	}
	return fmt.Sprintf("write each token, without a final newline, to its file (%s) and run %s%s", strings.Join(files, ", "),
		condition.Kubectl(namespace, []string{secret}, append(args, "--dry-run=client", "-o", "json")...)+
			" | "+condition.Kubectl(namespace, []string{secret}, "patch", "secret", secret, "--type=merge", "--patch-file=/dev/stdin"), also)
}

// loginKey checks the login key the API pods get: the user's Secret's, when
// it has one (envFrom: later sources win), else the generated Secret's.
// Short, it holds the API when the API signs with it (signs: OIDC, or an
// admin token), else it is a note.
func loginKey(namespace string, n instance.Names, s Settings, generated map[string][]byte, rel wire.Related, apiRuns, signs bool) (hold *condition.FieldError, note string) {
	secret, key := keySource(n, s, generated, rel, jwkKeyName)
	if len(key) >= minLoginKey {
		return nil, ""
	}
	held := "the API is made with it"
	switch {
	case !signs:
		held = "nothing signs with it yet (no OIDC, no MONOCLE_ADMIN_TOKEN), so nothing is held"
	case apiRuns:
		held = "the API and the crawler keep their running templates"
	}
	// Never the key itself: only its length.
	message := fmt.Sprintf(
		"key %s of Secret %s is %d bytes: Monocle signs logins and admin tokens with it only from %d bytes on, and otherwise draws a random key in each API process, "+
			"so that every restart logs everyone out and a login on one replica is refused by another; %s. "+
			"Remove it, and the API gets the %d-character key the hook generates: %s",
		jwkKeyName, condition.Quote(secret), len(key), minLoginKey, held, minLoginKey,
		condition.Kubectl(namespace, []string{secret}, "patch", "secret", secret, "--type=json", "-p", `[{"op":"remove","path":"/data/`+jwkKeyName+`"}]`))
	if !signs {
		return nil, message
	}
	return &condition.FieldError{Reason: condition.ReasonLoginKeyTooShort, Field: "", Message: message}, ""
}

// loginSecret holds the API when its config enforces login and its pods
// lack the OIDC client secret, or get it empty: Monocle would then log
// AuthSystemFailed and serve every workspace to anyone
// (src/Monocle/Config.hs:297-318, src/Monocle/Main.hs:166-171,
// src/Monocle/Api/Server.hs:103-112). It fails closed: a running API keeps
// its template, a new Monocle gets no API. Without enforce_auth, the config
// check's warning is a note.
func loginSecret(namespace string, n instance.Names, s Settings, cfg validConfig, envData []map[string][]byte, apiRuns bool) *condition.FieldError {
	if !cfg.enforceAuth || cfg.oidcSecret == "" || envNonEmpty(envData, cfg.oidcSecret) {
		return nil
	}
	held := "no API (and no crawler) is made"
	if apiRuns {
		held = "the API and the crawler keep their running templates"
	}
	secret := cmp.Or(s.secret, n.API)
	variable := []monocleconfig.MissingToken{{Variable: cfg.oidcSecret}}
	return &condition.FieldError{Reason: condition.ReasonLoginSecretMissing, Message: fmt.Sprintf(
		"the config enforces login (auth.enforce_auth: true), and the API reads its OIDC client secret from %s, which its pods do not get, or get empty: "+
			"Monocle would start without login and serve every workspace to anyone; %s until the Secret %s has it: %s",
		condition.Quote(cfg.oidcSecret), held, condition.Quote(secret), addKeys(namespace, secret, variable, condition.MaxMessage/2))}
}

// adminToken holds the API, as loginSecret does, when its config enforces
// login and its pods get MONOCLE_ADMIN_TOKEN set empty: Monocle's
// /api/2/auth/get gives whoever sends a token equal to it (an empty one) a
// login with no expiry (src/Monocle/Api/Server.hs:122-131), which checkAuth
// takes (Server.hs:103-112). Unset, the admin token is off.
func adminToken(namespace string, n instance.Names, s Settings, cfg validConfig, rel wire.Related, envData []map[string][]byte, apiRuns bool) *condition.FieldError {
	const variable = "MONOCLE_ADMIN_TOKEN"
	if !cfg.enforceAuth || envNonEmpty(envData, variable) || !envHas(envData)(variable) {
		return nil
	}
	secret, _ := keySource(n, s, nil, rel, variable)
	held := "no API (and no crawler) is made"
	if apiRuns {
		held = "the API and the crawler keep their running templates"
	}
	return &condition.FieldError{Reason: condition.ReasonAdminTokenEmpty, Message: fmt.Sprintf(
		"the config enforces login (auth.enforce_auth: true), and key %s of Secret %s is empty: Monocle would give anyone who sends an empty admin token a login with no expiry; "+
			"%s until it is removed (the admin token is then off) or set: %s",
		variable, condition.Quote(secret), held,
		condition.Kubectl(namespace, []string{secret}, "patch", "secret", secret, "--type=json", "-p", `[{"op":"remove","path":"/data/`+variable+`"}]`))}
}

// keySource is the Secret the pods read key from, and its value there:
// the user's, when it has the key (envFrom: the later source wins), else
// the generated one (whose data is generated).
func keySource(n instance.Names, s Settings, generated map[string][]byte, rel wire.Related, key string) (secret string, value []byte) {
	if sec := rel.Secrets[s.secret]; s.secret != "" && sec != nil {
		if v, ok := sec.Data[key]; ok {
			return s.secret, v
		}
	}
	return n.API, generated[key]
}

// envNonEmpty: a Secret in the pods' environment has name, not empty.
func envNonEmpty(envData []map[string][]byte, name string) bool {
	i := lastSource(envData, name)
	return i >= 0 && len(envData[i][name]) > 0
}
