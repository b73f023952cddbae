package monocleconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// Monocle reads its config with dhall-yaml's dhallFromYaml, which decodes the
// YAML with HsYAML-aeson's decode1Strict (dhall-yaml src/Dhall/YamlToDhall.hs):
// HsYAML's YAML 1.2 parser and core schema, then aeson Values. This file gives
// the same JSON view of a go.yaml.in/yaml/v3 node graph, without expanding it:
//   - exactly one document (decode1: "No documents found", "Multiple documents");
//   - plain untagged scalars resolved by the core schema (HsYAML
//     src/Data/YAML/Schema/Internal.hs, coreSchemaResolver), not by yaml.v3's
//     resolver, which accepts 1_000, 0b1, ... as numbers;
//   - quoted and block scalars are strings; explicit !!str/!!int/!!float/
//     !!bool/!!null tags are checked; any other tag on a scalar is an error
//     ("unresolved YAML scalar"); tags on collections are ignored;
//   - mapping keys must resolve to strings ("non-String key encountered");
//   - a duplicated key keeps its last value (aeson's object);
//   - an alias to a node that contains it is an error ("cycle detected");
//   - "<<" is an ordinary key: YAML 1.2 has no merge keys.

// jsonKind is the aeson Value constructor a node decodes to.
type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonObject
	jsonArray
)

func (k jsonKind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "a map", "a list"}[k]
}

// scalar is a resolved scalar. For numbers it keeps what Dhall's Natural
// needs: whether the number is a non-negative integer once it went through
// aeson's Scientific (dhall-json JSONToDhall.hs, "number ~> Natural").
type scalar struct {
	kind    jsonKind
	text    string // the string, for jsonString
	natural bool   // for jsonNumber
}

const (
	tagStr   = "!!str"
	tagInt   = "!!int"
	tagFloat = "!!float"
	tagBool  = "!!bool"
	tagNull  = "!!null"
)

// coreTags are the core schema's tags other than !!str, in the order a
// plain scalar without a tag is tried as each.
var coreTags = []string{tagNull, tagBool, tagInt, tagFloat}

// resolveScalar gives the JSON value HsYAML-aeson makes of a scalar node.
func resolveScalar(n *yaml.Node) (scalar, error) {
	quotedOrBlock := yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle
	switch {
	case n.Style&yaml.TaggedStyle != 0: // read by its tag, below
	case n.Style&quotedOrBlock != 0:
		// HsYAML: a non-plain scalar without a tag has the "!" tag: a string.
		return scalar{kind: jsonString, text: n.Value}, nil
	default:
		// A plain one is the first of coreTags it reads as, else a string.
		for _, tag := range coreTags {
			if s, ok := resolveAs(tag, n.Value); ok {
				return s, nil
			}
		}
		return scalar{kind: jsonString, text: n.Value}, nil
	}
	switch {
	case n.Tag == tagStr:
		return scalar{kind: jsonString, text: n.Value}, nil
	case !slices.Contains(coreTags, n.Tag):
		return scalar{}, fmt.Errorf("a scalar with the tag %s, which Monocle's YAML reader cannot resolve", printable.Escape(shortText(n.Tag)))
	}
	if s, ok := resolveAs(n.Tag, n.Value); ok {
		return s, nil
	}
	return scalar{}, fmt.Errorf("a scalar that is not a valid %s", n.Tag)
}

// resolveAs reads v as one of coreTags.
func resolveAs(tag, v string) (scalar, bool) {
	switch tag {
	case tagNull:
		return scalar{kind: jsonNull}, slices.Contains([]string{"", "null", "Null", "NULL", "~"}, v)
	case tagBool:
		return scalar{kind: jsonBool}, slices.Contains([]string{"true", "True", "TRUE", "false", "False", "FALSE"}, v)
	case tagInt:
		nonNegative, ok := coreInt(v)
		return scalar{kind: jsonNumber, natural: nonNegative}, ok
	}
	// Whether aeson's number made from the Double (realToFrac, that is via
	// toRational) is a non-negative integer. GHC's toRational of +Infinity
	// is 2^1024 and of NaN is -1.5*2^1024, as the comparisons say of them.
	f, ok := coreFloat(v)
	return scalar{kind: jsonNumber, natural: f >= 0 && f == math.Trunc(f)}, ok
}

// coreInt is HsYAML's coreDecodeInt: [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+.
// It reports whether the integer is not negative.
func coreInt(v string) (nonNegative, ok bool) {
	if hex, found := strings.CutPrefix(v, "0x"); found {
		return true, hex != "" && strings.Trim(hex, "0123456789abcdefABCDEF") == ""
	}
	if octal, found := strings.CutPrefix(v, "0o"); found {
		return true, octal != "" && strings.Trim(octal, "01234567") == ""
	}
	digits := v
	if v != "" && (v[0] == '+' || v[0] == '-') {
		digits = v[1:]
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return false, false
	}
	return v[0] != '-' || strings.Trim(digits, "0") == "", true
}

// coreFloat is HsYAML's coreDecodeFloat, with the number it reads. Haskell's
// read and Go's ParseFloat both round correctly, and both give an infinity
// past the range of a Double.
func coreFloat(v string) (float64, bool) {
	switch v {
	case ".nan", ".NaN", ".NAN":
		return math.NaN(), true
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return math.Inf(1), true
	case "-.inf", "-.Inf", "-.INF":
		return math.Inf(-1), true
	}
	// Most scalars have a byte no number has: they are refused without the
	// regular expression, which costs more.
	if strings.Trim(v, "0123456789+-.eE") != "" || !coreFloatForm.MatchString(v) {
		return 0, false
	}
	f, _ := strconv.ParseFloat(v, 64)
	return f, true
}

var coreFloatForm = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// deref follows an alias to the node it names. yaml.v3 registers anchors on
// scalars, sequences and mappings only, so one step is enough.
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

// kindOf is the JSON kind of a node that the measure pass accepted.
func kindOf(n *yaml.Node) jsonKind {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return jsonObject
	case yaml.SequenceNode:
		return jsonArray
	}
	s, _ := resolveScalar(n)
	return s.kind
}

// stringOf is the string of a node, if it decodes to one.
func stringOf(n *yaml.Node) (string, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	s, _ := resolveScalar(n)
	return s.text, s.kind == jsonString
}

// decodeDocument reads the only document of data.
func decodeDocument(data []byte) (*yaml.Node, error) {
	// UTF-16 is left to yaml.v3 as it is (and HsYAML's readings of
	// hsyaml.go are not given back in it).
	utf8Text := !bytes.HasPrefix(data, []byte("\xff\xfe")) && !bytes.HasPrefix(data, []byte("\xfe\xff"))
	text := data
	if utf8Text {
		text = asYAML11(bytes.TrimPrefix(data, bom))
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return nil, errors.New("the YAML holds no document")
	case err != nil:
		return nil, fmt.Errorf("the YAML does not parse: %s", printable.Escape(cutText(strings.TrimPrefix(err.Error(), "yaml: "), 200)))
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, fmt.Errorf("the YAML does not parse: %s", printable.Escape(cutText(strings.TrimPrefix(err.Error(), "yaml: "), 200)))
	default:
		return nil, errors.New("the YAML holds more than one document (a second \"---\"); Monocle reads exactly one")
	}
	if len(doc.Content) != 1 {
		return nil, errors.New("the YAML holds no document")
	}
	if utf8Text {
		markNonSpecific(doc.Content[0], text)
	}
	return doc.Content[0], nil
}

// cost is what a node expands to once every alias is replaced by its target.
type cost struct {
	nodes int64 // nodes, keys included
	bytes int64 // bytes of scalars, keys included
}

// measurer checks the whole node graph once (every node, including those
// under keys Monocle ignores: HsYAML-aeson converts them too) and sums what it
// expands to. An anchored node is measured once and its cost remembered, so
// an alias costs a map lookup however large its target: the measure is
// linear in the parsed nodes, never in the expansion.
type measurer struct {
	limits  Limits
	memo    map[*yaml.Node]cost
	pending map[*yaml.Node]bool // anchored nodes being measured: an alias to one is a cycle
	path    pathStack
}

// add sums a and b, and checks the sum against the limits.
func (m *measurer) add(a, b cost) (cost, error) {
	// Saturate: a few levels of aliases to aliases reach any number.
	c := cost{nodes: min(a.nodes+b.nodes, math.MaxInt64/4), bytes: min(a.bytes+b.bytes, math.MaxInt64/4)}
	if c.nodes > m.limits.MaxNodes {
		return c, single("", fmt.Sprintf("the YAML expands to more than %d nodes (aliases count as what they expand to)", m.limits.MaxNodes))
	}
	if c.bytes > m.limits.MaxExpandedBytes {
		return c, single("", fmt.Sprintf("the YAML expands to more than %d bytes of text (aliases count as what they expand to)", m.limits.MaxExpandedBytes))
	}
	return c, nil
}

func (m *measurer) measure(n *yaml.Node, depth int) (cost, error) {
	if depth > m.limits.MaxDepth {
		return cost{}, single("", fmt.Sprintf("the YAML nests deeper than %d levels", m.limits.MaxDepth))
	}
	if n.Kind == yaml.AliasNode {
		target := n.Alias
		if m.pending[target] {
			return cost{}, m.path.errorf("an alias (*%s) to a node that contains it; Monocle's YAML reader refuses cycles", printable.Escape(shortText(n.Value)))
		}
		c, err := m.measure(target, depth)
		if err != nil {
			return cost{}, err
		}
		return m.add(c, cost{nodes: 1})
	}
	if n.Anchor != "" {
		if c, ok := m.memo[n]; ok {
			return c, nil
		}
		m.pending[n] = true
		defer delete(m.pending, n)
	}
	c := cost{nodes: 1}
	switch n.Kind {
	case yaml.ScalarNode:
		if _, err := resolveScalar(n); err != nil {
			return cost{}, m.path.errorf("%s", err.Error())
		}
		c.bytes = int64(len(n.Value))
	case yaml.SequenceNode:
		for i, child := range n.Content {
			m.path.pushIndex(i)
			cc, err := m.measure(child, depth+1)
			m.path.pop()
			if err != nil {
				return cost{}, err
			}
			if c, err = m.add(c, cc); err != nil {
				return cost{}, err
			}
		}
	case yaml.MappingNode:
		var err error
		if c, err = m.measureMapping(n, c, depth); err != nil {
			return cost{}, err
		}
	default:
		return cost{}, m.path.errorf("a YAML node of an unknown kind")
	}
	if n.Anchor != "" {
		m.memo[n] = c
	}
	return c, nil
}

// measureMapping adds a mapping's keys and values to c, its own cost.
func (m *measurer) measureMapping(n *yaml.Node, c cost, depth int) (cost, error) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		kc, err := m.measure(key, depth+1)
		if err != nil {
			return cost{}, err
		}
		name, isString := stringOf(key)
		if !isString {
			return cost{}, m.path.errorf("a key that is %s, not a string; Monocle's YAML reader accepts only string keys (quote it)", kindOf(key))
		}
		m.path.pushKey(name)
		vc, err := m.measure(value, depth+1)
		m.path.pop()
		if err != nil {
			return cost{}, err
		}
		if c, err = m.add(c, cost{kc.nodes + vc.nodes, kc.bytes + vc.bytes}); err != nil {
			return cost{}, err
		}
	}
	return c, nil
}

// object is a JSON object view of a mapping node, or of a YAML list of
// {key, value} maps: dhall-json reads such a list as a record too
// (JSONToDhall.hs, "key-value list ~> Record", on by default). It is built
// for every map the decode reads, aliases included, so a small one is a
// slice searched in order, without a Go map.
type object struct {
	entries []objectEntry  // each key once, in first-seen order
	index   map[string]int // key to entry, once there are many
}

type objectEntry struct {
	key   string
	value *yaml.Node
}

// indexedObject is the number of keys past which an object gets an index.
const indexedObject = 16

func (o *object) find(key string) (int, bool) {
	if o.index != nil {
		i, ok := o.index[key]
		return i, ok
	}
	for i := range o.entries {
		if o.entries[i].key == key {
			return i, true
		}
	}
	return 0, false
}

func (o *object) set(key string, value *yaml.Node) {
	if i, ok := o.find(key); ok {
		o.entries[i].value = value // aeson's object keeps the last of duplicated keys
		return
	}
	o.entries = append(o.entries, objectEntry{key, value})
	switch {
	case o.index != nil:
		o.index[key] = len(o.entries) - 1
	case len(o.entries) > indexedObject:
		o.index = make(map[string]int, len(o.entries))
		for i, e := range o.entries {
			o.index[e.key] = i
		}
	}
}

// objectOf gives the object view of n, or false when n is neither a map nor
// a key-value list.
func objectOf(n *yaml.Node) (object, bool) {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		o := object{entries: make([]objectEntry, 0, len(n.Content)/2)}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, _ := stringOf(n.Content[i])
			o.set(k, n.Content[i+1])
		}
		return o, true
	case yaml.SequenceNode:
		// dhall-json keyValMay: every element a map with a string "key"
		// and a "value" (any, null included); other keys are ignored.
		o := object{entries: make([]objectEntry, 0, len(n.Content))}
		for _, elem := range n.Content {
			elem = deref(elem)
			if elem.Kind != yaml.MappingNode {
				return object{}, false
			}
			keyNode, valueNode := lastValue(elem, "key"), lastValue(elem, "value")
			if keyNode == nil || valueNode == nil {
				return object{}, false
			}
			k, isString := stringOf(keyNode)
			if !isString {
				return object{}, false
			}
			o.set(k, valueNode)
		}
		return o, true
	}
	return object{}, false
}

// lastValue is the value of the last key of the mapping m that reads as
// the string key, nil when there is none.
func lastValue(m *yaml.Node, key string) *yaml.Node {
	for i := len(m.Content) - 2; i >= 0; i -= 2 {
		if k, _ := stringOf(m.Content[i]); k == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// pathStack is the path of the node being read, rendered only on error.
type pathStack []pathSegment

type pathSegment struct {
	key   string
	index int // -1 for a key
}

func (p *pathStack) pushKey(k string) { *p = append(*p, pathSegment{key: k, index: -1}) }
func (p *pathStack) pushIndex(i int)  { *p = append(*p, pathSegment{index: i}) }
func (p *pathStack) pop()             { *p = (*p)[:len(*p)-1] }

func (p pathStack) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.index >= 0:
			fmt.Fprintf(&b, "[%d]", s.index)
		case plainKey.MatchString(s.key):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			fmt.Fprintf(&b, "[%s]", printable.Quote(shortText(s.key)))
		}
	}
	return b.String()
}

func (p pathStack) errorf(format string, args ...any) error {
	return single(p.String(), fmt.Sprintf(format, args...))
}

// plainKey is a key that a path shows as it is, not quoted.
var plainKey = regexp.MustCompile(`^[A-Za-z_][-\w]{0,63}$`)

// shortText cuts s to a length fit for a message.
func shortText(s string) string { return cutText(s, 64) }

func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
