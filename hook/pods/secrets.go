package pods

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
)

// secretData keeps every observed key of the generated Secret (an admin's
// provider tokens and own keys too) and generates, once, the keys Monocle
// needs that are missing: the crawlers' API key, and the key every API
// replica signs logins with (Monocle wants 64 characters or more).
func secretData(observed *corev1.Secret, random io.Reader) (map[string][]byte, error) {
	data := map[string][]byte{}
	if observed != nil {
		maps.Copy(data, observed.Data)
	}
	for _, k := range []struct {
		name   string
		length int
	}{{apiKeyName, 32}, {jwkKeyName, 64}} {
		if len(data[k.name]) > 0 {
			continue
		}
		key, err := child.RandomKey(random, k.length)
		if err != nil {
			return nil, fmt.Errorf("generating %s: %w", k.name, err)
		}
		data[k.name] = key
	}
	return data, nil
}

// hashSecrets hashes the data of every Secret in the pods' environment.
func hashSecrets(secrets []map[string][]byte) string {
	if len(secrets) == 1 {
		return hashData(secrets[0])
	}
	combined := map[string]string{}
	for i, data := range secrets {
		combined[strconv.Itoa(i)] = hashData(data)
	}
	return hashData(combined)
}

// envHas reports whether a variable is in the environment of every Monocle
// pod, API and crawler, with one value: the keys of the Secrets they get
// whole, the config's path the hook sets on both, HOME (Monocle's image
// sets it: nix/default.nix) and PATH (the image's, or the runtime's). Not
// the variables the hook sets on one container or to another value on
// each (MONOCLE_PUBLIC_URL is the API's own URL in the crawler), nor
// HOSTNAME, each pod's name: a crawlers_api_key naming one could never
// match between the crawler and the API.
func envHas(secrets []map[string][]byte) func(string) bool {
	return func(name string) bool {
		switch name {
		case "MONOCLE_CONFIG", "HOME", "PATH":
			return true
		case "HOSTNAME":
			// Set by the runtime, per pod.
			return false
		}
		if v := environmentByName[name]; v != nil && v.Set == SetPinned {
			// Pinned per container (the API's, or the crawler's alone)
			// over any Secret's key of that name.
			return false
		}
		return lastSource(secrets, name) >= 0
	}
}

// podSecrets gathers the data of the Secrets the Monocle pods read: env,
// those in their environment whole, in envFrom order; hashed, those and the
// Elasticsearch URL's key, whose change rolls the pods. A named Secret that
// is not there is reported (missing: Answer holds the pods as they run, or
// makes none); a URL Monocle would not reach Elasticsearch at (an https
// one) holds the pods as they are.
func podSecrets(s Settings, given Given, generated map[string][]byte, rel wire.Related) (env, hashed []map[string][]byte, missing []*condition.FieldError, hold *condition.FieldError) {
	env = []map[string][]byte{generated}
	relSecrets := rel.Secrets
	if s.secret != "" {
		if sec := relSecrets[s.secret]; sec == nil {
			missing = append(missing, &condition.FieldError{Reason: condition.ReasonReferenceNotFound, Field: "secretRef.name", Message: fmt.Sprintf("names Secret %s, which does not exist", condition.Quote(s.secret))})
		} else {
			env = append(env, sec.Data)
		}
	}
	hashed = env
	if ref := given.ElasticURLSecret; ref != nil {
		sec := relSecrets[ref.Name]
		var why string
		if sec != nil && sec.Data[ref.Key] != nil {
			why = elasticURLHold(string(sec.Data[ref.Key]))
		}
		switch {
		case sec == nil || sec.Data[ref.Key] == nil:
			missing = append(missing, &condition.FieldError{Reason: condition.ReasonReferenceNotFound, Field: "elasticsearch.urlSecretRef", Message: fmt.Sprintf("names key %s of Secret %s, which does not exist", condition.Quote(ref.Key), condition.Quote(ref.Name))})
		case why != "":
			// Never quote the value: it may hold credentials.
			hold = &condition.FieldError{Reason: condition.ReasonInvalidElasticsearchURL, Field: "elasticsearch.urlSecretRef", Message: fmt.Sprintf("key %s of Secret %s %s: the API and the crawler stay as they are", condition.Quote(ref.Key), condition.Quote(ref.Name), why)}
		default:
			hashed = append(slices.Clip(env), map[string][]byte{ref.Key: sec.Data[ref.Key]})
		}
	}
	return env, hashed, missing, hold
}

// elasticURLHold is why Monocle would not reach Elasticsearch at the URL
// of a Secret, "" when it would. The pods read the value as it is, so it
// must already be what Monocle reads right (child.ElasticURL): without a
// scheme it gets http:// (src/CLI.hs:128-132), but a trailing slash or an
// uppercase scheme cannot be written away here.
func elasticURLHold(value string) string {
	url, err := child.ElasticURL(value)
	switch {
	case err != nil:
		return err.Error()
	case url == value || url == "http://"+value:
		return ""
	case strings.HasSuffix(value, "/"):
		return "ends in /, and Monocle joins its paths to it with / (its requests would start with //): drop the trailing /"
	}
	return "has its scheme in upper case, which Monocle reads as a host: write http:// in lower case"
}
