package monoclesearch

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParse covers the lexer and the parser alone: which queries are
// well-formed, their terms, and where and why the others fail (Monocle's
// messages and character offsets, as in its own tests in src/Tests.hs).
func TestParse(t *testing.T) {
	tests := map[string]struct {
		query string
		terms string // the terms, space-separated, quoted
		err   string // or the error, "message @offset"
	}{
		// Monocle's own lexer and parser tests (src/Tests.hs), in other words.
		"one term":                     {query: "state:open", terms: `"state" : "open"`},
		"parens, or, and":              {query: "(a>42 or a:0 ) and b:d", terms: `"a" > "42" "a" : "0" "b" : "d"`},
		"quoted value":                 {query: `field:"A value"`, terms: `"field" : "A value"`},
		"unicode value":                {query: "not field:λr🌈bow", terms: `"field" : "λr🌈bow"`},
		"quoted unicode":               {query: `f:"Zuul ▲ user"`, terms: `"f" : "Zuul ▲ user"`},
		"no escape in quotes":          {query: `f:"test\"`, terms: `"f" : "test\\"`},
		"implicit and":                 {query: "state:open author:foo", terms: `"state" : "open" "author" : "foo"`},
		"field alone":                  {query: "a", err: "Expected operator (`:`, `>`, ...) @1"},
		"no value":                     {query: "a:", err: "Expected value @2"},
		"unknown operator word":        {query: "a:42 nor b:23", err: "Unexpected token @5"},
		"or at the end":                {query: "a:41 or", err: "Expected expression @7"},
		"not at the end":               {query: "a:41 not", err: "Expected expression @8"},
		"space after the operator":     {query: "a: b", err: "Expected field value (spaces are not allowed after operator) @2"},
		"paren not closed":             {query: "(a:42", err: "Expected closing paren `)` @5"},
		"paren not opened":             {query: "a:42)", err: "Missing opening paren `(` @5"},
		"alias name is not a term":     {query: "status:open sprint42", err: "Unexpected token @12"},
		"README alias":                 {query: `(author:"github-actions" or author:"bedevere-bot")`, terms: `"author" : "github-actions" "author" : "bedevere-bot"`},
		"help example":                 {query: `author:"Foo B.*" and not state:open`, terms: `"author" : "Foo B.*" "state" : "open"`},
		"help example with unknown":    {query: "state:open approved task.score>42", err: "Unexpected token @11"},
		"space before the operator":    {query: "ttm >5", terms: `"ttm" > "5"`},
		"space around the operator":    {query: "ttm > 5", err: "Expected field value (spaces are not allowed after operator) @5"},
		"lower":                        {query: "ttm<5", terms: `"ttm" < "5"`},
		"greater or equal never lexes": {query: "ttm>=5", err: "Expected field value (spaces are not allowed after operator) @4"},
		"lower or equal never lexes":   {query: "ttm<=5", err: "Expected field value (spaces are not allowed after operator) @4"},
		"equal sign in a quoted value": {query: `ttm>"=5"`, terms: `"ttm" > "=5"`},
		"quoted field":                 {query: `"state":open`, terms: `"state" : "open"`},
		"empty":                        {query: ""},
		"only spaces":                  {query: " \t\n\u00a0\u3000"},
		"leading and trailing spaces":  {query: "  state:open\t", terms: `"state" : "open"`},
		"spaces inside parens":         {query: "( state:open )", terms: `"state" : "open"`},
		"newline separates":            {query: "state:open\ntag:x", terms: `"state" : "open" "tag" : "x"`},

		// Keywords are matched as prefixes of any word, in either case but not mixed.
		"and starts a value":      {query: "author:andrew", err: "Expected expression @10"},
		"or starts a value":       {query: "repo:organization/x", err: "Expected expression @7"},
		"not starts a value":      {query: "tag:notable", err: "Expected expression @7"},
		"AND starts a value":      {query: "tag:ANDROID", err: "Expected expression @7"},
		"OR starts a field":       {query: "ORg:x", err: "Expected expression @2"},
		"keyword glued to a term": {query: "state:open andstate:merged", terms: `"state" : "open" "state" : "merged"`},
		"mixed case is a word":    {query: "tag:And tag:Or tag:Not", terms: `"tag" : "And" "tag" : "Or" "tag" : "Not"`},
		"quoted keyword":          {query: `author:"andrew"`, terms: `"author" : "andrew"`},
		"upper keywords":          {query: "NOT a:1 AND b:2 OR c:3", terms: `"a" : "1" "b" : "2" "c" : "3"`},

		// Operators: and, or, not, parentheses; one precedence, so any mix parses.
		"and":               {query: "a:1 and b:2", terms: `"a" : "1" "b" : "2"`},
		"or":                {query: "a:1 or b:2", terms: `"a" : "1" "b" : "2"`},
		"or then and":       {query: "a:1 or b:2 and c:3", terms: `"a" : "1" "b" : "2" "c" : "3"`},
		"and then or":       {query: "a:1 and b:2 or c:3", terms: `"a" : "1" "b" : "2" "c" : "3"`},
		"not":               {query: "not a:1", terms: `"a" : "1"`},
		"not not":           {query: "not not a:1", terms: `"a" : "1"`},
		"not a group":       {query: "not (a:1 or b:2) c:3", terms: `"a" : "1" "b" : "2" "c" : "3"`},
		"and not":           {query: "a:1 and not b:2", terms: `"a" : "1" "b" : "2"`},
		"nested groups":     {query: "((a:1) or (b:2 (c:3)))", terms: `"a" : "1" "b" : "2" "c" : "3"`},
		"not alone":         {query: "not", err: "Expected value @3"},
		"and first":         {query: "and a:1", err: "Expected expression @4"},
		"and and":           {query: "a:1 and and b:2", err: "Expected expression @8"},
		"or or":             {query: "a:1 or or b:2", err: "Expected expression @7"},
		"empty parens":      {query: "()", err: "Missing opening paren `(` @2"},
		"dangling and":      {query: "(a:1 and)", err: "Expected expression @8"},
		"unclosed late":     {query: "a:1 (b:2", err: "Unexpected token @4"},
		"two values":        {query: "a:1:2", err: "Unexpected token @3"},
		"operator first":    {query: ":a", err: "Expected value @0"},
		"operator as value": {query: "a::", err: "Expected value @2"},
		"paren as field":    {query: "(a:1):x", err: "Unexpected token @5"},
		"paren too deep":    {query: strings.Repeat("(", MaxNesting+1) + "a:1" + strings.Repeat(")", MaxNesting+1), err: fmt.Sprintf("Parentheses nested too deeply @%d", MaxNesting)},
		"paren as deep as allowed": {
			query: strings.Repeat("(", MaxNesting) + "a:1" + strings.Repeat(")", MaxNesting), terms: `"a" : "1"`},
		"too deep after a term": {
			query: "a:1 " + strings.Repeat("(", MaxNesting+1) + "b:1" + strings.Repeat(")", MaxNesting+1), err: fmt.Sprintf("Parentheses nested too deeply @%d", 4+MaxNesting)},

		// Literals: which characters, and quotes.
		"value characters":      {query: "repo:#$%&'*+,-./09;?@[]\\^_`{|}~x", terms: `"repo" : "#$%&'*+,-./09;?@[]\\^_` + "`" + `{|}~x"`},
		"bang is not a value":   {query: "tag:a!b", err: "Expected field value (spaces are not allowed after operator) @5"},
		"quote ends a literal":  {query: `tag:a"b"`, err: "Unexpected token @5"},
		"empty quotes":          {query: `tag:""`, err: "Invalid token @5"},
		"unterminated quotes":   {query: `tag:"abc`, err: "Expected closing double quote @8"},
		"tab in quotes":         {query: "tag:\"a\tb\"", err: "Expected closing double quote @6"},
		"control character":     {query: "tag:a\x01", err: "Expected field value (spaces are not allowed after operator) @5"},
		"nbsp ends in a value":  {query: "state:open\u00a0", terms: `"state" : "open\u00a0"`},
		"nbsp before the query": {query: "\u00a0state:open", terms: `"state" : "open"`},
		"ideographic space":     {query: "tag:a\u3000b", terms: `"tag" : "a\u3000b"`},
		"next line is a value":  {query: "\u0085tag:a", terms: `"\u0085tag" : "a"`},
		"line separator":        {query: "tag:a\u2028", terms: `"tag" : "a\u2028"`},
		"offsets in characters": {query: "é é:x", err: "Expected operator (`:`, `>`, ...) @2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			terms, err := parse([]rune(tc.query))
			var got []string
			for _, term := range terms {
				op := map[tokenKind]string{tokEqual: ":", tokGreater: ">", tokLower: "<"}[term.op]
				got = append(got, fmt.Sprintf("%q %s %q", term.field, op, term.value))
			}
			gotErr := ""
			if e := (*Error)(nil); errors.As(err, &e) {
				gotErr = fmt.Sprintf("%s @%d", e.Message, e.Offset)
			}
			if gotErr != tc.err || strings.Join(got, " ") != tc.terms {
				t.Errorf("parse(%q) = %q, %q; want %q, %q", tc.query, got, gotErr, tc.terms, tc.err)
			}
		})
	}
}

// TestValidateAlias covers each field and its values, as Query.hs compiles
// them at start; "" is an alias Monocle loads.
func TestValidateAlias(t *testing.T) {
	zuul := Workspace{Projects: []string{"zuul", "nova"}, Groups: []string{"core", "ptl"}}
	tests := map[string]struct {
		ws    Workspace
		alias string
		err   string
	}{
		"README example":             {alias: `(author:"github-actions" or author:"bedevere-bot")`},
		"help example":               {alias: `author:"Foo B.*" and not state:open`},
		"help example, self":         {alias: "author:self and not state:open"},
		"help example, group":        {ws: zuul, alias: "(repo:openstack/nova or repo:openstack/neutron) and group:qa and updated_at>2020", err: "Unknown group: qa"},
		"help example, known group":  {ws: zuul, alias: "(repo:openstack/nova or repo:openstack/neutron) and group:core and updated_at>2020"},
		"docs example, unknown":      {alias: "state:open and review_count:0", err: "Unknown field: review_count"},
		"tests' sprint alias":        {alias: "from:2021-01-01 to:2021-01-21"},
		"empty":                      {alias: "", err: "Empty alias"},
		"blank":                      {alias: " \n ", err: "Empty alias"},
		"syntax error":               {alias: "state:", err: "Expected value"},
		"first bad term wins":        {alias: "state:open bad:x state:closed", err: "Unknown field: bad"},
		"a bad term in an or":        {alias: "state:open or state:closed", err: "Invalid value for state: closed"},
		"a bad term under not":       {alias: "not (tag:x or ttm>x)", err: "Invalid number: x"},
		"field names are exact":      {alias: "Repo:x", err: "Unknown field: Repo"},
		"another alias is not known": {alias: "bots", err: "Expected operator (`:`, `>`, ...)"},

		// Dates: updated_at, created_at, from, to.
		"date year":              {alias: "updated_at>2021"},
		"date month":             {alias: "updated_at<2021-05"},
		"date day":               {alias: "created_at>2021-05-27"},
		"from":                   {alias: "from:2020"},
		"to":                     {alias: "to:2021-01-21"},
		"from greater":           {alias: "from>2020"},
		"to lower":               {alias: "to<2020"},
		"date with equal":        {alias: "created_at:2021", err: "Invalid date operator for: created_at, ':' is not allowed"},
		"now":                    {alias: "to:now"},
		"now minus hour":         {alias: "updated_at>now-1hour"},
		"now minus hours":        {alias: "updated_at>now-12hours"},
		"now minus days":         {alias: "created_at>now-2days"},
		"now minus weeks":        {alias: "from:now-3weeks"},
		"now minus week":         {alias: "from:now-1week"},
		"now minus months":       {alias: "from:now-6months"},
		"now minus year":         {alias: "from:now-1year"},
		"now minus zero":         {alias: "from:now-0days"},
		"now, leading zeros":     {alias: "from:now-003days"},
		"now, trailing space":    {alias: `from:"now-3weeks  "`},
		"now, leading space":     {alias: `from:" now-3weeks"`, err: "Invalid date:  now-3weeks"},
		"now, inner space":       {alias: `from:"now -3weeks"`, err: "Invalid date: now -3weeks"},
		"now, capital unit":      {alias: "from:now-3Weeks", err: "Invalid date: now-3Weeks"},
		"now, short unit":        {alias: "from:now-3w", err: "Invalid date: now-3w"},
		"now, no minus":          {alias: "from:now3weeks", err: "Invalid date: now3weeks"},
		"now, no count":          {alias: "from:now-weeks", err: "Invalid date: now-weeks"},
		"now, two s":             {alias: "from:now-3weekss", err: "Invalid date: now-3weekss"},
		"now, plus":              {alias: "from:now+3weeks", err: "Invalid date: now+3weeks"},
		"NOW":                    {alias: "from:NOW", err: "Invalid date: NOW"},
		"51 years ago":           {alias: "from:now-51years"},
		"52 years ago":           {alias: "from:now-52years", err: "Date is too old: now-52years"},
		"617 months ago":         {alias: "from:now-617months"},
		"618 months ago":         {alias: "from:now-618months", err: "Date is too old: now-618months"},
		"2682 weeks ago":         {alias: "from:now-2682weeks"},
		"2683 weeks ago":         {alias: "from:now-2683weeks", err: "Date is too old: now-2683weeks"},
		"18780 days ago":         {alias: "from:now-18780days"},
		"18781 days ago":         {alias: "from:now-18781days", err: "Date is too old: now-18781days"},
		"450743 hours ago":       {alias: "from:now-450743hours"},
		"450744 hours ago":       {alias: "from:now-450744hours", err: "Date is too old: now-450744hours"},
		"count wraps at 2^64":    {alias: "from:now-18446744073709551616hours"},
		"count 2^64-1":           {alias: "from:now-18446744073709551615hours", err: "Date is too old: now-18446744073709551615hours"},
		"1970":                   {alias: "created_at>1970"},
		"1969-12-31":             {alias: "created_at>1969-12-31", err: "Date is too old: 1969-12-31"},
		"year 1":                 {alias: "created_at>0001-01-01", err: "Date is too old: 0001-01-01"},
		"negative year":          {alias: "created_at>-2021", err: "Date is too old: -2021"},
		"short year":             {alias: "created_at>999", err: "Date is too old: 999"},
		"long year":              {alias: "created_at>99999-12-31"},
		"year with zeros":        {alias: "created_at>002021-05"},
		"year after spaces":      {alias: `created_at>"  2021-05-01"`},
		"date, trailing space":   {alias: `created_at>"2021 "`, err: "Invalid date: 2021 "},
		"month 13":               {alias: "created_at>2021-13", err: "Invalid date: 2021-13"},
		"month 00":               {alias: "created_at>2021-00", err: "Invalid date: 2021-00"},
		"one-digit month":        {alias: "created_at>2021-5", err: "Invalid date: 2021-5"},
		"one-digit day":          {alias: "created_at>2021-05-1", err: "Invalid date: 2021-05-1"},
		"day 31 of a short":      {alias: "created_at>2021-04-31", err: "Invalid date: 2021-04-31"},
		"day 31":                 {alias: "created_at>2021-05-31"},
		"February 29, leap":      {alias: "created_at>2020-02-29"},
		"February 29, 2000":      {alias: "created_at>2000-02-29"},
		"February 29, 2400":      {alias: "created_at>2400-02-29"},
		"February 29, 2100":      {alias: "created_at>2100-02-29", err: "Invalid date: 2100-02-29"},
		"February 29, 2021":      {alias: "created_at>2021-02-29", err: "Invalid date: 2021-02-29"},
		"February 29, long year": {alias: "created_at>99999-02-29", err: "Invalid date: 99999-02-29"},
		"time of day":            {alias: "created_at>2021-05-01T10:00", err: "Unexpected token"},
		"word":                   {alias: "from:hier", err: "Invalid date: hier"},

		// Numbers: ttm, task.score, read as a Haskell Double.
		"ttm":                   {alias: "ttm>3600"},
		"task.score":            {alias: "task.score>200"},
		"number lower":          {alias: "ttm<1.5"},
		"number exponent":       {alias: "ttm>1e3"},
		"number signed exp":     {alias: "ttm>1E+3 ttm<2e-3"},
		"number negative":       {alias: "ttm>-5"},
		"number hex":            {alias: "ttm>0x1F"},
		"number octal":          {alias: "ttm>0O17"},
		"number NaN":            {alias: "ttm>NaN"},
		"number Infinity":       {alias: "ttm>-Infinity"},
		"number huge exponent":  {alias: "ttm>1e999999999999"},
		"number in parens":      {alias: `ttm>"( (-5) )"`},
		"number, minus, space":  {alias: `ttm>" -  5 "`},
		"number with equal":     {alias: "ttm:abc"}, // a term query: any value
		"number, word":          {alias: "ttm>abc", err: "Invalid number: abc"},
		"number, trailing dot":  {alias: "ttm>1.", err: "Invalid number: 1."},
		"number, leading dot":   {alias: "ttm>.5", err: "Invalid number: .5"},
		"number, plus":          {alias: "ttm>+5", err: "Invalid number: +5"},
		"number, bare exponent": {alias: "ttm>1e", err: "Invalid number: 1e"},
		"number, 0x":            {alias: "ttm>0x", err: "Invalid number: 0x"},
		"number, binary":        {alias: "ttm>0b1", err: "Invalid number: 0b1"},
		"number, octal 8":       {alias: "ttm>0o8", err: "Invalid number: 0o8"},
		"number, underscore":    {alias: "ttm>1_000", err: "Invalid number: 1_000"},
		"number, suffix":        {alias: "ttm>5s", err: "Invalid number: 5s"},
		"number, comma":         {alias: "ttm>1,5", err: "Invalid number: 1,5"},
		"number, lower nan":     {alias: "ttm>nan", err: "Invalid number: nan"},
		"number, NaNs":          {alias: "ttm>NaNs", err: "Invalid number: NaNs"},
		"number, open paren":    {alias: `ttm>"(5"`, err: "Invalid number: (5"},
		"number, minus paren":   {alias: `ttm>"-(5)"`, err: "Invalid number: -(5)"},
		"number, two minus":     {alias: "ttm>--5", err: "Invalid number: --5"},
		"number, arabic digits": {alias: "ttm>٥", err: "Invalid number: ٥"},

		// state, project, group.
		"state open":        {alias: "state:open"},
		"state merged":      {alias: "state:merged"},
		"state self_merged": {alias: "not state:self_merged"},
		"state abandoned":   {alias: "state:abandoned"},
		"state draft":       {alias: "state:draft"},
		"state closed":      {alias: "state:closed", err: "Invalid value for state: closed"},
		"state OPEN":        {alias: "state:OPEN", err: "Invalid value for state: OPEN"},
		"state nbsp":        {alias: "state:open\u00a0", err: "Invalid value for state: open\u00a0"},
		"state range":       {alias: "state>open", err: "Field state does not support range operator"},
		"project":           {ws: zuul, alias: "project:zuul"},
		"unknown project":   {ws: zuul, alias: "project:swift", err: "Unknown project: swift"},
		"no projects":       {alias: "project:zuul", err: "Unknown project: zuul"},
		"project range":     {ws: zuul, alias: "project>zuul", err: "Field project does not support range operator"},
		"group":             {ws: zuul, alias: "group:ptl"},
		"unknown group":     {ws: zuul, alias: "group:qa", err: "Unknown group: qa"},
		"no groups":         {alias: "group:core", err: "Unknown group: core"},

		// Regex fields: any value compiles, even no regex at all.
		"repo":            {alias: "repo:openstack/.*nova.*"},
		"author":          {alias: "author:alice"},
		"branch":          {alias: "branch:master"},
		"file":            {alias: "file:tests/*"},
		"task.tag":        {alias: "task.tag:bug"},
		"broken regex":    {alias: `repo:"["`},
		"regex range":     {alias: "author<x", err: "Field author does not support range operator"},
		"file range":      {alias: "file>x", err: "Field file does not support range operator"},
		"task.tag range":  {alias: "task.tag>x", err: "Field task.tag does not support range operator"},
		"branch range":    {alias: "branch<x", err: "Field branch does not support range operator"},
		"repo range":      {alias: "repo>x", err: "Field repo does not support range operator"},
		"group range":     {ws: zuul, alias: "group>core", err: "Field group does not support range operator"},
		"tag":             {alias: "tag:bug"},
		"approval":        {alias: "approval:Code-Review+2"},
		"task.priority":   {alias: "task.priority:high"},
		"task.severity":   {alias: "task.severity:urgent"},
		"text range":      {alias: "tag>bug", err: "Field tag does not support range operator"},
		"approval range":  {alias: "approval<x", err: "Field approval does not support range operator"},
		"priority range":  {alias: "task.priority>x", err: "Field task.priority does not support range operator"},
		"severity range":  {alias: "task.severity>x", err: "Field task.severity does not support range operator"},
		"too long":        {alias: strings.Repeat("tag:x ", MaxLength/6+1), err: fmt.Sprintf("Alias longer than %d bytes", MaxLength)},
		"not UTF-8":       {alias: "tag:\xff", err: "Alias is not valid UTF-8"},
		"long but within": {alias: strings.Repeat("tag:x ", MaxLength/6)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.ws.ValidateAlias(tc.alias)
			got := ""
			if e := (*Error)(nil); errors.As(err, &e) {
				got = e.Message
			} else if err != nil {
				t.Fatalf("error %v is not an *Error", err)
			}
			if got != tc.err {
				t.Errorf("ValidateAlias(%.80q) = %q, want %q", tc.alias, got, tc.err)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	err := Workspace{}.ValidateAlias("tag:x state:closed")
	if got, want := err.Error(), "Invalid value for state: closed (at character 6)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// FuzzValidateAlias checks that no alias panics, every refusal is an
// *Error pointing inside the alias, and that wrapping an accepted alias in
// parentheses, "not" or "and" keeps it accepted.
func FuzzValidateAlias(f *testing.F) {
	for _, seed := range []string{
		"state:open", "(a>42 or a:0 ) and b:d", `author:"Foo B.*" and not state:open`,
		"from:now-3weeks to:now", "created_at>2020-02-29", `ttm>"( -1e3 )"`, "task.score>0x1F",
		"tag:\u00a0x\u3000", `"`, "((", "not", "author:andrew", "project:zuul group:core",
	} {
		f.Add(seed)
	}
	ws := Workspace{Projects: []string{"zuul"}, Groups: []string{"core"}}
	f.Fuzz(func(t *testing.T, alias string) {
		err := ws.ValidateAlias(alias)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: error %v is not an *Error", alias, err)
			}
			if e.Offset < 0 || e.Offset > utf8.RuneCountInString(alias) {
				t.Fatalf("%q: offset %d outside the alias", alias, e.Offset)
			}
			return
		}
		for _, wrapped := range []string{"(" + alias + ")", "not " + alias, alias + " and " + alias} {
			err := ws.ValidateAlias(wrapped)
			if e := (*Error)(nil); errors.As(err, &e) && (strings.HasPrefix(e.Message, "Parentheses nested") || strings.HasPrefix(e.Message, "Alias longer")) {
				continue
			}
			if err != nil {
				t.Fatalf("%q is accepted but %q is not: %v", alias, wrapped, err)
			}
		}
	})
}

// BenchmarkValidateAlias measures the largest aliases accepted: a flat one of
// MaxLength bytes, and one nested MaxNesting deep.
func BenchmarkValidateAlias(b *testing.B) {
	for name, alias := range map[string]string{
		"flat":   strings.Repeat("created_at>now-3weeks ", MaxLength/22),
		"nested": strings.Repeat("(", MaxNesting) + "ttm>1e3" + strings.Repeat(")", MaxNesting),
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := (Workspace{}).ValidateAlias(alias); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
