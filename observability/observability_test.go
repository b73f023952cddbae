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
)

const runbooks = "https://github.com/change-metrics/monocle-hook/blob/main/observability/runbooks.md"

type rule struct {
	Alert       string            `json:"alert"`
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
// recording rule (Grafana's variables replaced by values of their kind).
// `make rules` runs it with PROMTOOL set.
func TestDashboardQueriesParse(t *testing.T) {
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		t.Skip("PROMTOOL is not set: make rules runs this test with it")
	}
	b, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dashboard); err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$monocle", "m", "$namespace", "team-a")
	type record struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []record
	for _, p := range dashboard.Panels {
		for _, target := range p.Targets {
			rules = append(rules, record{fmt.Sprintf("dashboard:query_%d", len(rules)), vars.Replace(target.Expr)})
		}
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
		t.Errorf("promtool check rules: %v\n%s", err, msg)
	}
}
