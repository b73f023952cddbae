package monocleconfig

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// indexNameProblem is mkIndexName (src/Monocle/Config.hs), which the
// FromDhall instance of IndexName runs on every workspace name when the
// config is extracted: "" when name is valid. Data.Char's isLetter and
// isLower are the Unicode general categories L and Ll, as Go's unicode
// package has them: a letter of a caseless script (Lo) fails too.
func indexNameProblem(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) >= 256:
		return "must be shorter than 256 bytes"
	}
	for _, r := range name {
		if unicode.IsLetter(r) && !unicode.IsLower(r) {
			return "its letters must all be lowercase"
		}
	}
	if strings.ContainsAny(name, "\\/*?\"<>| ,#:") {
		return `must not contain \ / * ? " < > | space , # or :`
	}
	if name == "." || name == ".." {
		return `must not be "." or ".."`
	}
	if first, _ := utf8.DecodeRuneInString(name); strings.ContainsRune("-_+.", first) {
		return "must not start with - _ + or ."
	}
	return ""
}

// indexPrefix is indexNamePrefix (src/Monocle/Env.hs): the API creates the
// Elasticsearch index indexPrefix+name for every workspace at start
// (src/Monocle/Main.hs, I.ensureIndex), and dies when Elasticsearch refuses it.
const indexPrefix = "monocle.changes.1."

// elasticIndexProblem is what Elasticsearch 7 refuses in an index name
// (MetadataCreateIndexService.validateIndexName) beyond mkIndexName: more
// than 255 bytes, or a character that lowercasing changes (Java's
// toLowerCase(Locale.ROOT)); mkIndexName lets through non-letters such as
// Ⓐ or Ⅰ, which have lowercase forms.
func elasticIndexProblem(name string) string {
	if len(indexPrefix)+len(name) > 255 {
		return "must be at most 237 bytes: the API creates the Elasticsearch index monocle.changes.1.<name>, and Elasticsearch refuses index names over 255 bytes"
	}
	for _, r := range name {
		if unicode.ToLower(r) != r {
			return "must not contain characters with a lowercase form: Elasticsearch refuses them in the index monocle.changes.1.<name>"
		}
	}
	return ""
}

// quoteName quotes a workspace name for a message, cut short.
func quoteName(name string) string {
	if !utf8.ValidString(name) {
		return "(not valid UTF-8)"
	}
	return printable.Quote(shortText(name))
}

// envName is how a message shows an environment variable name taken from
// the config: only names shaped like one (CAPITALS, digits, underscores, not
// a long run without underscore), since a user may have pasted the secret
// itself where its variable's name belongs.
func envName(name string) string {
	if envNameForm.MatchString(name) && len(name) <= 64 && (len(name) < 16 || strings.Contains(name, "_")) {
		return name
	}
	return "(value not shown)"
}

var envNameForm = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
