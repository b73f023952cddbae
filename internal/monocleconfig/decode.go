package monocleconfig

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file is dhall-json's dhallFromJSON (dhall-json
// src/Dhall/JSONToDhall.hs, function loop) with the options dhall-yaml's
// defaultOptions gives it (defaultConversion): loose records (unknown keys
// ignored), key-value lists read as records, first fitting union
// alternative, lists never omissible. Where Dhall stops at the first
// mismatch, this goes on and reports every one.
//
// Decoded values: Text is a string, Natural and Bool are true (their
// values are not used), List is []any, Optional is nil (None) or its value, a record is
// *recordValue, a union is *unionValue.

type recordValue struct {
	typ    *record
	fields []any
}

// get is the value of the field called name: nil for an absent Optional,
// or in a record that did not decode (nil).
func (r *recordValue) get(name string) any {
	if r == nil {
		return nil
	}
	return r.fields[r.typ.index(name)]
}

func (r *recordValue) text(name string) string {
	s, _ := r.get(name).(string)
	return s
}

func (r *recordValue) list(name string) []any {
	l, _ := r.get(name).([]any)
	return l
}

type unionValue struct {
	alt     string
	payload *recordValue // nil for an alternative without payload
}

// sink collects what a decode finds: problems (the config is refused) and
// the keys Monocle ignores.
type sink struct {
	problems     []Problem
	problemCount int
	ignored      []string
	// quiet counts problems without writing them: trying an alternative of
	// a union only needs to know whether it fits.
	quiet bool
}

// full says whether further problems are only counted.
func (s *sink) full() bool { return s.quiet || len(s.problems) >= maxProblems }

type decoder struct {
	path pathStack
	sink *sink
}

// problem records a problem at the path. Only the problems kept are
// formatted: a config may have a problem per node.
func (d *decoder) problem(format string, args ...any) {
	s := d.sink
	s.problemCount++
	if !s.full() {
		s.problems = append(s.problems, Problem{Path: d.path.String(), Message: fmt.Sprintf(format, args...)})
	}
}

// decode reads n as a t; false when it does not fit (a problem is recorded).
func (d *decoder) decode(t dhallType, n *yaml.Node) (any, bool) {
	switch t := t.(type) {
	case optionalType:
		// "null ~> Optional", "value ~> Optional"
		if kindOf(n) == jsonNull {
			return nil, true
		}
		return d.decode(t.elem, n)
	case textType:
		if s, ok := stringOf(n); ok {
			return s, true
		}
		k := kindOf(n)
		hint := ""
		if k == jsonNumber || k == jsonBool {
			hint = " (quote it)"
		}
		d.problem("must be a string, not %s%s", k, hint)
		return nil, false
	case naturalType:
		if k := kindOf(n); k != jsonNumber {
			d.problem("must be a whole number, not %s", k)
			return nil, false
		}
		if s, _ := resolveScalar(deref(n)); !s.natural {
			d.problem("must be a whole number, 0 or more")
			return nil, false
		}
		return true, true // Some; the value itself is not used
	case boolType:
		if k := kindOf(n); k != jsonBool {
			hint := ""
			if s, ok := stringOf(n); ok && slices.Contains([]string{"yes", "no", "on", "off", "y", "n"}, strings.ToLower(s)) {
				hint = " (Monocle reads YAML 1.2, where yes, no, on and off are strings)"
			}
			d.problem("must be true or false, not %s%s", k, hint)
			return nil, false
		}
		return strings.EqualFold(deref(n).Value, "true"), true
	case listType:
		return d.decodeList(t, n)
	case *record:
		o, isObject := objectOf(n)
		if !isObject {
			d.problem("must be a map, not %s", kindOf(n))
			return nil, false
		}
		return d.decodeRecord(t, o)
	case *union:
		return d.decodeUnion(t, n)
	}
	panic(fmt.Sprintf("monocleconfig: unknown type %T", t))
}

func (d *decoder) decodeList(t listType, n *yaml.Node) (any, bool) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.problem("must be a list, not %s", kindOf(n))
		return nil, false
	}
	var out []any
	if !d.sink.quiet { // a trial only needs to know whether it fits
		out = make([]any, len(n.Content))
	}
	ok := true
	for i, elem := range n.Content {
		d.path.pushIndex(i)
		v, elemOK := d.decode(t.elem, elem)
		d.path.pop()
		if out != nil {
			out[i] = v
		}
		ok = ok && elemOK
	}
	return out, ok
}

// decodeRecord is "object ~> Record": each field of the type from its key;
// a missing key is None for an Optional field and an error otherwise.
func (d *decoder) decodeRecord(t *record, o object) (any, bool) {
	var out *recordValue
	if !d.sink.quiet { // a trial only needs to know whether it fits
		out = &recordValue{typ: t, fields: make([]any, len(t.fields))}
	}
	ok := true
	for i, f := range t.fields {
		at, present := o.find(f.name)
		d.path.pushKey(f.name)
		switch {
		case present:
			v, fieldOK := d.decode(f.typ, o.entries[at].value)
			if out != nil {
				out.fields[i] = v
			}
			ok = ok && fieldOK
		case isOptional(f.typ):
		default:
			d.problem("required")
			ok = false
		}
		d.path.pop()
	}
	if out == nil {
		return nil, ok
	}
	for _, e := range o.entries {
		if t.index(e.key) < 0 {
			d.path.pushKey(e.key)
			if len(d.sink.ignored) < maxIgnored {
				d.sink.ignored = append(d.sink.ignored, d.path.String())
			}
			d.path.pop()
		}
	}
	return out, ok
}

func isOptional(t dhallType) bool {
	_, ok := t.(optionalType)
	return ok
}

// decodeUnion is "any ~> Union" with UFirst: every alternative is tried and
// the first (in the sorted order) that reads without error is taken.
func (d *decoder) decodeUnion(t *union, n *yaml.Node) (any, bool) {
	o, isObject := objectOf(n)
	trial := decoder{path: d.path, sink: &sink{quiet: true}}
	// The alternative the map looks most like, to explain a failure: the
	// first with the most keys that are its fields, if any is.
	var best *alternative
	bestShared := 0
	for i, alt := range t.alts {
		if alt.typ == nil {
			// An alternative without payload reads from its name as a string.
			if s, ok := stringOf(n); ok && s == alt.name {
				return &unionValue{alt: alt.name}, true
			}
			continue
		}
		if !isObject {
			continue
		}
		if _, ok := trial.decodeRecord(alt.typ, o); ok {
			// Read it again, to note the keys it ignores.
			v, _ := d.decodeRecord(alt.typ, o)
			return &unionValue{alt: alt.name, payload: v.(*recordValue)}, true
		}
		shared := 0
		for _, e := range o.entries {
			if alt.typ.index(e.key) >= 0 {
				shared++
			}
		}
		if shared > bestShared {
			best, bestShared = &t.alts[i], shared
		}
	}

	if d.sink.full() {
		// The explanation below would not be kept.
		d.sink.problemCount++
		return nil, false
	}
	if !isObject {
		d.problem("must be %s, not %s", describeUnion(t), kindOf(n))
		return nil, false
	}
	if best == nil {
		d.problem("fits none of Monocle's %ss: it must be %s", t.name, describeUnion(t))
		return nil, false
	}
	d.problem("fits none of Monocle's %ss; read as a %s: %s", t.name, best.label, d.explain(best, o))
	return nil, false
}

// explain is the first problems of reading o as alt.
func (d *decoder) explain(alt *alternative, o object) string {
	explain := &decoder{path: d.path, sink: &sink{}}
	explain.decodeRecord(alt.typ, o)
	prefix := d.path.String()
	var details []string
	for i, p := range explain.sink.problems {
		if i == 3 {
			details = append(details, "...")
			break
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.Path, prefix), ".")
		details = append(details, rel+": "+p.Message)
	}
	return strings.Join(details, "; ")
}

// describeUnion says what a value of t may be, from its required fields.
func describeUnion(t *union) string {
	var maps, names []string
	for _, alt := range t.alts {
		if alt.typ == nil {
			names = append(names, "the string "+alt.name)
			continue
		}
		var required []string
		for _, f := range alt.typ.fields {
			if !isOptional(f.typ) {
				required = append(required, f.name)
			}
		}
		maps = append(maps, strings.Join(required, "+"))
	}
	s := "a map with " + strings.Join(maps, ", or ")
	if len(names) > 0 {
		s += ", or " + strings.Join(names, ", or ")
	}
	return s
}
