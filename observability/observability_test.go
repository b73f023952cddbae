// Package observability_test checks what promtool does not: every alert of
// rules.yaml has a runbook section, and fires in rules_test.yaml. (`make
// rules` runs promtool on the expressions and the unit tests themselves.)
package observability_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook/condition"
)

const runbooks = "https://github.com/change-metrics/monocle-hook/blob/main/observability/runbooks.md"

type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func alerts(t *testing.T) []rule {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []rule `json:"rules"`
		} `json:"groups"`
	}
	b, err := os.ReadFile("rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	var out []rule
	for _, g := range file.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) < 10 {
		t.Fatalf("rules.yaml holds %d alerts", len(out))
	}
	return out
}

// Each alert links to its own section of runbooks.md, and each section is
// an alert's.
func TestEveryAlertHasARunbook(t *testing.T) {
	b, err := os.ReadFile("runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := regexp.MustCompile(`(?m)^## (\S+)$`).FindAllStringSubmatch(string(b), -1)
	var headings []string
	for _, s := range sections {
		headings = append(headings, s[1])
	}
	var names []string
	for _, a := range alerts(t) {
		names = append(names, a.Alert)
		// GitHub's anchor for "## MonocleHookDown" is #monoclehookdown.
		if want := runbooks + "#" + strings.ToLower(a.Alert); a.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", a.Alert, a.Annotations["runbook_url"], want)
		}
		if !slices.Contains(headings, a.Alert) {
			t.Errorf("%s: runbooks.md has no section ## %s", a.Alert, a.Alert)
		}
		if a.Labels["severity"] == "" || a.Annotations["summary"] == "" || a.Annotations["description"] == "" {
			t.Errorf("%s: severity %q, summary %q, description %q: want all three", a.Alert, a.Labels["severity"], a.Annotations["summary"], a.Annotations["description"])
		}
	}
	for _, h := range headings {
		if !slices.Contains(names, h) {
			t.Errorf("runbooks.md's section %s is no alert's", h)
		}
	}
}

// An alert that fires on a condition whatever its reason has, in its
// runbook, one item per reason the hook gives that condition with that
// status (condition.Reasons), and no item for another.
func TestRunbooksNameEveryReason(t *testing.T) {
	b, err := os.ReadFile("runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string]string{}
	for _, a := range alerts(t) {
		exprs[a.Alert] = a.Expr
	}
	item := regexp.MustCompile("^- ((?:`[A-Za-z]+`(?:, )?)+):")
	for alert, given := range map[string][2]string{
		"MonocleSpecNotApplied":     {condition.ConditionSpecApplied, "False"},
		"MonocleIdentsUpdateFailed": {condition.ConditionIdentsUpdated, "False"},
	} {
		selector := fmt.Sprintf(`kube_customresource_monocle_status_condition{type=%q, status=%q}`, given[0], given[1])
		if !strings.Contains(exprs[alert], selector) {
			t.Errorf("%s does not fire on %s (any reason): %s", alert, selector, exprs[alert])
		}
		_, section, _ := strings.Cut(string(b), "\n## "+alert+"\n")
		section, _, _ = strings.Cut(section, "\n## ")
		var named []string
		for _, line := range strings.Split(section, "\n") {
			if m := item.FindStringSubmatch(line); m != nil {
				for _, r := range strings.Split(m[1], ", ") {
					named = append(named, strings.Trim(r, "`"))
				}
			}
		}
		var want []string
		for _, r := range condition.Reasons {
			if condition.Given(r.Name, given[0], given[1]) {
				want = append(want, r.Name)
			}
		}
		for _, r := range want {
			if !slices.Contains(named, r) {
				t.Errorf("runbooks.md's %s has no item for %s=%s's reason %s (- `%s`: what to do)", alert, given[0], given[1], r, r)
			}
		}
		for _, r := range named {
			if !slices.Contains(want, r) {
				t.Errorf("runbooks.md's %s has an item for %s, which is no reason of %s=%s", alert, r, given[0], given[1])
			}
		}
	}
}

// Each alert fires in at least one case of rules_test.yaml (and so its
// expression, labels and annotations are tested by promtool).
func TestEveryAlertIsTested(t *testing.T) {
	var tests struct {
		RuleFiles []string `json:"rule_files"`
		Tests     []struct {
			AlertRuleTest []struct {
				Alertname string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	b, err := os.ReadFile("rules_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &tests); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tests.RuleFiles, []string{"rules.yaml"}) {
		t.Errorf("rules_test.yaml tests %v, want rules.yaml", tests.RuleFiles)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	for _, a := range alerts(t) {
		if !fires[a.Alert] || !quiet[a.Alert] {
			t.Errorf("%s: rules_test.yaml has a case where it fires: %v, where it does not: %v; want both", a.Alert, fires[a.Alert], quiet[a.Alert])
		}
	}
}

// Every query of the dashboard parses as PromQL, checked by promtool as a
// recording rule (Grafana's variables replaced by values of their kind),
// and carries cluster=~"$cluster" on every selector, checked with
// Prometheus' own parser: promtool's label-matchers set leaves a query that
// already has the matcher everywhere as its formatted self. (That keeps
// TestDashboardFiltersByCluster's scanner honest.) `make rules` runs it
// with PROMTOOL set.
func TestDashboardQueriesParse(t *testing.T) {
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		t.Skip("PROMTOOL is not set: make rules runs this test with it")
	}
	d := readDashboard(t)
	vars := strings.NewReplacer("$__rate_interval", "5m", "$monocle", "m", "$namespace", "team-a")
	type record struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []record
	for _, q := range d.queries(t) {
		rules = append(rules, record{fmt.Sprintf("dashboard:query_%d", len(rules)), vars.Replace(q.expr)})
	}
	if len(rules) < 20 {
		t.Fatalf("%d queries in the dashboard", len(rules))
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, msg)
	}
	for i, q := range d.queries(t) {
		if q.where == clusterVariable {
			continue
		}
		expr := rules[i].Expr
		formatted, err := exec.Command(promtool, "--experimental", "promql", "format", expr).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool promql format %s: %v\n%s", expr, err, formatted)
		}
		set, err := exec.Command(promtool, "--experimental", "promql", "label-matchers", "set", "--type", "=~", expr, "cluster", "$cluster").CombinedOutput()
		if err != nil {
			t.Fatalf("promtool promql label-matchers set %s: %v\n%s", expr, err, set)
		}
		if string(set) != string(formatted) {
			t.Errorf("%s: a selector lacks cluster=~\"$cluster\":\n%s\nwith it everywhere:\n%s", q.where, formatted, set)
		}
	}
}

// The variable that picks a cluster: every other query filters by it.
const clusterVariable = "variable cluster"

type variable struct {
	Name       string
	Type       string
	IncludeAll bool
	AllValue   string
	Query      json.RawMessage
	Definition string
}

type dashboard struct {
	Templating struct{ List []variable }
	Panels     []struct {
		Title   string
		Targets []struct {
			RefID string
			Expr  string
		}
	}
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

type query struct {
	where string // "variable job", "panel Syncs per second, A"
	expr  string // PromQL; a variable's label_values(selector, label) gives its selector
	label string // the label a variable lists
}

// labelValues is Grafana's label_values(selector, label) query of a
// Prometheus data source.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// Every PromQL query of the dashboard: each query variable's selector, then
// each panel's targets.
func (d dashboard) queries(t *testing.T) []query {
	t.Helper()
	var out []query
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: query %s: %v", v.Name, v.Query, err)
		}
		if v.Definition != q.Query { // what Grafana's editor shows
			t.Errorf("variable %s: definition %q, query %q", v.Name, v.Definition, q.Query)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Fatalf("variable %s: query %q is not label_values(selector, label)", v.Name, q.Query)
		}
		out = append(out, query{"variable " + v.Name, m[1], m[2]})
	}
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			out = append(out, query{fmt.Sprintf("panel %s, %s", p.Title, target.RefID), target.Expr, ""})
		}
	}
	return out
}

// The dashboard shows one cluster's series, or several's, in a Prometheus
// (Thanos, Mimir) that holds many, each labelled cluster; and still works
// with the common single-cluster Prometheus, whose series have no cluster
// label. So: a cluster variable with All as .* (a regex matching "" matches
// a series without the label, and All is the only choice there), every
// selector of every other query with cluster=~"$cluster", and every join's
// on (...) with cluster, lest two clusters' namespace and name meet (Grafana
// would show a many-to-many matching error).
func TestDashboardFiltersByCluster(t *testing.T) {
	d := readDashboard(t)
	vars := d.Templating.List
	i := slices.IndexFunc(vars, func(v variable) bool { return v.Name == "cluster" })
	if i < 0 {
		t.Fatal("the dashboard has no cluster variable")
	}
	if v := vars[i]; v.Type != "query" || !v.IncludeAll || v.AllValue != ".*" {
		t.Errorf("variable cluster: type %q, includeAll %v, allValue %q; want a query with All as .*", v.Type, v.IncludeAll, v.AllValue)
	}
	for _, v := range vars[:i] {
		if v.Type == "query" {
			t.Errorf("variable %s comes before cluster, which its query uses", v.Name)
		}
	}
	matcher := regexp.MustCompile(`[{,]\s*cluster\s*=~\s*"\$cluster"\s*[,}]`)
	n := 0
	for _, q := range d.queries(t) {
		selectors, joins, err := scanPromQL(q.expr)
		if err != nil {
			t.Errorf("%s: %v: %s", q.where, err, q.expr)
			continue
		}
		if len(selectors) == 0 {
			t.Errorf("%s: no selector found in %s", q.where, q.expr)
		}
		if q.where == clusterVariable {
			if q.label != "cluster" || strings.Contains(q.expr, "$cluster") {
				t.Errorf("%s: lists %s of %s; want the cluster label, without $cluster", q.where, q.label, q.expr)
			}
			continue
		}
		n++
		for _, s := range selectors {
			if !matcher.MatchString(s) {
				t.Errorf("%s: selector %s lacks cluster=~\"$cluster\": %s", q.where, s, q.expr)
			}
		}
		for _, on := range joins {
			if !slices.Contains(on, "cluster") {
				t.Errorf("%s: on (%s) lacks cluster: %s", q.where, strings.Join(on, ", "), q.expr)
			}
		}
	}
	if n < 20 {
		t.Fatalf("%d queries filtered by cluster", n)
	}
}

// scanPromQL returns each vector selector of expr (its metric name and
// matchers as written, e.g. `up{job="x"}`, or `{__name__=~"a|b"}`) and the
// label list of each on (...). A scanner, not a parser: enough for the
// dashboard's queries, whose parse promtool checks (make rules).
func scanPromQL(expr string) (selectors []string, joins [][]string, err error) {
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
	}
	skipSpace := func(i int) int {
		for i < len(expr) && strings.IndexByte(" \t\n", expr[i]) >= 0 {
			i++
		}
		return i
	}
	// The index after the string literal starting at i.
	skipString := func(i int) (int, error) {
		quote := expr[i]
		for i++; i < len(expr); i++ {
			switch {
			case expr[i] == '\\' && quote != '`':
				i++
			case expr[i] == quote:
				return i + 1, nil
			}
		}
		return 0, fmt.Errorf("unterminated string at %d", i)
	}
	// The index after the bracket that closes the one at i, skipping strings.
	closing := func(i int, closer byte) (int, error) {
		for j := i + 1; j < len(expr); {
			switch expr[j] {
			case '"', '\'', '`':
				var err error
				if j, err = skipString(j); err != nil {
					return 0, err
				}
			case closer:
				return j + 1, nil
			default:
				j++
			}
		}
		return 0, fmt.Errorf("unclosed %c at %d", expr[i], i)
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if i, err = skipString(i); err != nil {
				return nil, nil, err
			}
		case c == '[': // a range or subquery: durations, $__rate_interval
			if i, err = closing(i, ']'); err != nil {
				return nil, nil, err
			}
		case c == '{': // a selector without a metric name
			end, err := closing(i, '}')
			if err != nil {
				return nil, nil, err
			}
			selectors = append(selectors, expr[i:end])
			i = end
		case '0' <= c && c <= '9' || c == '.' || c == '$': // a number or duration; a Grafana variable
			for i++; i < len(expr) && (isIdent(expr[i], false) || expr[i] == '.'); i++ {
			}
		case isIdent(c, true):
			start := i
			for i++; i < len(expr) && isIdent(expr[i], false); i++ {
			}
			word, next := expr[start:i], skipSpace(i)
			switch word {
			case "by", "without", "on", "ignoring", "group_left", "group_right":
				if next < len(expr) && expr[next] == '(' {
					end, err := closing(next, ')')
					if err != nil {
						return nil, nil, err
					}
					if word == "on" {
						var labels []string
						for _, l := range strings.Split(expr[next+1:end-1], ",") {
							if l = strings.TrimSpace(l); l != "" {
								labels = append(labels, l)
							}
						}
						joins = append(joins, labels)
					}
					i = end
				}
			case "and", "or", "unless", "bool", "offset", "atan2", "inf", "nan", "Inf", "NaN",
				// Aggregations, which may take by (...) before their (
				"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
				"bottomk", "topk", "quantile", "limitk", "limit_ratio":
			default:
				if next < len(expr) && expr[next] == '(' { // a function or an aggregation
					break
				}
				if next < len(expr) && expr[next] == '{' {
					end, err := closing(next, '}')
					if err != nil {
						return nil, nil, err
					}
					selectors = append(selectors, word+expr[next:end])
					i = end
				} else {
					selectors = append(selectors, word)
				}
			}
		default:
			i++
		}
	}
	return selectors, joins, nil
}

func TestScanPromQL(t *testing.T) {
	for _, tc := range []struct {
		expr      string
		selectors []string
		joins     [][]string
	}{
		{`up`, []string{"up"}, nil},
		{`{__name__=~"a|b"}`, []string{`{__name__=~"a|b"}`}, nil},
		{`sum by (le) (rate(x{a="}", b=~"{"}[$__rate_interval]))`, []string{`x{a="}", b=~"{"}`}, nil},
		{`max(a offset 5m) by (n) > on (c, n) group_left (m) label_replace(b{c=""}, "x", "$1", "y", "(.+)")`, []string{"a", `b{c=""}`}, [][]string{{"c", "n"}}},
		{`time() - max by (n) (t) or vector(0)`, []string{"t"}, nil},
		{`a unless on () b * 2.5e3 / ignoring (x) c`, []string{"a", "b", "c"}, [][]string{nil}},
	} {
		selectors, joins, err := scanPromQL(tc.expr)
		if err != nil || !slices.Equal(selectors, tc.selectors) || !slices.EqualFunc(joins, tc.joins, slices.Equal) {
			t.Errorf("scanPromQL(%s) = %q, %q, %v; want %q, %q", tc.expr, selectors, joins, err, tc.selectors, tc.joins)
		}
	}
	for _, bad := range []string{`a{b="c}`, `a{b="c"`, `rate(a[5m)`} {
		if _, _, err := scanPromQL(bad); err == nil {
			t.Errorf("scanPromQL(%s): no error", bad)
		}
	}
}
