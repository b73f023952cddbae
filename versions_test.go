package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	semver "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// changelogSection is one `## [V] - DATE` section of CHANGELOG.md.
type changelogSection struct {
	version, date, body string
}

// changelogSections are CHANGELOG.md's sections, in the file's order.
func changelogSections(changelog string) []changelogSection {
	heading := regexp.MustCompile(`(?m)^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?\n`)
	var out []changelogSection
	at := heading.FindAllStringSubmatchIndex(changelog, -1)
	for i, m := range at {
		end := len(changelog)
		if i+1 < len(at) {
			end = at[i+1][0]
		}
		body, _, _ := strings.Cut(changelog[m[1]:end], "\n[Unreleased]: ")
		s := changelogSection{version: changelog[m[2]:m[3]], body: strings.TrimSpace(body)}
		if m[4] >= 0 {
			s.date = changelog[m[4]:m[5]]
		}
		out = append(out, s)
	}
	return out
}

// The chart's version, CHANGELOG.md, docs/upgrade.md's notes and the
// binary's messages say the same: main never carries changes under a
// version already released (0.1.0 twice, one without the other's breaking
// changes), every release has its section, date and upgrade notes, and a
// message that names a version names one whose section says it.
func TestVersionsInStep(t *testing.T) {
	var chart struct{ Version, AppVersion string }
	if err := yaml.Unmarshal([]byte(readFile(t, "chart/Chart.yaml")), &chart); err != nil {
		t.Fatal(err)
	}
	// One version for the chart and what it installs: the image's tag and
	// the hook's --version (the Makefile reads appVersion).
	if chart.Version != chart.AppVersion {
		t.Errorf("chart/Chart.yaml: version %s, appVersion %s: one version for both", chart.Version, chart.AppVersion)
	}
	problems := versionProblems(chart.Version, readFile(t, "CHANGELOG.md"), readFile(t, "docs/upgrade.md"), messageSources(t))
	for _, p := range problems {
		t.Error(p)
	}
}

// messageSources are the non-test Go files of the hook's binary and the
// plugin, by path.
func messageSources(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, glob := range []string{"*.go", "kubectl-monocle/*.go", "internal/*/*.go"} {
		paths, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if !strings.HasSuffix(p, "_test.go") {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				out[p] = string(b)
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("read %d sources: the test reads the wrong place", len(out))
	}
	return out
}

// versionProblems is what disagrees between the chart's version, the
// changelog, the upgrade notes and the sources' messages.
func versionProblems(chartVersion, changelog, upgrade string, sources map[string]string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	current, err := semver.ParseSemantic(chartVersion)
	if err != nil {
		return []string{"chart/Chart.yaml: version " + chartVersion + ": " + err.Error()}
	}
	sections := changelogSections(changelog)
	if len(sections) < 2 || sections[0].version != "Unreleased" || sections[0].date != "" {
		return []string{"CHANGELOG.md: its first section is not [Unreleased], followed by the releases"}
	}
	released := map[string]changelogSection{}
	var newer *semver.Version
	for i, s := range sections[1:] {
		v, err := semver.ParseSemantic(s.version)
		switch {
		case err != nil:
			add("CHANGELOG.md: section [%s] is not a version: %v", s.version, err)
			continue
		case s.date == "":
			add("CHANGELOG.md: section [%s] has no date", s.version)
		case s.body == "":
			add("CHANGELOG.md: section [%s] says nothing", s.version)
		case newer != nil && !v.LessThan(newer):
			add("CHANGELOG.md: section [%s] is below a newer one, not above", s.version)
		case i > 0 && s.date > sections[i].date:
			add("CHANGELOG.md: section [%s] is dated after the newer [%s]", s.version, sections[i].version)
		}
		if !strings.Contains(changelog, "\n["+s.version+"]: https://") {
			add("CHANGELOG.md: section [%s] has no link", s.version)
		}
		released[s.version] = s
		newer = v
	}
	latest, _ := semver.ParseSemantic(sections[1].version)
	if latest == nil {
		return problems
	}
	switch unreleased := sections[0].body; {
	case unreleased == "" && current.String() != latest.String():
		add("chart/Chart.yaml: version %s, but CHANGELOG.md's last release is %s and nothing is unreleased", current, latest)
	case unreleased != "" && !latest.LessThan(current):
		add("CHANGELOG.md: changes under [Unreleased], but the chart's version %s is already released (%s): raise it", current, latest)
	case unreleased != "" && breaks(unreleased) && current.Major() == latest.Major() && current.Minor() == latest.Minor():
		add("CHANGELOG.md: [Unreleased] removes or breaks something: the chart's version %s must be a new minor version over %s", current, latest)
	}
	// Each release after the first has its upgrade notes.
	for i := 1; i+1 < len(sections); i++ {
		from, to := sections[i+1].version, sections[i].version
		if !strings.Contains(upgrade, "\n### From "+from+" to "+to+"\n") {
			add("docs/upgrade.md: no notes \"### From %s to %s\"", from, to)
		}
		if breaks(sections[i].body) && !strings.Contains(sections[i].body, "docs/upgrade.md#from-"+strings.ReplaceAll(from, ".", "")+"-to-"+strings.ReplaceAll(to, ".", "")) {
			add("CHANGELOG.md: [%s] breaks something but links no upgrade notes", to)
		}
	}
	// A message that says a version ("gone since 0.2.0") names one whose
	// section says what went.
	since := regexp.MustCompile(`since ([0-9]+\.[0-9]+\.[0-9]+)`)
	paths := make([]string, 0, len(sources))
	for p := range sources {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		for _, m := range since.FindAllStringSubmatch(sources[p], -1) {
			s, ok := released[m[1]]
			if !ok && m[1] == chartVersion {
				s, ok = sections[0], true
			}
			if !ok || !strings.Contains(s.body, "### Removed") {
				add("%s says %q: CHANGELOG.md has no section %s that removes something", p, m[0], m[1])
			}
		}
	}
	return problems
}

// breaks says whether a section's lines remove or break something.
func breaks(body string) bool {
	return strings.Contains(body, "### Removed") || strings.Contains(body, "Breaking")
}

// Each disagreement is found, and a tree in step has none.
func TestVersionProblems(t *testing.T) {
	const released = `## [0.2.0] - 2026-12-05

Breaking: see [the notes](docs/upgrade.md#from-010-to-020).

### Removed

- restore-job.

## [0.1.0] - 2026-12-02

### Added

- Everything.

[Unreleased]: https://x/compare/v0.2.0...HEAD
[0.2.0]: https://x/compare/v0.1.0...v0.2.0
[0.1.0]: https://x/releases/tag/v0.1.0
`
	const notes = "# Upgrade\n\n### From 0.1.0 to 0.2.0\n\nnotes\n"
	gone := map[string]string{"main.go": `"gone since 0.2.0"`}
	tests := map[string]struct {
		chart, changelog, upgrade string
		sources                   map[string]string
		want                      string // a part of the one problem; "" for none
	}{
		"in step":                                     {"0.2.0", "## [Unreleased]\n\n" + released, notes, gone, ""},
		"changes, version unreleased":                 {"0.2.1", "## [Unreleased]\n\n### Fixed\n\n- x\n\n" + released, notes, gone, ""},
		"changes under a released version":            {"0.2.0", "## [Unreleased]\n\n### Fixed\n\n- x\n\n" + released, notes, gone, "already released"},
		"a break in a patch":                          {"0.2.1", "## [Unreleased]\n\n### Removed\n\n- x\n\n" + released, notes, gone, "new minor version"},
		"nothing unreleased, chart ahead":             {"0.3.0", "## [Unreleased]\n\n" + released, notes, gone, "nothing is unreleased"},
		"no notes":                                    {"0.2.0", "## [Unreleased]\n\n" + released, "# Upgrade\n", gone, "no notes"},
		"a message of another version":                {"0.2.0", "## [Unreleased]\n\n" + released, notes, map[string]string{"main.go": `"gone since 0.3.0"`}, "no section 0.3.0"},
		"a message of a version that removed nothing": {"0.2.0", "## [Unreleased]\n\n" + released, notes, map[string]string{"main.go": `"gone since 0.1.0"`}, "no section 0.1.0"},
		"no Unreleased":                               {"0.2.0", released, notes, gone, "first section"},
		"undated release":                             {"0.2.0", "## [Unreleased]\n\n" + strings.Replace(released, "[0.2.0] - 2026-12-05", "[0.2.0]", 1), notes, gone, "no date"},
		"releases out of order":                       {"0.2.0", "## [Unreleased]\n\n" + strings.Replace(released, "[0.1.0] - 2026-12-02", "[0.3.0] - 2026-12-02", 1), notes, gone, "below a newer one"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := versionProblems(tc.chart, tc.changelog, tc.upgrade, tc.sources)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("problems %q", got)
			case tc.want != "" && (len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), tc.want)):
				t.Errorf("problems %q, want one saying %q", got, tc.want)
			}
		})
	}
}
