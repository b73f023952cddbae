package hook

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

const snapshotsSpec = `{"elasticsearch":{"snapshots":{"schedule":"0 3 * * *","keep":7}}}`

// convergedWith is converged for another spec: a Monocle with spec as
// this hook leaves it, every component ready, its update-idents Job done.
func convergedWith(t *testing.T, spec string) *cluster {
	t.Helper()
	c := newCluster(t, readFixture(t, "sync-v1-all-ready-job-complete"))
	c.parent = setSpec(t, c.parent, spec)
	c.children["Job.batch/v1"] = nil
	for range 3 {
		c.apply(t, syncJSON(t, c.request(t)))
		c.markReady()
	}
	if created, updated, deleted := c.apply(t, syncJSON(t, c.request(t))); len(created)+len(updated)+len(deleted) > 0 {
		t.Fatalf("not converged: created %v, updated %v, deleted %v", created, updated, deleted)
	}
	return c
}

func TestSnapshotsSpecValidation(t *testing.T) {
	tests := map[string]struct {
		snapshots string
		field     string // "" when valid
		inMessage string
	}{
		"daily":                         {`{"schedule":"0 3 * * *","keep":7}`, "", ""},
		"descriptor":                    {`{"schedule":"@daily","keep":1}`, "", ""},
		"every":                         {`{"schedule":"@every 6h","keep":3}`, "", ""},
		"irregular":                     {`{"schedule":"30 6-16/4 * * 1-5","keep":3}`, "", ""},
		"names of days and months":      {`{"schedule":"0 1 * JAN-MAR MON","keep":3}`, "", ""},
		"time zone":                     {`{"schedule":"0 3 * * *","timeZone":"Europe/Paris","keep":7}`, "", ""},
		"leap day only":                 {`{"schedule":"0 0 29 2 *","keep":2}`, "", ""},
		"sizes and class":               {`{"schedule":"@weekly","keep":4,"storageSize":"20Gi","storageClassName":"slow","suspend":true}`, "", ""},
		"no schedule":                   {`{"keep":7}`, "spec.elasticsearch.snapshots.schedule", "is required"},
		"six fields (seconds)":          {`{"schedule":"0 0 3 * * *","keep":7}`, "spec.elasticsearch.snapshots.schedule", "is not a cron schedule"},
		"four fields":                   {`{"schedule":"0 3 * *","keep":7}`, "spec.elasticsearch.snapshots.schedule", "is not a cron schedule"},
		"minute out of range":           {`{"schedule":"60 3 * * *","keep":7}`, "spec.elasticsearch.snapshots.schedule", "is not a cron schedule"},
		"unknown descriptor":            {`{"schedule":"@fortnightly","keep":7}`, "spec.elasticsearch.snapshots.schedule", "is not a cron schedule"},
		"CRON_TZ in the schedule":       {`{"schedule":"CRON_TZ=Europe/Paris 0 3 * * *","keep":7}`, "spec.elasticsearch.snapshots.schedule", "use timeZone instead"},
		"TZ= alone (robfig panics)":     {`{"schedule":"TZ=","keep":7}`, "spec.elasticsearch.snapshots.schedule", "use timeZone instead"},
		"never fires":                   {`{"schedule":"0 0 31 2 *","keep":7}`, "spec.elasticsearch.snapshots.schedule", "never fires"},
		"too long":                      {`{"schedule":"` + strings.Repeat("1,", 100) + `1 * * * *","keep":7}`, "spec.elasticsearch.snapshots.schedule", "over the CRD's 128"},
		"unknown time zone":             {`{"schedule":"0 3 * * *","timeZone":"Mars/Olympus","keep":7}`, "spec.elasticsearch.snapshots.timeZone", "not a known time zone"},
		"time zone with a path":         {`{"schedule":"0 3 * * *","timeZone":"../etc/passwd","keep":7}`, "spec.elasticsearch.snapshots.timeZone", "not a time zone name"},
		"no keep":                       {`{"schedule":"@daily"}`, "spec.elasticsearch.snapshots.keep", "is required"},
		"keep zero":                     {`{"schedule":"@daily","keep":0}`, "spec.elasticsearch.snapshots.keep", "is 0"},
		"keep negative":                 {`{"schedule":"@daily","keep":-1}`, "spec.elasticsearch.snapshots.keep", "is -1"},
		"keep too many":                 {`{"schedule":"@daily","keep":1001}`, "spec.elasticsearch.snapshots.keep", "is 1001"},
		"keep not a number":             {`{"schedule":"@daily","keep":"7"}`, "spec.elasticsearch.snapshots.keep", "must be a int32"},
		"storageSize not a quantity":    {`{"schedule":"@daily","keep":7,"storageSize":"big"}`, "spec.elasticsearch.snapshots.storageSize", "not a positive quantity"},
		"storageSize zero":              {`{"schedule":"@daily","keep":7,"storageSize":"0"}`, "spec.elasticsearch.snapshots.storageSize", "not a positive quantity"},
		"the schedule of a wrong type:": {`{"schedule":5,"keep":7}`, "spec.elasticsearch.snapshots.schedule", "must be a string"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := resolveSpec(json.RawMessage(`{"elasticsearch":{"snapshots":` + tc.snapshots + `}}`))
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field == "":
				return
			case err == nil:
				t.Fatal("accepted")
			case err.Reason != condition.ReasonInvalidSpec || !strings.HasPrefix(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.inMessage):
				t.Errorf("%s: %v, want InvalidSpec naming %s, saying %q", err.Reason, err, tc.field, tc.inMessage)
			}
			// On an existing Monocle: SpecApplied names the field, and
			// nothing is created, updated or deleted.
			c := converged(t)
			c.parent = setSpec(t, c.parent, withSpec(t, `{"elasticsearch":{"snapshots":`+tc.snapshots+`}}`))
			body := syncJSON(t, c.request(t))
			cond := decodeAnswer(t, body).Status.Condition(condition.ConditionSpecApplied)
			if cond.Reason != condition.ReasonInvalidSpec || !strings.Contains(cond.Message, tc.field) {
				t.Errorf("SpecApplied %+v", cond)
			}
			if created, updated, deleted := c.apply(t, body); len(created)+len(updated)+len(deleted) > 0 {
				t.Errorf("created %v, updated %v, deleted %v", created, updated, deleted)
			}
		})
	}
}

// A new Monocle with snapshots: its StatefulSet has both volumes, and the
// CronJob runs our own binary as docs/snapshots.md says.
func TestNewMonocleWithSnapshots(t *testing.T) {
	req := fixture(t, "sync-v1-new-parent")
	req.Parent.Spec = json.RawMessage(`{"elasticsearch":{"storageSize":"50Gi","snapshots":{"schedule":"0 3 * * *","timeZone":"Europe/Paris","keep":7,"storageSize":"80Gi","storageClassName":"slow"}}}`)
	body := syncJSON(t, req)
	golden(t, "new-parent-snapshots", body)
	a := decodeAnswer(t, body)
	checkAnswer(t, "monocle-sample", a)
	if c := a.Status.Condition(condition.ConditionSpecApplied); c.Status != metav1.ConditionTrue {
		t.Fatalf("SpecApplied %+v", c)
	}

	var sts appsv1.StatefulSet
	remarshal(t, a.child("StatefulSet", "monocle-sample-elastic"), &sts)
	var names []string
	for _, tmpl := range sts.Spec.VolumeClaimTemplates {
		q := tmpl.Spec.Resources.Requests[corev1.ResourceStorage]
		names = append(names, tmpl.Name+" "+q.String()+" "+ptr.Deref(tmpl.Spec.StorageClassName, ""))
	}
	if want := []string{"data 50Gi ", "snapshots 80Gi slow"}; !slices.Equal(names, want) {
		t.Errorf("volumeClaimTemplates %q, want %q", names, want)
	}
	es := sts.Spec.Template.Spec.Containers[0]
	if !slices.Contains(es.Env, corev1.EnvVar{Name: "path.repo", Value: "/usr/share/elasticsearch/snapshots"}) ||
		!slices.ContainsFunc(es.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "snapshots" && m.MountPath == "/usr/share/elasticsearch/snapshots" && !m.ReadOnly
		}) {
		t.Errorf("Elasticsearch env %v mounts %v", es.Env, es.VolumeMounts)
	}

	raw := a.child("CronJob", "monocle-sample-snapshots")
	if raw == nil {
		t.Fatalf("no CronJob in %v", a.names())
	}
	var cj batchv1.CronJob
	remarshal(t, raw, &cj)
	spec := cj.Spec
	if spec.Schedule != "0 3 * * *" || ptr.Deref(spec.TimeZone, "") != "Europe/Paris" || spec.ConcurrencyPolicy != batchv1.ForbidConcurrent ||
		ptr.Deref(spec.Suspend, true) || ptr.Deref(spec.StartingDeadlineSeconds, 0) <= 0 ||
		spec.SuccessfulJobsHistoryLimit != nil || ptr.Deref(spec.FailedJobsHistoryLimit, 0) < 1 { // successful: the server's default, 3
		t.Errorf("CronJob spec %+v", spec)
	}
	job := spec.JobTemplate.Spec
	if b := ptr.Deref(job.BackoffLimit, -1); b < 0 || b > 3 || ptr.Deref(job.ActiveDeadlineSeconds, 0) <= 0 {
		t.Errorf("Job backoffLimit %v activeDeadlineSeconds %v", job.BackoffLimit, job.ActiveDeadlineSeconds)
	}
	for _, labels := range []map[string]string{cj.Labels, spec.JobTemplate.Labels, job.Template.Labels} {
		if labels["app.kubernetes.io/instance"] != "monocle-sample" || labels["app.kubernetes.io/component"] != "snapshots" {
			t.Errorf("labels %v", labels)
		}
	}
	pod := job.Template.Spec
	c := pod.Containers[0]
	// The URL, with the snapshot user's credentials, from N-elastic:
	// expanded by the kubelet, never in the spec.
	wantArgs := []string{"snapshot", "--elastic", "$(MONOCLE_ELASTIC_URL)", "--repository", "monocle",
		"--location", "/usr/share/elasticsearch/snapshots/monocle", "--keep", "7", "--timeout", "30m0s"}
	if c.Image != testImage || !slices.Equal(c.Command, []string{"/monocle-hook"}) || !slices.Equal(c.Args, wantArgs) {
		t.Errorf("container %s %q %q", c.Image, c.Command, c.Args)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "MONOCLE_ELASTIC_URL" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.SecretKeyRef == nil ||
		c.Env[0].ValueFrom.SecretKeyRef.Name != "monocle-sample-elastic" || c.Env[0].ValueFrom.SecretKeyRef.Key != "monocle-snapshots.url" {
		t.Errorf("container env %+v", c.Env)
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever || !ptr.Deref(c.SecurityContext.ReadOnlyRootFilesystem, false) ||
		ptr.Deref(pod.SecurityContext.RunAsUser, 0) != instance.HookImageUser {
		t.Errorf("pod %+v", pod)
	}
	var tmpl map[string]any
	remarshal(t, job.Template, &tmpl)
	checkRestricted(t, tmpl) // and automountServiceAccountToken:
	if !slices.Equal([]bool{ptr.Deref(pod.AutomountServiceAccountToken, true)}, []bool{false}) {
		t.Error("the snapshot pod mounts a ServiceAccount token")
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		t.Error("no memory limit")
	}
}

// Without an image from main, the CronJob still names one.
func TestSnapshotsImageDefault(t *testing.T) {
	req := fixture(t, "sync-v1-new-parent")
	req.Parent.Spec = json.RawMessage(snapshotsSpec)
	env := testEnv()
	env.Image = ""
	resp, err := Sync(req, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.Children {
		if cj, ok := c.(*batchv1.CronJob); ok && cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image != elastic.DefaultHookImage {
			t.Errorf("image %s", cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image)
		}
	}
}

// With an external Elasticsearch, snapshots are refused by a condition that
// names the field; the rest applies.
func TestSnapshotsOfAnExternalElasticsearchRefused(t *testing.T) {
	req := steady(t, withSpec(t, `{"elasticsearch":{"url":"http://es:9200","snapshots":{"schedule":"@daily","keep":7}}}`))
	a := decodeAnswer(t, syncJSON(t, req))
	c := a.Status.Condition(condition.ConditionSpecApplied)
	if c.Status != metav1.ConditionFalse || c.Reason != condition.ReasonSnapshotsNeedManagedElasticsearch || !strings.HasPrefix(c.Message, "spec.elasticsearch.snapshots ") {
		t.Errorf("SpecApplied %+v", c)
	}
	if a.child("CronJob", "monocle-sample-snapshots") != nil {
		t.Error("a CronJob for an external Elasticsearch")
	}
	if h := a.Status.Condition(condition.ConditionSnapshotsHealthy); h.Status != metav1.ConditionUnknown || h.Reason != condition.ReasonSnapshotsNeedManagedElasticsearch {
		t.Errorf("SnapshotsHealthy %+v", h)
	}
	// The switch to the external URL is applied: the API points there.
	api, _ := json.Marshal(a.child("Deployment", "monocle-sample-api"))
	if !strings.Contains(string(api), `"value":"http://es:9200"`) {
		t.Errorf("API %s", api)
	}
}

// Turning snapshots on for an existing Monocle, as diffs between answers
// applied the way Metacontroller applies them: Elasticsearch's StatefulSet
// is set to Retain if it is not, left out once (deleted, its volumes
// retained), then made anew with both templates, the data one unchanged;
// the CronJob comes with it. Then nothing moves.
func TestTurnSnapshotsOnRecreatesTheStatefulSet(t *testing.T) {
	const (
		sts = "StatefulSet.apps/v1/monocle-sample-elastic"
		cj  = "CronJob.batch/v1/monocle-sample-snapshots"
	)
	tests := map[string]struct {
		before, after string
		steps         [][]string // "created X", "updated X", "deleted X", "Progressing Reason"
	}{
		"volumes retained: deleted, then made anew": {
			before: baseSpec,
			after:  withSpec(t, snapshotsSpec),
			steps: [][]string{
				{"deleted " + sts, "Progressing RecreatingStatefulSet"},
				{"created " + cj, "created " + sts, "Progressing RollingOut"},
			},
		},
		"deleteDataOnDelete: set to Retain first, then as retained": {
			before: withSpec(t, `{"elasticsearch":{"deleteDataOnDelete":true}}`),
			after:  withSpec(t, `{"elasticsearch":{"deleteDataOnDelete":true,"snapshots":{"schedule":"@daily","keep":3}}}`),
			steps: [][]string{
				{"updated " + sts, "Progressing RetainingVolume"},
				{"deleted " + sts, "Progressing RecreatingStatefulSet"},
				{"created " + cj, "created " + sts, "Progressing RollingOut"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := convergedWith(t, tc.before)
			data := c.children["StatefulSet.apps/v1"]["monocle-sample-elastic"]["spec"].(map[string]any)["volumeClaimTemplates"].([]any)[0]
			c.parent = setSpec(t, c.parent, tc.after)
			// The data volume, as the StatefulSet controller made it from
			// the template (the recorded one holds 1Gi).
			volume := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-monocle-sample-elastic-0"}}
			volume.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
			volume.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
			request := func() *wire.SyncRequest {
				req := c.request(t)
				req.Related.Claims = map[string]*corev1.PersistentVolumeClaim{volume.Name: volume}
				return req
			}
			for i, want := range tc.steps {
				body := syncJSON(t, request())
				created, updated, deleted := c.apply(t, body)
				var got []string
				for _, x := range created {
					got = append(got, "created "+x)
				}
				for _, x := range updated {
					got = append(got, "updated "+x)
				}
				for _, x := range deleted {
					got = append(got, "deleted "+x)
				}
				got = append(got, "Progressing "+decodeAnswer(t, body).Status.Condition(condition.ConditionProgressing).Reason)
				if !slices.Equal(got, want) {
					t.Fatalf("sync %d: %q, want %q", i+1, got, want)
				}
				c.markReady()
			}
			// The new StatefulSet: the data template exactly as it was (so
			// the StatefulSet controller mounts data-monocle-sample-elastic-0
			// again), then the snapshots one; the policy the spec asks.
			obj := c.children["StatefulSet.apps/v1"]["monocle-sample-elastic"]
			var got appsv1.StatefulSet
			remarshal(t, obj, &got)
			templates := obj["spec"].(map[string]any)["volumeClaimTemplates"].([]any)
			if len(templates) != 2 || !jsonEqual(t, mustJSON(t, templates[0]), mustJSON(t, data)) || got.Spec.VolumeClaimTemplates[1].Name != "snapshots" {
				t.Errorf("volumeClaimTemplates %s, the data one was %s", mustJSON(t, templates), mustJSON(t, data))
			}
			wantPolicy := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
			if strings.Contains(tc.after, "deleteDataOnDelete") {
				wantPolicy = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
			}
			if got.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != wantPolicy {
				t.Errorf("whenDeleted %s, want %s", got.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted, wantPolicy)
			}
			// A fixed point.
			for i := range 3 {
				if created, updated, deleted := c.apply(t, syncJSON(t, request())); len(created)+len(updated)+len(deleted) > 0 {
					t.Fatalf("steady sync %d: created %v, updated %v, deleted %v", i+1, created, updated, deleted)
				}
			}
			// Turning snapshots off: the CronJob goes; the StatefulSet,
			// its immutable templates and the snapshot mount stay (no restart).
			c.parent = setSpec(t, c.parent, tc.before)
			body := syncJSON(t, request())
			created, updated, deleted := c.apply(t, body)
			if len(created)+len(updated) > 0 || !slices.Equal(deleted, []string{cj}) {
				t.Errorf("off: created %v, updated %v, deleted %v", created, updated, deleted)
			}
			off := decodeAnswer(t, body)
			if h := off.Status.Condition(condition.ConditionSnapshotsHealthy); h.Reason != "SnapshotsOff" || off.Status.Snapshots == nil ||
				off.Status.Snapshots.Claim != "snapshots-monocle-sample-elastic-0" {
				t.Errorf("off: SnapshotsHealthy %+v, status.snapshots %+v", h, off.Status.Snapshots)
			}
		})
	}
}

// The StatefulSet is never deleted while a volume could go with it.
func TestRecreateWaitsUntilTheVolumesAreReleased(t *testing.T) {
	uid := types.UID("uid-sts")
	owned := func(req *wire.SyncRequest) {
		claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-monocle-sample-elastic-0",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "monocle-sample-elastic", UID: uid, Controller: ptr.To(true)}}}}
		req.Related.Claims = map[string]*corev1.PersistentVolumeClaim{claim.Name: claim}
	}
	tests := map[string]struct {
		edit       func(req *wire.SyncRequest, sts *appsv1.StatefulSet)
		wantSTS    bool
		wantReason string
		inMessage  string
	}{
		"retained and released: left out": {
			edit:       func(*wire.SyncRequest, *appsv1.StatefulSet) {},
			wantReason: "RecreatingStatefulSet", inMessage: "data-monocle-sample-elastic-0 is mounted again",
		},
		"set to delete its volumes: answered with Retain": {
			edit: func(_ *wire.SyncRequest, sts *appsv1.StatefulSet) {
				sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
			},
			wantSTS: true, wantReason: "RetainingVolume", inMessage: "set to Retain first",
		},
		"Retain not yet seen by the StatefulSet controller": {
			edit:    func(_ *wire.SyncRequest, sts *appsv1.StatefulSet) { sts.Generation = sts.Status.ObservedGeneration + 1 },
			wantSTS: true, wantReason: "RetainingVolume", inMessage: "to see the Retain policy",
		},
		"a claim still owned by the StatefulSet": {
			edit:    func(req *wire.SyncRequest, _ *appsv1.StatefulSet) { owned(req) },
			wantSTS: true, wantReason: "RetainingVolume", inMessage: "kubectl patch pvc data-monocle-sample-elastic-0 --type json",
		},
		"being deleted already: left out": {
			edit: func(req *wire.SyncRequest, sts *appsv1.StatefulSet) {
				owned(req)
				sts.DeletionTimestamp = &metav1.Time{Time: testNow}
			},
			wantReason: "RecreatingStatefulSet",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := steady(t, withSpec(t, snapshotsSpec))
			sts := req.Children.StatefulSets["monocle-sample-elastic"]
			sts.UID = uid
			tc.edit(req, sts)
			a := decodeAnswer(t, syncJSON(t, req))
			got := a.child("StatefulSet", "monocle-sample-elastic")
			if (got != nil) != tc.wantSTS {
				t.Fatalf("StatefulSet answered: %v, want %v", got != nil, tc.wantSTS)
			}
			if got != nil {
				if p := nestedString(got, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted"); p != "Retain" {
					t.Errorf("answered with whenDeleted %s", p)
				}
				want, _ := json.Marshal(sts.Spec.VolumeClaimTemplates)
				if !jsonEqual(t, want, mustJSON(t, got["spec"].(map[string]any)["volumeClaimTemplates"])) {
					t.Error("the templates changed while retaining")
				}
			}
			if a.child("CronJob", "monocle-sample-snapshots") != nil {
				t.Error("a CronJob before Elasticsearch has the snapshot volume")
			}
			if c := a.Status.Condition(condition.ConditionProgressing); c.Reason != tc.wantReason || !strings.Contains(c.Message, tc.inMessage) {
				t.Errorf("Progressing %s: %s", c.Reason, c.Message)
			}
			if h := a.Status.Condition(condition.ConditionSnapshotsHealthy); h.Status != metav1.ConditionUnknown || h.Reason != "CronJobPending" {
				t.Errorf("SnapshotsHealthy %+v", h)
			}
		})
	}
}

// Leaving managed Elasticsearch waits for the same release.
func TestSwitchToExternalWaitsUntilTheVolumeIsReleased(t *testing.T) {
	req := steady(t, withSpec(t, `{"elasticsearch":{"url":"http://es:9200"}}`))
	sts := req.Children.StatefulSets["monocle-sample-elastic"]
	sts.UID = "uid-sts"
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-monocle-sample-elastic-0",
		OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: sts.Name, UID: sts.UID}}}}
	req.Related.Claims = map[string]*corev1.PersistentVolumeClaim{claim.Name: claim}
	if decodeAnswer(t, syncJSON(t, req)).child("StatefulSet", "monocle-sample-elastic") == nil {
		t.Fatal("StatefulSet left out while it owns its volume")
	}
	claim.OwnerReferences = nil
	if decodeAnswer(t, syncJSON(t, req)).child("StatefulSet", "monocle-sample-elastic") != nil {
		t.Fatal("StatefulSet still answered once its volume is released")
	}
}

// A Monocle made with snapshots is a fixed point, and the snapshot volume's
// size is judged as the data volume's is.
func TestSnapshotVolumeGrowth(t *testing.T) {
	c := convergedWith(t, withSpec(t, `{"elasticsearch":{"snapshots":{"schedule":"@daily","keep":7,"storageSize":"5Gi"}}}`))
	claim := func(size string) wire.Related {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "snapshots-monocle-sample-elastic-0"}}
		pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
		pvc.Status.Capacity = pvc.Spec.Resources.Requests
		return wire.Related{Claims: map[string]*corev1.PersistentVolumeClaim{"default/" + pvc.Name: pvc}}
	}
	tests := map[string]struct {
		size, volume, reason, inMessage string
	}{
		"same":   {"5Gi", "5Gi", "Applied", ""},
		"grow":   {"8Gi", "5Gi", condition.ReasonVolumeExpansionRequired, "kubectl -n default patch pvc snapshots-monocle-sample-elastic-0"},
		"shrink": {"1Gi", "5Gi", condition.ReasonStorageShrinkRefused, "spec.elasticsearch.snapshots.storageSize is 1Gi"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := c.request(t)
			req.Parent.Spec = json.RawMessage(withSpec(t, `{"elasticsearch":{"snapshots":{"schedule":"@daily","keep":7,"storageSize":"`+tc.size+`"}}}`))
			req.Related = claim(tc.volume)
			a := decodeAnswer(t, syncJSON(t, req))
			if cond := a.Status.Condition(condition.ConditionSpecApplied); cond.Reason != tc.reason || !strings.Contains(cond.Message, tc.inMessage) {
				t.Errorf("SpecApplied %s: %s", cond.Reason, cond.Message)
			}
			if st := a.Status.Snapshots; st == nil || st.Claim != "snapshots-monocle-sample-elastic-0" || st.Capacity != tc.volume {
				t.Errorf("status.snapshots %+v", st)
			}
		})
	}
	// A class change is refused too.
	req := c.request(t)
	req.Parent.Spec = json.RawMessage(withSpec(t, `{"elasticsearch":{"snapshots":{"schedule":"@daily","keep":7,"storageClassName":"fast"}}}`))
	if cond := decodeAnswer(t, syncJSON(t, req)).Status.Condition(condition.ConditionSpecApplied); cond.Reason != condition.ReasonImmutableField ||
		!strings.HasPrefix(cond.Message, "spec.elasticsearch.snapshots.storageClassName") {
		t.Errorf("SpecApplied %+v", cond)
	}
}

// SnapshotsHealthy and status.snapshots from the observed CronJob, at
// testNow (2026-11-30 12:00 UTC, a Monday).
func TestSnapshotsHealthy(t *testing.T) {
	at := func(s string) *metav1.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Time{Time: tm}
	}
	tests := map[string]struct {
		schedule, timeZone string
		suspend            bool
		created            string
		lastSchedule       string
		lastSuccess        string
		active             bool
		status             metav1.ConditionStatus
		reason, inMessage  string
	}{
		// Daily at 03:00: the second-to-last time is 2026-11-29T03:00.
		"last run succeeded": {schedule: "0 3 * * *", lastSchedule: "2026-11-30T03:00:00Z", lastSuccess: "2026-11-30T03:04:00Z",
			status: metav1.ConditionTrue, reason: "SnapshotSucceeded", inMessage: "succeeded at 2026-11-30T03:04:00Z"},
		"last run failed, the one before succeeded: still healthy, the failure named": {schedule: "0 3 * * *",
			lastSchedule: "2026-11-30T03:00:00Z", lastSuccess: "2026-11-29T03:05:00Z",
			status: metav1.ConditionTrue, reason: "SnapshotSucceeded",
			inMessage: "the run scheduled at 2026-11-30T03:00:00Z did not succeed: kubectl -n default logs job/monocle-sample-snapshots-29933460"},
		"two runs failed": {schedule: "0 3 * * *", lastSchedule: "2026-11-30T03:00:00Z", lastSuccess: "2026-11-28T03:05:00Z",
			status: metav1.ConditionFalse, reason: "NoRecentSnapshot",
			inMessage: "no snapshot succeeded since 2026-11-29T03:00:00Z, the second-to-last time scheduled (last success: 2026-11-28T03:05:00Z); the run scheduled at 2026-11-30T03:00:00Z did not succeed"},
		"stale success, runs no longer scheduled (controller down)": {schedule: "0 3 * * *", lastSchedule: "2026-11-20T03:00:00Z", lastSuccess: "2026-11-20T03:05:00Z",
			status: metav1.ConditionFalse, reason: "NoRecentSnapshot", inMessage: "last success: 2026-11-20T03:05:00Z"},
		"never succeeded": {schedule: "0 3 * * *", lastSchedule: "2026-11-30T03:00:00Z",
			status: metav1.ConditionFalse, reason: "NoRecentSnapshot", inMessage: "last success: never"},
		"the last run still running": {schedule: "0 3 * * *", lastSchedule: "2026-11-30T03:00:00Z", lastSuccess: "2026-11-29T03:05:00Z", active: true,
			status: metav1.ConditionTrue, reason: "SnapshotSucceeded"},
		"new CronJob: no run due yet": {schedule: "0 3 * * *", created: "2026-11-29T10:00:00Z",
			status: metav1.ConditionUnknown, reason: "NoRunDueYet"},
		"suspended": {schedule: "0 3 * * *", suspend: true, lastSuccess: "2026-01-01T00:00:00Z",
			status: metav1.ConditionUnknown, reason: "Suspended"},
		// Weekdays 06:30, 10:30, 14:30: at Monday 12:00, the last time is
		// Monday 10:30 and the second-to-last Monday 06:30; Friday's
		// 14:30 run is not enough.
		"irregular schedule, Friday's success is stale on Monday noon": {schedule: "30 6-16/4 * * 1-5",
			lastSchedule: "2026-11-30T10:30:00Z", lastSuccess: "2026-11-27T14:35:00Z",
			status: metav1.ConditionFalse, reason: "NoRecentSnapshot", inMessage: "since 2026-11-30T06:30:00Z"},
		"irregular schedule, Monday's first run succeeded": {schedule: "30 6-16/4 * * 1-5",
			lastSchedule: "2026-11-30T10:30:00Z", lastSuccess: "2026-11-30T06:35:00Z",
			status: metav1.ConditionTrue, reason: "SnapshotSucceeded"},
		// Weekly on Sunday 23:00 in Tokyo: Sunday 2026-11-29T23:00+09:00
		// is 14:00 UTC; the second-to-last, a week before.
		"time zone": {schedule: "0 23 * * 0", timeZone: "Asia/Tokyo", lastSuccess: "2026-11-22T14:01:00Z",
			status: metav1.ConditionTrue, reason: "SnapshotSucceeded"},
		"time zone, a minute late": {schedule: "0 23 * * 0", timeZone: "Asia/Tokyo", lastSuccess: "2026-11-22T13:59:00Z",
			status: metav1.ConditionFalse, reason: "NoRecentSnapshot", inMessage: "since 2026-11-22T14:00:00Z"},
		"@every 6h: a success within 12h": {schedule: "@every 6h", lastSuccess: "2026-11-30T00:30:00Z",
			status: metav1.ConditionTrue, reason: "SnapshotSucceeded"},
		// No time computed from the clock: it would move on every sync.
		"@every 6h: none within 12h": {schedule: "@every 6h", lastSuccess: "2026-11-29T23:30:00Z",
			status: metav1.ConditionFalse, reason: "NoRecentSnapshot", inMessage: `no snapshot succeeded in the last two periods of "@every 6h" (last success: 2026-11-29T23:30:00Z)`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := withSpec(t, `{"elasticsearch":{"snapshots":{"schedule":"`+tc.schedule+`","keep":3}}}`)
			c := convergedWith(t, spec)
			obj := c.children["CronJob.batch/v1"]["monocle-sample-snapshots"]
			var cj batchv1.CronJob
			remarshal(t, obj, &cj)
			cj.Spec.TimeZone = nil
			if tc.timeZone != "" {
				cj.Spec.TimeZone = &tc.timeZone
			}
			cj.Spec.Suspend = &tc.suspend
			if tc.created != "" {
				cj.CreationTimestamp = *at(tc.created)
			}
			if tc.lastSchedule != "" {
				cj.Status.LastScheduleTime = at(tc.lastSchedule)
			}
			if tc.lastSuccess != "" {
				cj.Status.LastSuccessfulTime = at(tc.lastSuccess)
			}
			if tc.active {
				cj.Status.Active = []corev1.ObjectReference{{Name: "monocle-sample-snapshots-1"}}
			}
			req := c.request(t)
			req.Children.CronJobs = map[string]*batchv1.CronJob{cj.Name: &cj}
			a := decodeAnswer(t, syncJSON(t, req))
			h := a.Status.Condition(condition.ConditionSnapshotsHealthy)
			if h.Status != tc.status || h.Reason != tc.reason || !strings.Contains(h.Message, tc.inMessage) {
				t.Errorf("SnapshotsHealthy %s %s: %s", h.Status, h.Reason, h.Message)
			}
			st := a.Status.Snapshots
			if st == nil || st.Claim != "snapshots-monocle-sample-elastic-0" || !sameTime(st.LastSuccessfulTime, cj.Status.LastSuccessfulTime) ||
				!sameTime(st.LastScheduleTime, cj.Status.LastScheduleTime) {
				t.Errorf("status.snapshots %+v", st)
			}
		})
	}
}

func sameTime(a, b *metav1.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(b))
}

// Off, the condition is Unknown and says why; with a bad spec, a CronJob
// that still runs is judged all the same.
func TestSnapshotsHealthyWhenOff(t *testing.T) {
	a := decodeAnswer(t, syncJSON(t, steady(t, baseSpec)))
	if h := a.Status.Condition(condition.ConditionSnapshotsHealthy); h.Status != metav1.ConditionUnknown || h.Reason != "SnapshotsOff" || a.Status.Snapshots != nil {
		t.Errorf("off: %+v, status.snapshots %+v", h, a.Status.Snapshots)
	}
	c := convergedWith(t, withSpec(t, snapshotsSpec))
	req := c.request(t)
	req.Children.CronJobs["monocle-sample-snapshots"].Status.LastSuccessfulTime = &metav1.Time{Time: testNow.Add(-time.Hour)}
	req.Parent.Spec = json.RawMessage(`{"publicURL":"not a URL"}`)
	b := decodeAnswer(t, syncJSON(t, req))
	if h := b.Status.Condition(condition.ConditionSnapshotsHealthy); h.Status != metav1.ConditionTrue {
		t.Errorf("bad spec, CronJob running: %+v", h)
	}
	if b.child("CronJob", "monocle-sample-snapshots") == nil {
		t.Error("a bad spec left the CronJob out")
	}
	req.Children.CronJobs = nil
	if h := decodeAnswer(t, syncJSON(t, req)).Status.Condition(condition.ConditionSnapshotsHealthy); h.Reason != "SpecNotApplied" {
		t.Errorf("bad spec, no CronJob: %+v", h)
	}
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A converged Monocle with snapshots, its CronJob having run: every status
// field the snapshots add is in this golden answer (crd/crd_test.go checks
// the status schema against the golden answers).
func TestSteadyWithSnapshotsGolden(t *testing.T) {
	c := convergedWith(t, withSpec(t, snapshotsSpec))
	req := c.request(t)
	cj := req.Children.CronJobs["monocle-sample-snapshots"]
	cj.Status.LastScheduleTime = &metav1.Time{Time: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}
	cj.Status.LastSuccessfulTime = &metav1.Time{Time: time.Date(2026, 11, 30, 3, 2, 9, 0, time.UTC)}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "snapshots-monocle-sample-elastic-0"}}
	pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}
	req.Related.Claims = map[string]*corev1.PersistentVolumeClaim{"default/" + pvc.Name: pvc}
	body := syncJSON(t, req)
	golden(t, "steady-snapshots", body)
	if h := decodeAnswer(t, body).Status.Condition(condition.ConditionSnapshotsHealthy); h.Status != metav1.ConditionTrue {
		t.Errorf("SnapshotsHealthy %+v", h)
	}
}
