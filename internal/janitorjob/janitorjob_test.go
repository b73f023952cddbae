package janitorjob

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/internal/instance"

	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/janitorjob -update to write it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s (run go test ./internal/janitorjob -update and review the diff):\n%s", path, got)
	}
}

func objects(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each command, as an admin gets it: the API's image, mounted config,
// Elasticsearch URL (here a Secret's key) and node selector.
func TestJanitorJobGolden(t *testing.T) {
	tests := map[string][]string{
		"update-idents":               {"update-idents", "--monocle", "team", "-f", "testdata/objects.yaml"},
		"update-idents-one-workspace": {"update-idents", "--monocle", "team", "-f", "testdata/objects.yaml", "--workspace", "zuul"},
		"wipe-crawler-data":           {"wipe-crawler-data", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", "gerrit"},
		"set-crawler-commit-date":     {"set-crawler-commit-date", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", "gerrit", "--commit-date", "2023-06-01"},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := run(args, bytes.NewReader(objects(t)), &out, &errOut); err != nil {
				t.Fatalf("%v\n%s", err, errOut.String())
			}
			golden(t, name+".yaml", out.Bytes())
			doc := out.String()
			if strings.HasPrefix(doc, "# ") {
				_, doc, _ = strings.Cut(doc, "\n")
			}
			var job batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(doc), &job); err != nil {
				t.Fatal(err)
			}
			c := job.Spec.Template.Spec.Containers[0]
			if job.Namespace != "metrics" || c.Image != "quay.io/change-metrics/monocle:1.11.2" ||
				job.Spec.Template.Spec.Volumes[0].ConfigMap.Name != "team-config-10892450b7" ||
				c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.SecretKeyRef.Name != "es" ||
				len(c.EnvFrom) > 0 || job.Spec.Template.Spec.NodeSelector["disk"] != "ssd" {
				t.Errorf("the Job does not run as the API does: %s", doc)
			}
			if got := strings.Join(c.Command[:3], " "); got != "monocle janitor "+args[0] {
				t.Errorf("command %q", c.Command)
			}
		})
	}
}

// What the janitor would silently do nothing with, or fail on, is refused
// when the Job is printed, with what is there.
func TestJanitorJobRefuses(t *testing.T) {
	tests := map[string]struct {
		args  []string
		usage bool // a usage error (exit 2)
		says  string
	}{
		"no command":             {args: []string{"--monocle", "team", "-f", "-"}, usage: true, says: "COMMAND is one of"},
		"an unknown command":     {args: []string{"reindex", "--monocle", "team", "-f", "-"}, usage: true, says: "not \"reindex\""},
		"no --monocle":           {args: []string{"update-idents", "-f", "-"}, says: `"" is not a Monocle's name`},
		"wipe without crawler":   {args: []string{"wipe-crawler-data", "--monocle", "team", "-f", "-", "--workspace", "openstack"}, usage: true, says: "needs --crawler"},
		"date without a date":    {args: []string{"set-crawler-commit-date", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", "gerrit"}, usage: true, says: "needs --commit-date"},
		"update-idents, crawler": {args: []string{"update-idents", "--monocle", "team", "-f", "-", "--crawler", "gerrit"}, usage: true, says: "takes no --crawler"},
		"an unknown workspace": {
			args: []string{"wipe-crawler-data", "--monocle", "team", "-f", "-", "--workspace", "nova", "--crawler", "gerrit"},
			says: `no workspace "nova"; its workspaces: "openstack", "zuul"`,
		},
		"an unknown crawler": {
			args: []string{"set-crawler-commit-date", "--monocle", "team", "-f", "-", "--workspace", "zuul", "--crawler", "gerrit", "--commit-date", "2023-06-01"},
			says: `workspace "zuul" has no crawler "gerrit"; its crawlers: none`,
		},
		"a date Monocle cannot read": {
			args: []string{"set-crawler-commit-date", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", "gerrit", "--commit-date", "2023/06/01"},
			says: "is not a date Monocle's janitor reads",
		},
		"another Monocle": {
			args: []string{"update-idents", "--monocle", "other", "-f", "-"},
			says: "no Deployment other-api: Monocle other runs no API",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(tc.args, bytes.NewReader(objects(t)), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tc.says) || errors.Is(err, snapshot.ErrUsage) != tc.usage {
				t.Fatalf("err = %v, want one saying %q (usage error: %v)", err, tc.says, tc.usage)
			}
			if out.Len() > 0 {
				t.Errorf("printed %s", out.String())
			}
		})
	}
}

// A namespace that is not a DNS label never names the Job: the objects
// come from the API server, which holds namespaces to DNS labels, but a
// Job is made in no namespace the API server would not hold.
func TestJanitorJobRefusesANamespaceThatIsACommand(t *testing.T) {
	objects := strings.ReplaceAll(string(objects(t)), "namespace: metrics", `namespace: "x; echo PWNED; #"`)
	var out, errOut bytes.Buffer
	err := run([]string{"update-idents", "--monocle", "team", "-f", "-"}, strings.NewReader(objects), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "is not a DNS label") || out.Len() > 0 {
		t.Fatalf("err = %v, printed %q; want a refusal and nothing printed", err, out.String())
	}
}

// The same request is the same Job: applied again, it runs nothing again.
func TestJobName(t *testing.T) {
	a := Options{Monocle: "team", Command: "set-crawler-commit-date", Workspace: "w", Crawler: "c", CommitDate: "2023-06-01"}
	same, b := a, a
	b.CommitDate = "2023-06-02"
	if jobName(a) != jobName(same) || jobName(a) == jobName(b) || len(jobName(a)) > 63 {
		t.Errorf("%s, %s", jobName(a), jobName(b))
	}
}

// objectsWith is testdata/objects.yaml with the mounted config and, when
// url is not "", the API's MONOCLE_ELASTIC_URL as a value.
func objectsWith(t *testing.T, config, url string) []byte {
	t.Helper()
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(objects(t), &list); err != nil {
		t.Fatal(err)
	}
	for _, item := range list.Items {
		meta := item["metadata"].(map[string]any)
		switch {
		case item["kind"] == "ConfigMap" && meta["name"] == "team-config-10892450b7":
			item["data"] = map[string]any{"config.yaml": config}
		case item["kind"] == "Deployment" && meta["name"] == "team-api" && url != "":
			c := item["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			for _, e := range c["env"].([]any) {
				if e := e.(map[string]any); e["name"] == "MONOCLE_ELASTIC_URL" {
					delete(e, "valueFrom")
					e["value"] = url
				}
			}
		}
	}
	b, err := yaml.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// namesConfig has a workspace and a crawler of each name the tests give.
func namesConfig(workspaces, crawlers []string) string {
	var b strings.Builder
	b.WriteString("workspaces:\n  - name: openstack\n    crawlers:\n")
	for _, c := range crawlers {
		b.WriteString("      - name: " + strconv.Quote(c) + "\n        update_since: \"2024-01-01\"\n        provider: {gerrit_url: https://review.opendev.org, gerrit_repositories: [nova]}\n")
	}
	for _, w := range workspaces {
		b.WriteString("  - name: " + strconv.Quote(w) + "\n    crawlers:\n      - name: gerrit\n        update_since: \"2024-01-01\"\n        provider: {gerrit_url: https://review.opendev.org, gerrit_repositories: [nova]}\n")
	}
	return b.String()
}

// A name the image's wrapper would split or expand, GHC's runtime take,
// or the C locale garble never reaches a Job: Build refuses it
// (not a usage error), says why and what to do instead, and shows the
// name escaped. Each case cites what it follows in Monocle 1.11.2 (and the
// libraries of its image).
func TestJanitorJobRefusesWhatTheWrapperMangles(t *testing.T) {
	type refusal struct {
		command, workspace, crawler string
		says                        []string
	}
	const split = "the shell would split it at the"
	const pattern = "the shell would read it as a file name pattern"
	const rts = "it is a word of GHC's runtime"
	const ascii = "it is not ASCII"
	tests := map[string]refusal{
		// nix/default.nix:506 `$*`: IFS's space (the case), tab and newline.
		"a crawler with a space (the issue's)": {"wipe-crawler-data", "openstack", "gerrit review", []string{split + " space (byte 6)", "No Job of this image can name this crawler"}},
		"a crawler with a tab":                 {"set-crawler-commit-date", "openstack", "gerrit\treview", []string{split + " tab (byte 6)", "rename the crawler in the config", `"gerrit\treview"`}},
		"a crawler ending in a newline":        {"wipe-crawler-data", "openstack", "gerrit\n", []string{split + " newline (byte 6)", `"gerrit\n"`}},
		"a workspace with a tab":               {"update-idents", "team\tb", "", []string{split + " tab (byte 4)", "run update-idents without --workspace", `"team\tb"`}},
		"a crawler of spaces only":             {"wipe-crawler-data", "openstack", "  ", []string{split + " space (byte 0)"}},
		// nix/default.nix:506 `$*`: pathname expansion of * ? [.
		"a crawler with a star":              {"wipe-crawler-data", "openstack", "gerrit*", []string{pattern + " ('*' at byte 6)"}},
		"a crawler with a question mark":     {"set-crawler-commit-date", "openstack", "who?", []string{pattern + " ('?' at byte 3)"}},
		"a workspace with a bracket":         {"update-idents", "team[1]", "", []string{pattern + " ('[' at byte 4)", "without --workspace"}},
		"a workspace with a bracket, a wipe": {"wipe-crawler-data", "team[1]", "gerrit", []string{pattern, "No Job of this image can name this workspace"}},
		"a crawler with a backslash":         {"wipe-crawler-data", "openstack", `a\b`, []string{"a backslash (byte 1)", `"a\\b"`}},
		// monocle.cabal:305 -rtsopts: rts/RtsFlags.c's exact words.
		"a crawler named +RTS":  {"wipe-crawler-data", "openstack", "+RTS", []string{rts}},
		"a crawler named -RTS":  {"set-crawler-commit-date", "openstack", "-RTS", []string{rts}},
		"a crawler named --RTS": {"wipe-crawler-data", "openstack", "--RTS", []string{rts}},
		// nix/default.nix:532 sets no locale: GHC reads argv as ASCII.
		"a crawler not in ASCII":         {"wipe-crawler-data", "openstack", "équipe", []string{ascii + " (byte 0)", "U+FFFD"}},
		"a workspace not in ASCII":       {"update-idents", "équipe", "", []string{ascii, "without --workspace"}},
		"a crawler with a bidi override": {"set-crawler-commit-date", "openstack", "a\u202eb", []string{ascii + " (byte 1)", `"a\u202eb"`}},
	}
	var workspaces, crawlers []string
	for _, tc := range tests {
		if tc.crawler != "" {
			crawlers = append(crawlers, tc.crawler)
		} else {
			workspaces = append(workspaces, tc.workspace)
		}
	}
	workspaces = append(workspaces, "team[1]")
	objects := objectsWith(t, namesConfig(workspaces, crawlers), "")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := []string{tc.command, "--monocle", "team", "-f", "-", "--workspace", tc.workspace}
			if tc.crawler != "" {
				args = append(args, "--crawler", tc.crawler)
			}
			if tc.command == "set-crawler-commit-date" {
				args = append(args, "--commit-date", "2023-06-01")
			}
			var out, errOut bytes.Buffer
			err := run(args, bytes.NewReader(objects), &out, &errOut)
			if err == nil || errors.Is(err, snapshot.ErrUsage) {
				t.Fatalf("err = %v, want a refusal (exit 1)", err)
			}
			for _, says := range tc.says {
				if !strings.Contains(err.Error(), says) {
					t.Errorf("err = %v\nwant it to say %q", err, says)
				}
			}
			if !printable.Clean(err.Error()) || out.Len() > 0 {
				t.Errorf("err = %q (raw characters?), printed %q", err, out.String())
			}
		})
	}

	// What passes the wrapper, the runtime and the C locale as it is.
	fine := []string{"gerrit-review_2", "+rts", "RTS", "a.b~c@d"}
	objects = objectsWith(t, namesConfig(nil, fine), "")
	for _, crawler := range fine {
		var out, errOut bytes.Buffer
		if err := run([]string{"wipe-crawler-data", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", crawler}, bytes.NewReader(objects), &out, &errOut); err != nil {
			t.Errorf("crawler %q: %v", crawler, err)
		}
	}
}

// An Elasticsearch URL the API's Deployment holds reaches --elastic as
// $(MONOCLE_ELASTIC_URL), through the same wrapper: checked the same way,
// and never shown (it may hold credentials).
func TestJanitorJobRefusesAnElasticURLTheWrapperMangles(t *testing.T) {
	tests := map[string]struct{ url, says string }{
		// nix/default.nix:506 `$*`.
		"a space":               {"http://es:9200/my index", "split it at the space (byte 17)"},
		"a trailing newline":    {"http://es:9200\n", "split it at the newline (byte 14)"},
		"a star":                {"http://user:p*ss@es:9200", "file name pattern ('*' at byte 13)"},
		"a question mark":       {"http://es:9200/?pretty", "file name pattern ('?' at byte 15)"},
		"a bracket (IPv6 host)": {"http://[::1]:9200", "file name pattern ('[' at byte 7)"},
		// nix/default.nix:532: no locale.
		"a host not in ASCII": {"http://élastique:9200", "not ASCII (byte 7)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run([]string{"update-idents", "--monocle", "team", "-f", "-"}, bytes.NewReader(objectsWith(t, "workspaces: []\n", tc.url)), &out, &errOut)
			if err == nil || errors.Is(err, snapshot.ErrUsage) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "percent-encode") {
				t.Fatalf("err = %v, want a refusal saying %q", err, tc.says)
			}
			if strings.Contains(err.Error(), strings.TrimSpace(tc.url)) || strings.Contains(err.Error(), "es:9200") || out.Len() > 0 {
				t.Errorf("err = %v shows the URL, or printed %q", err, out.String())
			}
		})
	}
	// A URL that passes as it is is the Job's, through the Deployment's
	// env, and the comments name no Secret.
	var out, errOut bytes.Buffer
	if err := run([]string{"update-idents", "--monocle", "team", "-f", "-"}, bytes.NewReader(objectsWith(t, "workspaces: []\n", "http://team-elastic:9200")), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "value: http://team-elastic:9200") || strings.Contains(out.String(), "Secret") {
		t.Errorf("the Job:\n%s", out.String())
	}
}

// --commit-date is rewritten without spaces, for the same instant, as
// Monocle's janitor reads it: parseDateValue (src/Monocle/Prelude.hs:444-450,
// called at src/Monocle/Backend/Janitor.hs:310) tries "%F", "%F %T %Z" and
// "%FT%XZ" with the time library's parseTimeM into a UTCTime.
func TestCommitDate(t *testing.T) {
	tests := []struct{ in, want string }{
		// Prelude.hs:447 "%F %T %Z": the form the old help recommended (the issue's).
		{"2023-06-01 10:00:00 UTC", "2023-06-01T10:00:00Z"},
		// Zones of defaultTimeLocale (time, Locale.hs:63-74), any case (Instances.hs:333).
		{"2023-06-01 00:30:00 EST", "2023-06-01T05:30:00Z"},
		{"2023-06-01 00:30:00 pdt", "2023-06-01T07:30:00Z"},
		{"2023-06-01 10:00:00 gmt", "2023-06-01T10:00:00Z"},
		// Numeric offsets (Instances.hs:354-367), the date and year moving.
		{"2023-01-01 01:00:00 +02:00", "2022-12-31T23:00:00Z"},
		{"2023-12-31 23:00:00 -0100", "2024-01-01T00:00:00Z"},
		{"2024-02-28 22:00:00 -99:99", "2024-03-04T02:39:00Z"},
		// Military letters (Instances.hs:312-330).
		{"2023-06-01 10:00:00 A", "2023-06-01T09:00:00Z"},
		{"2023-06-01 10:00:00 y", "2023-06-01T22:00:00Z"},
		{"2023-06-01 10:00:00 z", "2023-06-01T10:00:00Z"},
		// A leap second keeps its 60 (TimeOfDay.hs:82: seconds are kept).
		{"2016-12-31 23:59:60 UTC", "2016-12-31T23:59:60Z"},
		{"2016-12-31 18:59:60 EST", "2016-12-31T23:59:60Z"},
		// Spaces where the format has one, and before %Y (Class.hs:73-77, SpacePadding).
		{"2023-06-01 \t 10:00:00  UTC", "2023-06-01T10:00:00Z"},
		{" 2023-06-01", "2023-06-01"},
		{"- 44-03-15 12:00:00 UTC", "-0044-03-15T12:00:00Z"},
		// %Y is any number of digits.
		{"02023-06-01", "2023-06-01"},
		{"12345-12-31 23:00:00 -0100", "12346-01-01T00:00:00Z"},
		{"99999999999999999999-12-31 23:00:00 -01:00", "100000000000000000000-01-01T00:00:00Z"},
		{"-0001-01-01 00:00:00 +0100", "-0002-12-31T23:00:00Z"},
		// Prelude.hs:446 "%F" and :448 "%FT%XZ" are kept (literals in any case: Class.hs:80).
		{"2023-06-01", "2023-06-01"},
		{"2023-06-01T10:00:00Z", "2023-06-01T10:00:00Z"},
		{"2023-06-01t10:00:00z", "2023-06-01T10:00:00Z"},
		// What parseDateValue does not read.
		{"2023/06/01", ""},
		{"2023-06", ""},                   // Query.hs:183's form, not the janitor's
		{"2023-06-01 10:00", ""},          // %T has seconds
		{"2023-06-01 10:00:00 utc", ""},   // "UTC" only as it is (Instances.hs:347)
		{"2023-06-01 10:00:00 CET", ""},   // not a zone of defaultTimeLocale
		{"2023-06-01T10:00:00+02:00", ""}, // %FT%XZ ends in a literal Z
		{"2023-02-29", ""},                // fromGregorianValid
		{"2023-06-01 24:00:00 UTC", ""},   // %H is 0-23
	}
	for _, tc := range tests {
		got, ok := commitDate(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("commitDate(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
		if _, bad := mangled(got); bad {
			t.Errorf("commitDate(%q) = %q: the wrapper mangles it", tc.in, got)
		}
	}
	// The instant, by Go's time where it reads the form: the same.
	for _, in := range []string{"2023-01-01 01:00:00 +02:00", "2023-12-31 23:00:00 -0100", "2024-02-28 22:00:00 -99:99", "1999-12-31 23:30:00 -05:00"} {
		got, _ := commitDate(in)
		layout := "2006-01-02 15:04:05 -07:00"
		if !strings.Contains(in[20:], ":") {
			layout = "2006-01-02 15:04:05 -0700"
		}
		want, err := time.Parse(layout, in)
		if in[20:] == "-99:99" { // beyond Go's zones: 100 h 39 min west
			want, err = time.Date(2024, 2, 28, 22, 0, 0, 0, time.UTC).Add(100*time.Hour+39*time.Minute), nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if at, err := time.Parse(time.RFC3339, got); err != nil || !at.Equal(want) {
			t.Errorf("commitDate(%q) = %q, not the instant %s", in, got, want.UTC())
		}
	}
}

// The Job passes the rewritten date, and two spellings of one instant are
// one Job.
func TestJanitorJobRewritesTheDate(t *testing.T) {
	job := func(date string) string {
		var out, errOut bytes.Buffer
		if err := run([]string{"set-crawler-commit-date", "--monocle", "team", "-f", "-", "--workspace", "openstack", "--crawler", "gerrit", "--commit-date", date}, bytes.NewReader(objects(t)), &out, &errOut); err != nil {
			t.Fatalf("%s: %v", date, err)
		}
		return out.String()
	}
	a, b := job("2023-06-01 02:00:00 +02:00"), job("2023-06-01T00:00:00Z")
	if a != b || !strings.Contains(a, "- --commit-date\n        - \"2023-06-01T00:00:00Z\"\n") {
		t.Errorf("the Jobs differ, or do not pass the rewritten date:\n%s\n%s", a, b)
	}
}

// An API that goes through its Elasticsearch proxy (hook/pods/elasticproxy.go)
// has only the loopback URL: the janitor, which runs no proxy, reads the
// Secret key the proxy reads. The loopback URL without the proxy is not
// a Deployment the hook made.
func TestJanitorJobReadsWhatTheProxyReads(t *testing.T) {
	api, configs, err := read(objects(t), "team-api")
	if err != nil {
		t.Fatal(err)
	}
	pod := &api.Spec.Template.Spec
	for i, e := range pod.Containers[0].Env {
		if e.Name == "MONOCLE_ELASTIC_URL" {
			pod.Containers[0].Env[i] = corev1.EnvVar{Name: e.Name, Value: instance.ElasticProxyURL}
		}
	}
	config := func(name string) (*corev1.ConfigMap, error) { return configs[name], nil }
	o := Options{Command: "update-idents", Monocle: "team"}
	if _, _, err := Build(o, api, config); err == nil || !strings.Contains(err.Error(), "runs no proxy") {
		t.Errorf("the proxy's URL without the proxy: %v", err)
	}
	pod.InitContainers = []corev1.Container{{Name: instance.ElasticProxyContainer, Env: []corev1.EnvVar{{Name: "MONOCLE_ELASTIC_URL",
		ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "team-elastic"}, Key: "monocle.url"}}}}}}
	// An init container of the proxy's name that ends before the API
	// starts is no proxy: the API's loopback URL would reach nothing.
	if _, _, err := Build(o, api, config); err == nil || !strings.Contains(err.Error(), "runs no proxy") {
		t.Errorf("the proxy as an init container that ends: %v", err)
	}
	pod.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	job, note, err := Build(o, api, config)
	if err != nil {
		t.Fatal(err)
	}
	env := job.Spec.Template.Spec.Containers[0].Env
	if len(env) != 1 || env[0].ValueFrom == nil || *env[0].ValueFrom.SecretKeyRef != (corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "team-elastic"}, Key: "monocle.url"}) || note != "" {
		t.Errorf("env %+v, note %q: want N-elastic's monocle.url, no note", env, note)
	}
	if vols := job.Spec.Template.Spec.Volumes; len(vols) != 1 || vols[0].ConfigMap == nil {
		t.Errorf("volumes %+v: want the config alone", vols)
	}
}
