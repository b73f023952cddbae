package monocleconfig

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
)

// go.yaml.in/yaml/v3 builds a whole node graph before anything can look at
// it, and allocates for every node and more for every comment: a config of
// MaxBytes could cost it several times the hook's memory budget (the
// "before" column of TestParseCost's table in BENCHMARKS.md). So Parse
// bounds, from the bytes alone and before yaml.v3 runs, what yaml.v3 can
// make of them, and refuses the config when the bound is over MaxNodes.

// yamlBound bounds what yaml.v3 makes of some bytes.
type yamlBound struct {
	// nodes is at least the number of nodes (documents included) yaml.v3
	// creates, on every document of the stream, whether it parses or not.
	// It also counts nestingNodes for each block collection that may be
	// opened in the middle of a line: see boundYAML.
	nodes int
	// commentLines counts the lines with a '#': yaml.v3 keeps at most one
	// comment record per line that has one.
	commentLines int
	// directiveLines counts the lines that start with '%'. yaml.v3 checks
	// each %TAG directive against every one before it.
	directiveLines int
	// flowOpeners counts the '[' and '{': a level of flow nesting costs
	// yaml.v3 more than the nodes it counts for.
	flowOpeners int
	// aliases counts the '*' where a token may start: with none, the
	// decode reads no node twice.
	aliases int
}

const (
	// commentLineNodes is what a line with a comment counts for against
	// MaxNodes: yaml.v3 keeps a record per comment in a slice that grows
	// by a quarter at a time, so a comment allocates what several nodes
	// do. TestParseCost holds ParseCostOf over the shapes full of comments
	// (BENCHMARKS.md, "The config's parse cost").
	commentLineNodes = 4
	// nestingNodes is what a block collection opened in the middle of a
	// line ("- - - x", "? ? x") counts for over its node: yaml.v3 spends
	// on such a level what several nodes cost (TestParseCost's deep
	// nesting shapes; BENCHMARKS.md). One opened at the start of a line
	// needs a line indented deeper than the one above, so there are few of
	// them (about 720 in MaxBytes). A level of flow nesting counts its
	// closing bracket.
	nestingNodes = 3
	// maxDirectiveLines bounds the lines that may be YAML directives (a
	// config needs none; Monocle's HsYAML reads them).
	maxDirectiveLines = 64
)

// units is what the YAML counts for against MaxNodes.
func (b yamlBound) units() int64 {
	return int64(b.nodes) + commentLineNodes*int64(b.commentLines)
}

// boundYAML reads data once and bounds what yaml.v3 makes of it.
//
// yaml.v3 makes a node of each scalar, alias, sequence start, mapping start
// and document start event (decode.go, parser.parse). Each of those events
// comes from a token the scanner read, or from an indicator after which the
// parser supplies an empty scalar or opens a mapping or sequence that has no
// token of its own (parserc.go, scannerc.go). Each is charged to a byte:
//
//   - a scalar, alias, anchor or tag token: 1, at its first byte (an anchor
//     or a tag without content stands for an empty scalar);
//   - '[' and '{': 1;
//   - '-' followed by a blank or a line end (block entry): 1 for the block
//     sequence it may open, and 1 for the empty item it stands for when no
//     token follows it on its line;
//   - '?' (key indicator; in flow context also in the middle of a plain
//     scalar): 1 for the mapping it may open, 1 for an empty value, and 1
//     for an empty key when no token follows it on its line;
//   - ':' as value indicator: 1 for the mapping it may open (a block
//     mapping, or the single-pair mapping of a flow sequence), and 1 for
//     the empty value it stands for when no token follows it on its line
//     (after a value indicator, a token on the same line is the value, or
//     starts the block collection that is: it cannot be a key of the same
//     mapping). An empty key comes only after '?';
//   - ',' and '}': 1 for the empty value of a flow mapping entry without
//     ':' or '?', unless one of those was counted since the last '[', '{'
//     or ','. Those are on every entry boundary, so that entry is the end
//     of one; a counted ':' or '?' in it is either its own indicator, or
//     one that is not an indicator (in a quoted scalar), or one of a
//     collection nested in it, and the count of either of the last two is
//     free: a ':' or '?' in a flow mapping opens no mapping, and one in a
//     flow sequence is followed by its ']';
//   - ']': 1, for the cost of a level of flow nesting;
//   - "---" at the start of a line: 2, a document and its empty content;
//   - 3 for the implicit first document, its empty content, and the empty
//     value a flow mapping entry gets before an error stops the parse.
//
// Which bytes start a token depends on the context (flow or block, inside a
// quoted or block scalar or not), which one pass without yaml.v3's state
// cannot know. So the bound charges every byte that may start a token as if
// it did: the first byte of a line, and any byte after a blank or after
// '[', '{', ',', '?' or a counted ':'. It does not charge:
//   - what follows a quote, ']', '}' or an anchor's name without a blank: a
//     token there makes no node (the parser wants an indicator after a node,
//     and stops on anything else), so only indicators are counted there;
//   - what follows a blank after a plain scalar begun after a blank (or the
//     start of the line): a plain scalar goes on over blanks, up to an
//     indicator that ends it (':' before a blank, " #", and in flow context
//     ',', '?', brackets), which is counted as such wherever it is;
//   - the rest of a line from a '#' at its start or after a blank, when the
//     line has no quote at all: then that '#' starts a comment, or the whole
//     line is inside a quoted or block scalar that cannot end on it; either
//     way nothing after it on the line is a token.
//
// A quote is never taken to open a quoted scalar: what a quoted scalar holds
// is counted as if it were YAML. TestBoundIsSound and FuzzBound check the
// bound against the nodes yaml.v3 builds.
func boundYAML(data []byte) yamlBound {
	data = utf8Stream(data)
	b := yamlBound{nodes: 3}
	for len(data) > 0 {
		line, next := cutLine(data)
		b.add(line)
		data = data[next:]
	}
	return b
}

// add counts one line (without its line break).
func (b *yamlBound) add(line []byte) {
	if bytes.IndexByte(line, '#') >= 0 {
		b.commentLines++
	}
	if len(line) > 0 && line[0] == '%' {
		b.directiveLines++
	}
	if bytes.HasPrefix(line, []byte("---")) && blankzAt(line, 3) {
		b.nodes += 2
	}
	s := lineScan{b: b, line: line, start: true, content: true, first: true,
		quoteFree: bytes.IndexByte(line, '"') < 0 && bytes.IndexByte(line, '\'') < 0}
	for s.i = 0; s.i < len(line); s.i++ {
		if !s.step() {
			return
		}
	}
}

// lineScan is add's reading of one line, a byte at a time.
type lineScan struct {
	b         *yamlBound
	line      []byte
	i         int
	quoteFree bool
	start     bool // a token may start here
	content   bool // a token that makes a node may start here
	first     bool // nothing but blanks before
	// keyed: a ':' or '?' was counted since the last '[', '{' or ','.
	keyed bool
	// plain: the non-blanks since the last blank are a plain scalar begun
	// after a blank (or more of one), if they are a token at all, with
	// nothing in them that ends one. A plain scalar goes on over blanks:
	// what follows them is more of it, unless it is an indicator that ends
	// it (':' before a blank, ' #', ',', '?', brackets), counted as such.
	plain bool
}

// step reads line[i]: blanks, comments and the indicators that may start a
// node; false when the rest of the line is a comment.
func (s *lineScan) step() bool {
	b, line, i, c := s.b, s.line, s.i, s.line[s.i]
	afterBlank := i == 0 || line[i-1] == ' ' || line[i-1] == '\t'
	nesting := 0 // the cost of a block collection opened mid-line
	if !s.first {
		nesting = nestingNodes
	}
	if c != ' ' && c != '\t' {
		s.first = false
	}
	switch c {
	case ' ', '\t':
		s.start, s.content = !s.plain, !s.plain
	case '#':
		if afterBlank {
			if s.quoteFree {
				return false
			}
			s.plain = false
		}
		s.start, s.content = false, false
	case '-':
		if !s.start || !blankzAt(line, i+1) {
			s.other(c, afterBlank, nesting) // not a block entry: as any other byte
			break
		}
		b.nodes += 1 + emptyAfter(line, i+1) + nesting
		s.start, s.content, s.plain = false, false, false
	case ':':
		if s.start || blankzAt(line, i+1) {
			b.nodes += 1 + emptyAfter(line, i+1)
			s.start, s.content, s.keyed, s.plain = true, true, true, false
		}
	case '&', '*':
		s.anchorOrAlias(c)
	default:
		if c == 0xEF && bytes.HasPrefix(line[i:], bom) {
			// yaml.v3 skips a BOM at the start of a line; elsewhere it is a
			// character, but taking a token to start after it counts more.
			s.i += len(bom) - 1
			s.start, s.content, s.plain = true, true, false
			return true
		}
		s.other(c, afterBlank, nesting)
	}
	return true
}

func (s *lineScan) anchorOrAlias(c byte) {
	if !s.start {
		return
	}
	if s.content {
		s.b.nodes++
	}
	if c == '*' {
		s.b.aliases++
	}
	// The name is what yaml.v3 reads as one (is_alpha); an indicator may
	// follow it at once, ':' among them.
	for s.i+1 < len(s.line) && isAnchorChar(s.line[s.i+1]) {
		s.i++
	}
	s.start, s.content, s.plain = true, false, false
}

// other reads the rest: flow indicators, quotes and plain scalars.
func (s *lineScan) other(c byte, afterBlank bool, nesting int) {
	b := s.b
	if !isPlainChar(c) {
		s.plain = false
	}
	switch c {
	case '?':
		b.nodes += 2 + emptyAfter(s.line, s.i+1) + nesting
		s.start, s.content, s.keyed = true, true, true
	case '[', '{':
		b.nodes++
		b.flowOpeners++
		s.start, s.content, s.keyed = true, true, false
	case ',':
		if !s.keyed {
			b.nodes++
		}
		s.start, s.content, s.keyed = true, true, false
	case '}':
		if !s.keyed {
			b.nodes++
		}
		s.start, s.content = true, false
	case ']':
		b.nodes++
		s.start, s.content = true, false
	case '"', '\'':
		if s.content {
			b.nodes++
		}
		s.start, s.content = true, false
	default:
		if s.content {
			b.nodes++
			s.plain = afterBlank && isPlainChar(c)
		}
		s.start, s.content = false, false
	}
}

// isPlainChar says whether c, at the start of a token, can only start a
// plain scalar, and inside one is more of it (except ':' before a blank,
// handled on its own).
func isPlainChar(c byte) bool {
	switch c {
	case '?', '[', ']', '{', '}', ',', '"', '\'', '!', '|', '>', '%', '@', '`':
		return false
	}
	return true
}

// emptyAfter is 1 when an indicator ending before line[i] may stand for an
// empty node: when no token follows it on its line. After '#' or a NUL the
// next token may be on another line; before ',', ']' or '}' the node is
// empty.
func emptyAfter(line []byte, i int) int {
	rest := bytes.TrimLeft(line[i:], " \t")
	if len(rest) == 0 || bytes.IndexByte([]byte("#,]}\x00"), rest[0]) >= 0 {
		return 1
	}
	return 0
}

var bom = []byte("\xef\xbb\xbf")

// blankzAt is yaml.v3's is_blankz at line[i]: a space, a tab, a NUL, or the
// end of the line (a line break or the end of the input).
func blankzAt(line []byte, i int) bool {
	return i >= len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == 0
}

// isAnchorChar is yaml.v3's is_alpha, the characters of anchor names.
func isAnchorChar(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == '_' || c == '-'
}

// utf8Stream is the text yaml.v3 reads from data
// (yaml_parser_determine_encoding): UTF-16 after its byte order mark
// decoded to UTF-8, a leading UTF-8 byte order mark dropped. Invalid UTF-16
// decodes to U+FFFD here, where yaml.v3 stops with an error.
func utf8Stream(data []byte) []byte {
	var order binary.ByteOrder
	switch {
	case bytes.HasPrefix(data, []byte("\xff\xfe")):
		order = binary.LittleEndian
	case bytes.HasPrefix(data, []byte("\xfe\xff")):
		order = binary.BigEndian
	default:
		return bytes.TrimPrefix(data, bom)
	}
	units := make([]uint16, len(data)/2-1)
	for i := range units {
		units[i] = order.Uint16(data[2+2*i:])
	}
	return []byte(string(utf16.Decode(units)))
}
