// Package monoclesearch checks search aliases as Monocle 1.11.2's API does
// when it starts: a config whose alias Monocle would refuse is refused here,
// and none other.
//
// At start (src/Monocle/Main.hs, "Invalid aliases") Monocle runs
// Query.hs' `loadAliases` on every workspace: each alias is parsed with the
// query language (Lexer.hs, Parser.hs), must not be empty, and is compiled
// to an Elasticsearch query as if the time were 2021-06-02 23:00 UTC and the
// user "self" (Query.hs' `queryWithMods`). Compiling checks each
// `field op value`: the field exists, the operator suits its type, the value
// reads (dates, numbers, states), and a project or group names one of the
// workspace. Nothing else is checked then: not regular expressions (only
// Elasticsearch reads them, at query time), not the alias names, nor whether
// one alias uses another (an alias is parsed without the others, so it cannot).
//
// Bounds: an alias longer than MaxLength bytes or with parentheses nested
// deeper than MaxNesting is refused (see their comments); otherwise the
// check runs in time linear in the alias.
package monoclesearch

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// MaxLength bounds an alias, in bytes. Monocle has no limit; aliases are a
// few words, and the whole config lives in a ConfigMap of at most 1 MiB.
const MaxLength = 64 << 10

// MaxNesting bounds how deeply parentheses nest. Monocle has no limit, but
// its parser parses every parenthesised group twice (the `try` in
// Parser.hs' exprParser gives up a group it has parsed whole when no
// "and"/"or" expression follows, then parses it again), so a group nested
// n deep is parsed 2^n times: about a million times at 20, and at 30 or 40,
// by this estimate (not measured), Monocle would not finish parsing before
// any start timeout. No alias a person writes nests that deep.
const MaxNesting = 20

// Error is why Monocle would refuse an alias, in Monocle's words where it
// has them.
type Error struct {
	Message string
	// Offset is where in the alias, in characters (not bytes), as Monocle
	// counts them for a syntax error; for a term Monocle rejects
	// (Monocle says 0), the term's first character.
	Offset int
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (at character %d)", e.Message, e.Offset)
}

// Workspace is what, in a workspace of Monocle's config, an alias may name.
type Workspace struct {
	// Projects are the workspace's `projects[].name`, for `project:NAME`.
	Projects []string
	// Groups are every name listed in the workspace's `idents[].groups`,
	// for `group:NAME` (Config.hs' lookupGroupMembers: a group exists when
	// an ident is in it).
	Groups []string
}

// ValidateAlias reports whether expr is a query Monocle 1.11.2's API accepts
// as a search alias of the workspace ws at start. The error is an *Error.
func (ws Workspace) ValidateAlias(expr string) error {
	if len(expr) > MaxLength {
		return &Error{Message: fmt.Sprintf("Alias longer than %d bytes", MaxLength)}
	}
	if !utf8.ValidString(expr) {
		// Monocle reads its config as text; invalid UTF-8 never reaches here.
		return &Error{Message: "Alias is not valid UTF-8"}
	}
	terms, err := parse([]rune(expr))
	if err != nil {
		return err
	}
	for _, t := range terms { // Query.hs' `query` checks terms left to right
		if msg := ws.check(t); msg != "" {
			return &Error{Message: msg, Offset: t.start}
		}
	}
	if len(terms) == 0 {
		return &Error{Message: "Empty alias"} // Query.hs' loadAlias
	}
	return nil
}

type fieldType uint8

const (
	fieldText fieldType = iota
	fieldRegex
	fieldDate
	fieldNumber
)

// fields is Query.hs' `fields`: the query's field names and their types.
var fields = map[string]fieldType{
	"updated_at":    fieldDate,
	"created_at":    fieldDate,
	"from":          fieldDate,
	"to":            fieldDate,
	"state":         fieldText,
	"repo":          fieldRegex,
	"project":       fieldText,
	"author":        fieldRegex,
	"group":         fieldText,
	"branch":        fieldRegex,
	"approval":      fieldText,
	"ttm":           fieldNumber,
	"tag":           fieldText,
	"file":          fieldRegex,
	"task.priority": fieldText,
	"task.severity": fieldText,
	"task.tag":      fieldRegex,
	"task.score":    fieldNumber,
}

// states are the values of `state:` (Query.hs' mkEqQuery).
var states = []string{"open", "merged", "self_merged", "abandoned", "draft"}

// check is Query.hs' `query` for one term: Monocle's message when it
// rejects the term, "" when it compiles.
func (ws Workspace) check(t term) string {
	typ, ok := fields[t.field]
	if !ok {
		return "Unknown field: " + printable.Escape(t.field) // lookupField
	}
	// `from:` and `to:` are ranges (from> and to<); so are > and <.
	if t.op != tokEqual || t.field == "from" || t.field == "to" {
		switch typ { // mkRangeValue
		case fieldDate:
			return checkDate(t.value)
		case fieldNumber:
			if !readsAsDouble(t.value) {
				return "Invalid number: " + printable.Escape(t.value) // parseNumber
			}
			return ""
		}
		return "Field " + printable.Escape(t.field) + " does not support range operator"
	}
	switch { // mkEqQuery: any other value of a text or regex field compiles
	case t.field == "state" && !slices.Contains(states, t.value):
		return "Invalid value for state: " + printable.Escape(t.value)
	case t.field == "project" && !slices.Contains(ws.Projects, t.value):
		return "Unknown project: " + printable.Escape(t.value) // Config.hs' lookupProject
	case t.field == "group" && !slices.Contains(ws.Groups, t.value):
		return "Unknown group: " + printable.Escape(t.value) // Config.hs' lookupGroupMembers
	case typ == fieldDate:
		return "Invalid date operator for: " + printable.Escape(t.field) + ", ':' is not allowed"
	}
	return ""
}
