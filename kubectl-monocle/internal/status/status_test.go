package status

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/monocleapi"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

// A converged Monocle m of namespace ns, and another Monocle's API beside
// it, which status leaves out.
const converged = `
apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata: {name: m, namespace: ns, generation: 3}
spec:
  elasticsearch:
    snapshots: {schedule: "0 3 * * *", keep: 7}
status:
  observedGeneration: 3
  url: http://localhost:8090
  versions: {monocle: "quay.io/change-metrics/monocle:1.11.2", elasticsearch: "docker.elastic.co/elasticsearch/elasticsearch:7.17.26"}
  storage: {claim: data-m-elastic-0, requested: 10Gi, capacity: 10Gi}
  snapshots: {claim: snapshots-m-elastic-0, capacity: 10Gi, lastScheduleTime: "2026-12-01T03:00:00Z", lastSuccessfulTime: "2026-12-01T03:00:40Z"}
  conditions:
  - {type: Ready, status: "False", reason: ComponentsNotReady, message: "waiting for crawler", lastTransitionTime: "2026-12-01T00:00:00Z"}
  - {type: SpecApplied, status: "True", reason: Applied, message: "", lastTransitionTime: "2026-12-01T00:00:00Z"}
  - {type: SnapshotsHealthy, status: "True", reason: SnapshotSucceeded, message: "at 2026-12-01T03:00:40Z", lastTransitionTime: "2026-12-01T00:00:00Z"}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: m-elastic, namespace: ns, generation: 1, labels: {app.kubernetes.io/instance: m}}
spec: {replicas: 1}
status: {observedGeneration: 1, replicas: 1, readyReplicas: 1, updatedReplicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: m-api, namespace: ns, generation: 2, labels: {app.kubernetes.io/instance: m}}
spec:
  replicas: 1
  template:
    spec:
      containers: [{name: api, image: x}]
      volumes: [{name: config, configMap: {name: m-config-0123456789}}]
status: {observedGeneration: 2, replicas: 1, availableReplicas: 1, updatedReplicas: 1, readyReplicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: m-crawler, namespace: ns, generation: 1, labels: {app.kubernetes.io/instance: m}}
spec: {replicas: 1}
status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other-api, namespace: ns, labels: {app.kubernetes.io/instance: other}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: m-snapshots, namespace: ns, labels: {app.kubernetes.io/instance: m}}
spec: {schedule: "0 3 * * *"}
status: {lastScheduleTime: "2026-12-02T03:00:00Z", lastSuccessfulTime: "2026-12-02T03:00:30Z"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: m-update-idents-0123456789, namespace: ns, labels: {app.kubernetes.io/instance: m}}
status: {conditions: [{type: Complete, status: "True"}], succeeded: 1}
---
apiVersion: v1
kind: Secret
metadata: {name: m-api, namespace: ns, labels: {app.kubernetes.io/instance: m}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: m-config-0123456789, namespace: ns, labels: {app.kubernetes.io/instance: m}}
data:
  config.yaml: |
    workspaces:
      - name: ws
        crawlers:
          - name: github
            update_since: "2024-01-01"
            provider: {github_organization: org, github_token: GITHUB_TOKEN}
          - name: gerrit
            update_since: "2024-01-01"
            provider: {gerrit_url: "https://review.example.com", gerrit_repositories: [p]}
---
apiVersion: v1
kind: Pod
metadata: {name: m-api-abc, namespace: ns, labels: {app.kubernetes.io/instance: m}}
spec: {containers: [{name: api, image: x}]}
status: {phase: Running, containerStatuses: [{name: api, ready: true, restartCount: 3, image: x, imageID: ""}]}
---
apiVersion: v1
kind: Pod
metadata: {name: other-api-abc, namespace: ns, labels: {app.kubernetes.io/instance: other}}
spec: {containers: [{name: api, image: x}]}
`

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func TestStatusConverged(t *testing.T) {
	f := &plugintest.FakeMonocle{T: t, Commits: map[string]string{"ws/github/" + monocleapi.EntityProject: "2026-11-30T10:00:00Z"}}
	api := f.Start()
	var asked []string
	c := &plugin.Clients{Dyn: plugintest.FakeCluster(t, converged), Crawlers: func(ns, svc string) monocleapi.CrawlerAPI {
		asked = append(asked, ns+"/"+svc)
		return api
	}}
	st, err := readStatus(context.Background(), c, "ns", "m", now)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, ",") != "ns/m-api" {
		t.Errorf("asked the API of %v", asked)
	}
	var out strings.Builder
	if err := printStatus(&out, st, ""); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("\n%s", text)
	for _, want := range []string{
		"Monocle ns/m (generation 3, observed 3)",
		"Ready             False   ComponentsNotReady  a component is rolling out or has stopped being ready",
		"waiting for crawler",
		"every spec field is in effect",
		"StatefulSet/m-elastic",
		"Deployment/m-api",
		"Deployment/m-crawler",
		"Job/m-update-idents-0123456789",
		"CronJob/m-snapshots",
		"Secret/m-api",
		"m-api-abc",
		"quay.io/change-metrics/monocle:1.11.2",
		"data-m-elastic-0",
		"last:",
		"2026-12-02T03:00:00Z",
		"next:",
		"2026-12-03T03:00:00Z",
		"github",
		"2026-11-30T10:00:00Z",
		"project_name: org/github",
		"no project crawled yet",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status does not show %q", want)
		}
	}
	for _, not := range []string{"other-api"} {
		if strings.Contains(text, not) {
			t.Errorf("status shows %q, of another Monocle", not)
		}
	}
	ready := map[string]string{}
	for _, ch := range st.Children {
		ready[ch.Kind+"/"+ch.Name] = ch.Ready
	}
	for k, want := range map[string]string{"StatefulSet/m-elastic": "yes", "Deployment/m-api": "yes", "Deployment/m-crawler": "no", "Job/m-update-idents-0123456789": "yes", "CronJob/m-snapshots": "-"} {
		if ready[k] != want {
			t.Errorf("%s ready %q, want %q", k, ready[k], want)
		}
	}
	if len(st.Pods) != 1 || st.Pods[0].Restarts != 3 || st.Pods[0].Ready != "1/1" {
		t.Errorf("pods %+v", st.Pods)
	}

	// -o json and -o yaml: the same struct.
	for _, format := range []string{"json", "yaml"} {
		var b strings.Builder
		if err := printStatus(&b, st, format); err != nil {
			t.Fatal(err)
		}
		var back Status
		var err error
		if format == "json" {
			err = json.Unmarshal([]byte(b.String()), &back)
		} else {
			err = yaml.Unmarshal([]byte(b.String()), &back)
		}
		if err != nil || back.Name != "m" || len(back.Crawlers) != 4 || back.Snapshots.Next == nil || !back.Snapshots.Next.Time.Equal(time.Date(2026, 12, 3, 3, 0, 0, 0, time.UTC)) {
			t.Errorf("-o %s: %v\n%s", format, err, b.String())
		}
	}
}

// A condition is explained by its reason (hook/condition's table), not by
// its status: each reason of the table by its line, one this plugin does
// not know as such.
func TestStatusExplainsByReason(t *testing.T) {
	for _, r := range condition.Reasons {
		for _, in := range r.In {
			typ, status, _ := strings.Cut(in, "=")
			if got := meaning(metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: r.Name}); got != r.Means {
				t.Errorf("%s %s: %q, want %q", in, r.Name, got, r.Means)
			}
		}
	}
	// The issue's: Unknown, but snapshots are on and not suspended.
	got := meaning(metav1.Condition{Type: condition.ConditionSnapshotsHealthy, Status: metav1.ConditionUnknown, Reason: condition.ReasonNoRunDueYet})
	if strings.Contains(got, "off") || !strings.Contains(got, "too young") {
		t.Errorf("NoRunDueYet: %q", got)
	}
	if got := meaning(metav1.Condition{Type: condition.ConditionReady, Status: metav1.ConditionFalse, Reason: "FromANewerHook"}); !strings.Contains(got, "does not know") {
		t.Errorf("an unknown reason: %q", got)
	}
}

// A viewer: no Secrets, no services/proxy. Everything else, and a line on
// each part that is missing.
func TestStatusAsViewer(t *testing.T) {
	f := &plugintest.FakeMonocle{T: t, Status: http.StatusForbidden}
	api := f.Start()
	dyn := plugintest.FakeCluster(t, converged)
	dyn.PrependReactor("list", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", nil)
	})
	c := &plugin.Clients{Dyn: dyn, Crawlers: func(string, string) monocleapi.CrawlerAPI { return api }}
	code, stdout, stderr := runWith(c, "status", "m", "-n", "ns")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"(not shown: Secrets: you may not list secrets in ns)",
		"crawlers: not shown: you may not use services/proxy on m-api in ns (403 Forbidden",
		"Deployment/m-api", "m-api-abc", "next:",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status does not show %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "WORKSPACE") {
		t.Errorf("a table of crawlers with no answer:\n%s", stdout)
	}
}

// A new Monocle: no status, no child yet.
func TestStatusNew(t *testing.T) {
	c := &plugin.Clients{Dyn: plugintest.FakeCluster(t, `
apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata: {name: m, namespace: ns, generation: 1}
`)}
	code, stdout, stderr := runWith(c, "status", "m", "-n", "ns", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var st Status
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Generation != 1 || st.ObservedGeneration != 0 || len(st.Children) != 0 || st.Snapshots != nil || !strings.Contains(st.CrawlersNote, "no API Deployment m-api") {
		t.Errorf("%+v", st)
	}
	code, stdout, _ = runWith(c, "status", "m", "-n", "ns")
	if code != 0 || !strings.Contains(stdout, "(none yet: Metacontroller has not synced it)") || !strings.Contains(stdout, "Snapshots:      off") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
}

// hostile is what a namespace editor may write into every value status
// prints, in YAML's double-quoted escapes: an OSC that sets the window's
// title, a CSI that clears the screen (ESC and the C1 CSI), a forged line,
// DEL, a bidi override and isolate, a line separator and the C1 NEL.
const hostile = `\e]0;owned\a\e[2J\x9b2J\rforged\n\x7f\u202eevil\u2066\L\N`

// Every value status prints comes through the project's escaping, in every
// output mode: the text has no character a terminal acts on; -o json and
// -o yaml are valid, read back as the same status, and hold none raw
// (encoding/json leaves C1 and bidi as they are; sigs.k8s.io/yaml fails on
// a C1 control).
func TestStatusPrintsEscaped(t *testing.T) {
	h := hostile
	cluster := strings.NewReplacer("@@", h).Replace(`
apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata: {name: m, namespace: ns, generation: 3}
status:
  observedGeneration: 3
  url: "http://@@"
  versions: {monocle: "@@", elasticsearch: "@@"}
  storage: {claim: "@@", requested: "@@", capacity: "@@"}
  snapshots: {claim: "@@", capacity: "@@"}
  conditions:
  - {type: "@@", status: "@@", reason: "@@", message: "@@", lastTransitionTime: "2026-12-01T00:00:00Z"}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: "@@", namespace: ns, labels: {app.kubernetes.io/instance: m}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: m-api, namespace: ns, labels: {app.kubernetes.io/instance: m}}
spec:
  template:
    spec:
      containers: [{name: api, image: x}]
      volumes: [{name: config, configMap: {name: m-config-0123456789}}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: m-snapshots, namespace: ns, labels: {app.kubernetes.io/instance: m}}
spec: {schedule: "@@", timeZone: "@@"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: m-config-0123456789, namespace: ns, labels: {app.kubernetes.io/instance: m}}
data:
  config.yaml: |
    workspaces:
      - name: ws
        crawlers:
          - name: "@@"
            update_since: "2024-01-01"
            provider: {github_organization: org, github_token: GITHUB_TOKEN}
          - name: "@@2"
            update_since: "2024-01-01"
            provider: {github_organization: org, github_token: GITHUB_TOKEN}
---
apiVersion: v1
kind: Pod
metadata: {name: "@@", namespace: ns, labels: {app.kubernetes.io/instance: m}}
spec: {containers: [{name: api, image: x}]}
status: {phase: "@@"}
`)
	var raw string
	if err := yaml.Unmarshal([]byte(`"`+h+`"`), &raw); err != nil {
		t.Fatal(err)
	}
	crawler := raw
	f := &plugintest.FakeMonocle{T: t, Commits: map[string]string{"ws/" + crawler + "/" + monocleapi.EntityProject: "2026-11-30T10:00:00Z"}, ErrorFor: map[string]string{"ws/" + crawler + "2": raw}}
	api := f.Start()
	c := &plugin.Clients{Dyn: plugintest.FakeCluster(t, cluster), Crawlers: func(string, string) monocleapi.CrawlerAPI { return api }}
	st, err := readStatus(context.Background(), c, "ns", "m", now)
	if err != nil {
		t.Fatal(err)
	}
	// The hostile value reached every field the test means to cover.
	want, _ := json.Marshal(raw)
	whole, _ := json.Marshal(st)
	if n := strings.Count(string(whole), string(want[1:len(want)-1])); n < 20 {
		t.Fatalf("the hostile value is in only %d fields of the status:\n%s", n, whole)
	}
	for _, format := range []string{"", "json", "yaml"} {
		var out strings.Builder
		if err := printStatus(&out, st, format); err != nil {
			t.Fatalf("-o %q: %v", format, err)
		}
		for i, line := range strings.Split(out.String(), "\n") {
			if !printable.Clean(line) {
				t.Errorf("-o %q: line %d holds a character a terminal acts on: %q", format, i+1, line)
			}
		}
		if format == "" {
			continue
		}
		var back Status
		if format == "json" {
			err = json.Unmarshal([]byte(out.String()), &back)
		} else {
			err = yaml.Unmarshal([]byte(out.String()), &back)
		}
		if err != nil {
			t.Fatalf("-o %s does not read back: %v\n%s", format, err, out.String())
		}
		if again, _ := json.Marshal(back); string(again) != string(whole) {
			t.Errorf("-o %s reads back as another status:\n%s\nwant\n%s", format, again, whole)
		}
	}
}

// status asks each crawler for the kinds of entity its provider's streams
// crawl, and only those (src/Macroscope/Main.hs:335-377, getCrawler;
// src/Macroscope/Worker.hs:43-48, streamEntity): a GitHub users crawler
// for users and a Bugzilla one for task data, never for a project, which
// src/Monocle/Config.hs:420-429 (getCrawlerProject) gives neither; the
// fake answers as src/Monocle/Api/Server.hs:429-460 does, by crawler and
// EntityType. A task data crawler, which Monocle's crawler does not run
// (Main.hs:377), is asked nothing.
func TestStatusAsksEachCrawlerItsKinds(t *testing.T) {
	cluster := strings.Replace(converged, `          - name: github
            update_since: "2024-01-01"
            provider: {github_organization: org, github_token: GITHUB_TOKEN}
          - name: gerrit
            update_since: "2024-01-01"
            provider: {gerrit_url: "https://review.example.com", gerrit_repositories: [p]}`, `          - name: users
            update_since: "2024-01-01"
            provider: {github_users: [alice], github_token: GITHUB_TOKEN}
          - name: bz
            update_since: "2024-01-01"
            provider: {bugzilla_url: "https://bz.example.com", bugzilla_products: [p]}
          - name: td
            update_since: "2024-01-01"
            provider: TaskDataProvider`, 1)
	if cluster == converged {
		t.Fatal("the fixture's crawlers were not replaced")
	}
	f := &plugintest.FakeMonocle{T: t, Commits: map[string]string{
		"ws/users/" + monocleapi.EntityUser:    "2026-11-29T10:00:00Z",
		"ws/bz/" + monocleapi.EntityTaskData:   "2026-11-28T10:00:00Z",
		"ws/users/" + monocleapi.EntityProject: "2000-01-01T00:00:00Z", // never asked
		"ws/bz/" + monocleapi.EntityProject:    "2000-01-01T00:00:00Z",
	}}
	api := f.Start()
	c := &plugin.Clients{Dyn: plugintest.FakeCluster(t, cluster), Crawlers: func(string, string) monocleapi.CrawlerAPI { return api }}
	for _, format := range []string{"", "json", "yaml"} {
		f.Asked = nil
		args := []string{"status", "m", "-n", "ns"}
		if format != "" {
			args = append(args, "-o", format)
		}
		code, stdout, stderr := runWith(c, args...)
		if code != 0 {
			t.Fatalf("-o %q: exit %d\n%s", format, code, stderr)
		}
		if want := []string{"ws/users/" + monocleapi.EntityUser, "ws/bz/" + monocleapi.EntityTaskData}; !slices.Equal(f.Asked, want) {
			t.Errorf("-o %q: asked %v, want %v", format, f.Asked, want)
		}
		var st Status
		switch format {
		case "":
			for _, want := range []string{"ENTITY", "user_name: org/users", "2026-11-29T10:00:00Z", "td_name: org/bz", "2026-11-28T10:00:00Z", "runs no stream of it"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("status does not show %q:\n%s", want, stdout)
				}
			}
			if strings.Contains(stdout, "no project crawled yet") || strings.Contains(stdout, "2000-01-01") {
				t.Errorf("status shows a project for a crawler that has none:\n%s", stdout)
			}
			continue
		case "json":
			err := json.Unmarshal([]byte(stdout), &st)
			if err != nil {
				t.Fatal(err)
			}
		case "yaml":
			if err := yaml.Unmarshal([]byte(stdout), &st); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string]string{}
		for _, cr := range st.Crawlers {
			got[cr.Crawler+"/"+cr.Entity] = cr.OldestEntity + cr.Error
		}
		want := map[string]string{"users/user": "user_name: org/users", "bz/task data": "td_name: org/bz",
			"td/": "Monocle's crawler runs no stream of it (a GitHub application or task data crawler)"}
		if !maps.Equal(got, want) {
			t.Errorf("-o %s: crawlers %v, want %v", format, got, want)
		}
	}
}
