package hook

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/mcapply"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// fromRelease010 is a cluster holding what monocle-hook 0.1.0 made of
// examples/monocle-snapshots.yaml (testdata/v0.1.0), every workload rolled
// out, with a snapshot run under way and an update-idents Job still to run,
// both of 0.1.0's templates: Elasticsearch without security, and every
// client of it with its plain URL.
func fromRelease010(t *testing.T, spec string) *cluster {
	t.Helper()
	return release010(t, spec, identsJobName(t, spec))
}

// identsJobName is the name of the update-idents Job of spec's config, as
// the hook names it once the API runs.
func identsJobName(t *testing.T, spec string) string {
	t.Helper()
	c := release010(t, spec, "")
	for range 4 {
		c.apply(t, syncJSON(t, c.request(t)))
		c.markReady()
	}
	for name := range c.children["Job.batch/v1"] {
		if strings.HasPrefix(name, instance.For("snapshots-demo").UpdateIdentsPrefix()) {
			return name
		}
	}
	t.Fatal("no update-idents Job")
	return ""
}

// release010 is fromRelease010 with the update-idents Job jobName, none
// when "".
func release010(t *testing.T, spec, jobName string) *cluster {
	t.Helper()
	objs, err := testbodies.Release010("testdata/v0.1.0/snapshots-demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := instance.For("snapshots-demo")
	children := map[string]map[string]any{}
	for _, obj := range objs {
		stored := mustCopy(t, obj)
		if err := mcapply.SetLastApplied(stored, obj); err != nil {
			t.Fatal(err)
		}
		md := stored["metadata"].(map[string]any)
		md["namespace"], md["uid"], md["generation"] = "default", "uid-"+md["name"].(string), 1
		key := typeKey(stored)
		if children[key] == nil {
			children[key] = map[string]any{}
		}
		children[key][md["name"].(string)] = stored
	}
	// 0.1.0's update-idents Job ran `monocle janitor update-idents` with
	// the API's plain URL; this one, of the config's idents (an earlier
	// idents' Job is deleted with the first answer), has not ended yet.
	api := children["Deployment.apps/v1"][n.API].(map[string]any)
	var d appsv1.Deployment
	remarshal(t, api, &d)
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": jobName, "namespace": "default", "uid": "uid-job"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never",
			"containers": []any{map[string]any{"name": "update-idents", "image": d.Spec.Template.Spec.Containers[0].Image, "env": d.Spec.Template.Spec.Containers[0].Env}}}}}}
	if jobName != "" {
		children["Job.batch/v1"] = map[string]any{jobName: job}
	}
	parent := map[string]any{"apiVersion": "monocle.monocle.change-metrics.io/v1alpha1", "kind": "Monocle",
		"metadata": map[string]any{"name": "snapshots-demo", "namespace": "default", "uid": "uid-monocle", "generation": 1},
		"spec":     json.RawMessage(spec)}
	body, err := json.Marshal(map[string]any{"parent": parent, "children": children})
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, body)
	c.markReady()
	if jobName != "" {
		c.children["Job.batch/v1"][jobName]["status"] = map[string]any{"active": 1}
	}
	c.children["CronJob.batch/v1"][n.Snapshots]["status"] = map[string]any{"active": []any{map[string]any{"name": n.Snapshots + "-29000000"}}}
	return c
}

const snapshotsDemoSpec = `{"elasticsearch":{"storageSize":"20Gi","snapshots":{"schedule":"0 3 * * *","timeZone":"Europe/Paris","keep":14,"storageSize":"30Gi"}}}`

// An upgrade from 0.1.0, sync by sync: Metacontroller applies each answer
// (mcapply), the workload controllers roll one pod a sync (an old pod stays
// until the new ones are available), and 0.1.0's update-idents Job and
// snapshot run end at the sync each case says. At no step is
// Elasticsearch's security on, in the answer or in the cluster, while a
// client of it, answered or observed, may reach it without credentials; it
// turns on at the first sync that none may.
func TestSecurityWaitsForEveryClient(t *testing.T) {
	n := instance.For("snapshots-demo")
	tests := map[string]struct{ jobEnds, snapshotEnds, securedAt int }{
		// Its new pod is made at sync 1, available at sync 2.
		"the API's rollout":          {jobEnds: 0, snapshotEnds: 0, securedAt: 3},
		"an update-idents Job's run": {jobEnds: 5, snapshotEnds: 0, securedAt: 5},
		"a snapshot run":             {jobEnds: 0, snapshotEnds: 7, securedAt: 7},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := fromRelease010(t, snapshotsDemoSpec)
			oldJob := c.children["Job.batch/v1"][identsJobName(t, snapshotsDemoSpec)]
			securedAt := 0
			for sync := 1; sync <= 10; sync++ {
				if sync == tc.jobEnds || tc.jobEnds == 0 && sync == 1 {
					oldJob["status"] = map[string]any{"succeeded": 1, "conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}
				}
				if sync == tc.snapshotEnds || tc.snapshotEnds == 0 && sync == 1 {
					c.children["CronJob.batch/v1"][n.Snapshots]["status"] = map[string]any{}
				}
				body := syncJSON(t, c.request(t))
				a := decodeAnswer(t, body)
				answered := map[string]map[string]map[string]any{}
				for _, ch := range a.Children {
					key := typeKey(ch)
					if answered[key] == nil {
						answered[key] = map[string]map[string]any{}
					}
					answered[key][nestedString(ch, "metadata", "name")] = ch
				}
				for where, objs := range map[string]map[string]map[string]map[string]any{"answered": answered, "observed": c.children} {
					if sts := objs["StatefulSet.apps/v1"][n.Elastic]; sts != nil && securityOn(t, sts) {
						if securedAt == 0 {
							securedAt = sync
						}
						for _, w := range []map[string]map[string]map[string]any{answered, c.children} {
							if why := clientWithoutCredentials(t, n, w, c.children["Job.batch/v1"]); why != "" {
								t.Fatalf("sync %d: security on in the %s StatefulSet while %s", sync, where, why)
							}
						}
					}
				}
				p := a.Status.Condition(condition.ConditionProgressing)
				if securedAt == 0 && (p.Reason != condition.ReasonSecuringElasticsearch || !strings.Contains(p.Message, "waiting for ")) {
					t.Fatalf("sync %d: security off, Progressing %+v", sync, p)
				}
				c.apply(t, body)
				rollOnePod(t, c)
			}
			if securedAt != tc.securedAt {
				t.Errorf("security on at sync %d, want %d", securedAt, tc.securedAt)
			}
		})
	}
}

// A Monocle whose config is refused holds its API as it runs: a 0.1.0 one
// keeps Elasticsearch without security, however many syncs pass; a new
// Monocle's Elasticsearch starts secure.
func TestSecurityKeptOffWhileTheAPIIsHeld(t *testing.T) {
	n := instance.For("snapshots-demo")
	spec := strings.TrimSuffix(snapshotsDemoSpec, "}") + `,"config":"workspaces:\n  - name: demo\n    crawlers:\n      - name: x\n"}`
	c := release010(t, spec, "")
	for step := range 6 {
		body := syncJSON(t, c.request(t))
		a := decodeAnswer(t, body)
		if applied := a.Status.Condition(condition.ConditionSpecApplied); step == 0 && applied.Reason != condition.ReasonConfigInvalid {
			t.Fatalf("SpecApplied %+v, want ConfigInvalid", applied)
		}
		if securityOn(t, a.child("StatefulSet", n.Elastic)) {
			t.Fatalf("sync %d: security on while the API is held without credentials", step+1)
		}
		if p := a.Status.Condition(condition.ConditionProgressing); !strings.Contains(p.Message, "held as last applied") {
			t.Fatalf("sync %d: Progressing %+v does not say the API is held", step+1, p)
		}
		c.apply(t, body)
		c.markReady()
	}
	if !securityOn(t, decodeAnswer(t, syncJSON(t, fixture(t, "sync-v1-new-parent"))).child("StatefulSet", "monocle-sample-elastic")) {
		t.Error("a new Monocle's Elasticsearch starts without security")
	}
}

// securityOn: the StatefulSet's Elasticsearch requires credentials.
func securityOn(t *testing.T, obj map[string]any) bool {
	var sts appsv1.StatefulSet
	remarshal(t, obj, &sts)
	for _, e := range sts.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "xpack.security.enabled" {
			return e.Value == "true"
		}
	}
	return false
}

// clientWithoutCredentials says which client of Elasticsearch among objs
// may reach it without credentials: a Deployment (the API) or a Job or
// CronJob whose template does not read them, the API while a pod of an
// earlier template runs, the CronJob while one of its Jobs does, a Job
// until it ends.
func clientWithoutCredentials(t *testing.T, n instance.Names, objs map[string]map[string]map[string]any, observedJobs map[string]map[string]any) string {
	if o := objs["Deployment.apps/v1"][n.API]; o != nil {
		var d appsv1.Deployment
		remarshal(t, o, &d)
		if !elasticusers.ReadsURL(d.Spec.Template.Spec.Containers, n.Elastic, elasticusers.Monocle) && !proxiesMonocleUser(d, n) {
			return "the API's template reads no credentials"
		}
		if d.Status.UpdatedReplicas < d.Status.Replicas || d.Status.ObservedGeneration < d.Generation {
			return fmt.Sprintf("the API has pods of an earlier template: %+v", d.Status)
		}
	}
	if o := objs["CronJob.batch/v1"][n.Snapshots]; o != nil {
		var cj batchv1.CronJob
		remarshal(t, o, &cj)
		if !elasticusers.ReadsURL(cj.Spec.JobTemplate.Spec.Template.Spec.Containers, n.Elastic, elasticusers.Snapshots) {
			return "the snapshot CronJob's template reads no credentials"
		}
		if len(cj.Status.Active) > 0 && o["status"] != nil {
			return "a snapshot Job of an earlier template may run"
		}
	}
	for name, o := range objs["Job.batch/v1"] {
		var j batchv1.Job
		remarshal(t, o, &j)
		if observed := observedJobs[name]; observed != nil {
			// An answered Job has no status: the observed one says.
			j.Status = batchv1.JobStatus{}
			remarshal(t, observed["status"], &j.Status)
		}
		done := len(j.Status.Conditions) > 0 && j.Status.Conditions[0].Status == corev1.ConditionTrue
		if !done && !elasticusers.ReadsURL(j.Spec.Template.Spec.Containers, n.Elastic, elasticusers.Monocle) {
			return "Job " + name + " runs without credentials"
		}
	}
	return ""
}

// proxiesMonocleUser: the API's pods run the Elasticsearch proxy on the
// monocle user's URL of N-elastic, and the API goes through it.
func proxiesMonocleUser(d appsv1.Deployment, n instance.Names) bool {
	spec := d.Spec.Template.Spec
	proxy := slices.ContainsFunc(spec.InitContainers, func(c corev1.Container) bool {
		return c.Name == "elastic-proxy" && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways &&
			elasticusers.ReadsURL([]corev1.Container{c}, n.Elastic, elasticusers.Monocle)
	})
	viaProxy := slices.ContainsFunc(spec.Containers[0].Env, func(e corev1.EnvVar) bool {
		return e.Name == "MONOCLE_ELASTIC_URL" && e.Value == "http://127.0.0.1:9200"
	})
	return proxy && viaProxy
}

// rollOnePod plays the workload controllers one sync at a time: a workload
// whose spec changed has no updated pod yet, then one more each sync (an
// old pod left until every new one is available).
func rollOnePod(t *testing.T, c *cluster) {
	for _, typ := range []string{"Deployment.apps/v1", "StatefulSet.apps/v1"} {
		for _, o := range c.children[typ] {
			var d appsv1.Deployment // the fields read are a StatefulSet's too
			remarshal(t, o, &d)
			want := int64(1)
			if d.Spec.Replicas != nil {
				want = int64(*d.Spec.Replicas)
			}
			updated := int64(d.Status.UpdatedReplicas) + 1
			if d.Status.ObservedGeneration < d.Generation {
				updated = 0
			}
			updated = min(updated, want)
			all := want
			if updated < want {
				all++
			}
			o["status"] = map[string]any{"observedGeneration": d.Generation, "replicas": all, "updatedReplicas": updated,
				"readyReplicas": updated, "availableReplicas": updated, "currentReplicas": updated}
		}
	}
}
