package monoclesearch

import (
	"cmp"
	"slices"
	"unicode"
)

// The lexer and parser of Monocle's query language, after
// src/Monocle/Search/Lexer.hs and src/Monocle/Search/Parser.hs (tag 1.11.2).
// They keep Monocle's quirks: a keyword is recognised as a prefix of any word
// ("andrew" is `and` then "rew"), and ">=" / "<=" never lex.

type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokLiteral
	tokAnd
	tokOr
	tokNot
	tokEqual   // ':'
	tokGreater // '>'
	tokLower   // '<'
	tokOpen    // '('
	tokClose   // ')'
)

// token is Lexer.hs' LocatedToken: offsets count characters, and end
// includes the spaces a keyword, a parenthesis or a literal swallows.
type token struct {
	kind       tokenKind
	text       string // a literal's value, quotes removed
	start, end int
}

// symbols are the keywords, in Lexer.hs' order, and the punctuation, each
// tried as a plain prefix (Megaparsec's `symbol`, with no check of what
// follows); no two start alike.
var symbols = []symbol{
	{"and", tokAnd}, {"AND", tokAnd}, {"or", tokOr}, {"OR", tokOr}, {"not", tokNot}, {"NOT", tokNot},
	{":", tokEqual}, {">", tokGreater}, {"<", tokLower}, {"(", tokOpen}, {")", tokClose},
}

type symbol struct {
	text string
	kind tokenKind
}

// isHaskellSpace is Data.Char.isSpace, the space Megaparsec's `space` skips:
// ASCII \t..\r, and the Unicode space separators (Zs: ' ', U+00A0, ...);
// unlike Go's unicode.IsSpace, not U+0085, U+2028 or U+2029.
func isHaskellSpace(r rune) bool {
	return '\t' <= r && r <= '\r' || unicode.Is(unicode.Zs, r)
}

// isValueChar is Lexer.hs' unquoted literal character: anything but
// control characters, space, ! " ( ) : < = >. U+00A0 is one, so it ends up
// inside an unquoted literal rather than between tokens.
func isValueChar(r rune) bool {
	return (r >= 0x23 && r <= 0x27) || (r >= 0x2A && r <= 0x39) || r == 0x3B || r >= 0x3F
}

// isQuotedChar is Lexer.hs' `isText`: anything but control characters
// (tab included) and the double quote; there is no escape.
func isQuotedChar(r rune) bool {
	return r == 0x20 || r == 0x21 || r >= 0x23
}

func skipSpaces(rs []rune, i int) int {
	for i < len(rs) && isHaskellSpace(rs[i]) {
		i++
	}
	return i
}

func hasPrefix(rs []rune, i int, word string) bool {
	for _, w := range word {
		if i >= len(rs) || rs[i] != w {
			return false
		}
		i++
	}
	return true
}

// lex is Lexer.hs' `lex`.
func lex(rs []rune) ([]token, error) {
	var toks []token
	i := skipSpaces(rs, 0)
	for i < len(rs) {
		start := i
		sym := slices.IndexFunc(symbols, func(sym symbol) bool { return hasPrefix(rs, start, sym.text) })
		kind, text := tokLiteral, ""
		switch {
		case sym >= 0:
			kind = symbols[sym].kind
			i += len(symbols[sym].text)
		case isValueChar(rs[i]):
			for i < len(rs) && isValueChar(rs[i]) {
				i++
			}
			text = string(rs[start:i])
		case rs[i] == '"':
			j := i + 1
			for j < len(rs) && isQuotedChar(rs[j]) {
				j++
			}
			if j == i+1 {
				return nil, &Error{Offset: j, Message: "Invalid token"} // "" is not a literal
			}
			if j == len(rs) || rs[j] != '"' {
				return nil, &Error{Offset: j, Message: "Expected closing double quote"}
			}
			text, i = string(rs[start+1:j]), j+1
		default:
			// Operators are not followed by spaces: "a: b" stops here.
			return nil, &Error{Offset: i, Message: "Expected field value (spaces are not allowed after operator)"}
		}
		if kind != tokEqual && kind != tokGreater && kind != tokLower { // keywords, literals and parentheses swallow spaces
			i = skipSpaces(rs, i)
		}
		toks = append(toks, token{kind: kind, text: text, start: start, end: i})
	}
	return toks, nil
}

// term is a field expression, `field op value`: the leaves the query
// compiler of Query.hs checks, in the order it checks them.
type term struct {
	field, value string
	op           tokenKind // tokEqual, tokGreater or tokLower
	start        int
}

// parser is a recursive-descent form of Parser.hs' `exprParser`:
//
//	expr   = closed { ["and" | "or"] closed }   (no "and"/"or" is an implicit and)
//	closed = "not" closed | literal (":" | ">" | "<") literal | "(" expr ")"
//
// Monocle builds right-nested trees with "and" and "or" at one precedence
// (`a or b and c` is `a or (b and c)`); the tree does not change which
// aliases load, so only the terms are kept.
//
// Parser.hs retries `closed` alone when `closed op expr` fails anywhere
// (Megaparsec's `try`); this parser keeps the `closed` it has and only
// undoes the failed continuation, which accepts the same queries and fails
// at the same place, in linear time.
type parser struct {
	toks  []token
	pos   int
	terms []term
	depth int
	limit *Error // a nesting error, which no backtracking may hide
	size  int    // the query's length in characters, where "end of query" is
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{kind: tokEOF, start: p.size, end: p.size}
}

// fail is Parser.hs' error for an unexpected token; expected says what was
// wanted there, "" for nothing in particular.
func (p *parser) fail(expected string) *Error {
	switch t := p.peek(); t.kind {
	case tokEOF:
		return &Error{Offset: p.size, Message: cmp.Or(expected, "Unexpected end of query")}
	case tokAnd, tokOr, tokNot:
		return &Error{Offset: t.end, Message: "Expected expression"}
	case tokClose:
		return &Error{Offset: t.end, Message: "Missing opening paren `(`"}
	default:
		return &Error{Offset: t.start, Message: cmp.Or(expected, "Unexpected token")}
	}
}

func (p *parser) expr() *Error {
	if err := p.closed(); err != nil {
		return err
	}
	for {
		pos, terms, depth := p.pos, len(p.terms), p.depth
		if k := p.peek().kind; k == tokAnd || k == tokOr {
			p.pos++
		}
		if err := p.closed(); err != nil {
			if p.limit != nil {
				return p.limit
			}
			p.pos, p.terms, p.depth = pos, p.terms[:terms], depth
			return nil
		}
	}
}

func (p *parser) closed() *Error {
	for p.peek().kind == tokNot { // "not" applies to the next closed expression only
		p.pos++
	}
	switch t := p.peek(); t.kind {
	case tokOpen:
		if p.depth == MaxNesting {
			p.limit = &Error{Offset: t.start, Message: "Parentheses nested too deeply"}
			return p.limit
		}
		p.depth++
		p.pos++
		if err := p.expr(); err != nil {
			return err
		}
		if p.peek().kind != tokClose {
			return p.fail("Expected closing paren `)`")
		}
		p.pos++
		p.depth--
		return nil
	case tokLiteral:
		p.pos++
		op := p.peek().kind
		if op != tokEqual && op != tokGreater && op != tokLower {
			return p.fail("Expected operator (`:`, `>`, ...)")
		}
		p.pos++
		v := p.peek()
		if v.kind != tokLiteral {
			return p.fail("Expected value")
		}
		p.pos++
		p.terms = append(p.terms, term{field: t.text, value: v.text, op: op, start: t.start})
		return nil
	}
	return p.fail("Expected value")
}

// parse is Parser.hs' `parse []` (no aliases: an alias cannot use another):
// the terms of the query, none for an empty one.
func parse(rs []rune) ([]term, error) {
	toks, err := lex(rs)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, nil
	}
	p := parser{toks: toks, size: len(rs)}
	if err := p.expr(); err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, p.fail("")
	}
	return p.terms, nil
}
