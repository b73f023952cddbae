package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/change-metrics/monocle-hook/internal/restorerecord"
)

// jobEnded says whether a Job ended, as the Job controller marks it.
func jobEnded(j batchv1.Job) bool {
	return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed)
	})
}

// lockedBuffer is a process's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// background is the plugin running while the test plays the controllers.
type background struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	code int
}

func startPlugin(t *testing.T, bin, kubeconfig string, args ...string) *background {
	t.Helper()
	return start(t, exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...))
}

// start starts cmd, its output read while it runs; the test's end kills
// it if it still runs, with every process it started: in a group of its
// own, so that a shell's kubectl does not outlive it, holding its output
// open (Wait would wait for it, a 15-minute kubectl wait, not the test).
func start(t *testing.T, cmd *exec.Cmd) *background {
	t.Helper()
	b := &background{cmd: cmd, out: &lockedBuffer{}, done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b.cmd.WaitDelay = 10 * time.Second
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = b.cmd.Wait()
		b.code = b.cmd.ProcessState.ExitCode()
		close(b.done)
	}()
	t.Cleanup(func() { _ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL); <-b.done })
	return b
}

// until waits, at most 2 minutes, for the plugin to print want.
func (b *background) until(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(b.out.String(), want); time.Sleep(100 * time.Millisecond) {
		select {
		case <-b.done:
			t.Fatalf("the plugin exited %d without printing %q:\n%s", b.code, want, b.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 2 minutes, the plugin has not printed %q:\n%s", want, b.out.String())
		}
	}
}

// exit waits, at most 2 minutes, for the plugin to end: its exit code.
func (b *background) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the plugin still runs after 2 minutes:\n%s", b.out.String())
	}
	t.Logf("%s: exit %d\n%s", strings.Join(b.cmd.Args[1:], " "), b.code, b.out.String())
	// The namespace warns on what the restricted standard would refuse:
	// every Job the plugin makes passes it.
	if strings.Contains(b.out.String(), "Warning:") {
		t.Errorf("the API server warned:\n%s", b.out.String())
	}
	return b.code
}

// endJob marks a Job ended as the Job controller would, through the status
// subresource (no pod runs here): Kubernetes 1.37 accepts Complete only
// with startTime, completionTime and SuccessCriteriaMet, and Failed only
// with startTime and FailureTarget.
func endJob(t *testing.T, ns, name string, succeeded bool) {
	t.Helper()
	job := &batchv1.Job{}
	if err := k8sClient.Get(context.Background(), clientKey(ns, name), job); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	job.Status.StartTime = &now
	cond := func(typ batchv1.JobConditionType, reason string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: "marked by the test", LastProbeTime: now, LastTransitionTime: now}
	}
	if succeeded {
		job.Status.CompletionTime = &now
		job.Status.Succeeded = 1
		job.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached"), cond(batchv1.JobComplete, "CompletionsReached")}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded"), cond(batchv1.JobFailed, "BackoffLimitExceeded")}
	}
	if err := k8sClient.Status().Update(context.Background(), job); err != nil {
		t.Fatalf("marking Job %s ended: %v", name, err)
	}
}

// jobsOf are the Jobs of ns whose names start with prefix.
func jobsOf(t *testing.T, ns, prefix string) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := k8sClient.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(list.Items, func(j batchv1.Job) bool { return !strings.HasPrefix(j.Name, prefix) })
}

// oneJob waits for the one Job of ns named prefix..., at most a minute.
func oneJob(t *testing.T, ns, prefix string, while func()) batchv1.Job {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if while != nil {
			while()
		}
		if jobs := jobsOf(t, ns, prefix); len(jobs) == 1 {
			return jobs[0]
		} else if len(jobs) > 1 || time.Now().After(deadline) {
			t.Fatalf("Jobs %s*: %d, want 1", prefix, len(jobs))
		}
	}
}

// routineSpec is what restore must put back: the user's own values.
func routineSpec(t *testing.T, d *driver) map[string]any {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(d.monocle("m").Object, "spec")
	return map[string]any{"api": spec["api"], "crawler": spec["crawler"], "snapshots": nestedOr(spec, "elasticsearch", "snapshots")}
}

func nestedOr(m map[string]any, fields ...string) any {
	v, _, _ := unstructured.NestedFieldCopy(m, fields...)
	return v
}

// TestRoutineTasksAsAnEditor: kubectl monocle backup, janitor and restore,
// on the real API server, as a user with only the namespace's edit role
// (and the chart's aggregated ClusterRoles, which give it Monocles). The
// test plays Metacontroller (the driver) and the Job controller (it marks
// the Jobs ended: no pod runs here).
func TestRoutineTasksAsAnEditor(t *testing.T) {
	ctx := context.Background()
	bin := buildPlugin(t)
	startControllerManager(t, "clusterrole-aggregation")
	ns := restrictedNamespace(t)
	createAggregatedRoles(t, ns)
	user := ns + "-edit"
	if err := k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "edit", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}); err != nil {
		t.Fatal(err)
	}
	editor := userKubeconfig(t, user)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if answer, _ := canI(t, editor, "kubectl auth can-i patch monocles -n "+ns); answer == "yes" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("after 60 s, the editor may still not patch monocles")
		}
	}

	d := newDriver(t, ns)
	config := "workspaces:\n  - name: demo\n    crawlers:\n      - name: zuul\n        update_since: \"2024-01-01\"\n" +
		"        provider: {gerrit_url: https://review.opendev.org, gerrit_repositories: [zuul/zuul]}\n"
	d.createMonocle("m", map[string]any{"config": config, "api": map[string]any{"replicas": int64(2)}, "crawler": map[string]any{"enabled": true},
		"elasticsearch": map[string]any{"snapshots": map[string]any{"schedule": "0 3 * * *", "keep": int64(7)}}})
	d.converge("m")
	d.createMonocle("plain", map[string]any{"config": config})
	d.converge("plain")
	m := d.monocle("m")

	t.Run("backup", func(t *testing.T) {
		code, out, errOut := runPlugin(t, bin, editor, "backup", "plain", "-n", ns)
		if code != 2 || !strings.Contains(errOut, "no snapshots: Monocle plain takes none, spec.elasticsearch.snapshots is not set") {
			t.Fatalf("backup of a Monocle without snapshots: exit %d\n%s%s", code, out, errOut)
		}
		// A scheduled run is active: backup waits for it.
		cj := &batchv1.CronJob{}
		if err := k8sClient.Get(ctx, clientKey(ns, "m-snapshots"), cj); err != nil {
			t.Fatal(err)
		}
		cj.Status.Active = []corev1.ObjectReference{{APIVersion: "batch/v1", Kind: "Job", Namespace: ns, Name: "m-snapshots-29400000"}}
		if err := k8sClient.Status().Update(ctx, cj); err != nil {
			t.Fatal(err)
		}
		backup := documented(t, "snapshots.md", "backup", ns)
		// The hook of these tests runs e2eHookImage: the plugin answers
		// as it does.
		b := startPlugin(t, bin, editor, append(backup[0], "--hook-image", e2eHookImage)...)
		b.until(t, "A scheduled snapshot run is active (Job m-snapshots-29400000): waiting for it to end")
		time.Sleep(2 * time.Second)
		if jobs := jobsOf(t, ns, "m-snapshots-b"); len(jobs) > 0 {
			t.Fatalf("a backup Job while a scheduled run is active: %s", jobs[0].Name)
		}
		cj.Status.Active = nil
		if err := k8sClient.Status().Update(ctx, cj); err != nil {
			t.Fatal(err)
		}
		job := oneJob(t, ns, "m-snapshots-b", nil)
		args := job.Spec.Template.Spec.Containers[0].Args
		snapshot := args[len(args)-1]
		owner := metav1.GetControllerOf(&job)
		switch {
		case owner == nil || owner.Kind != "CronJob" || owner.UID != cj.UID:
			t.Errorf("the backup Job's controller: %+v, want the CronJob", owner)
		case job.Annotations["cronjob.kubernetes.io/instantiate"] != "manual":
			t.Errorf("annotations %v", job.Annotations)
		case !strings.HasPrefix(snapshot, "monocle-") || args[len(args)-2] != "--name" || !slices.Equal(args[:len(args)-2], cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args):
			t.Errorf("args %q: want the CronJob's and --name", args)
		case job.Labels["app.kubernetes.io/instance"] != "m" || job.Labels["controller-uid"] != "":
			t.Errorf("labels %v", job.Labels)
		}
		endJob(t, ns, job.Name, true)
		if code := b.exit(t); code != 0 || !strings.Contains(b.out.String(), "snapshot "+snapshot+" taken") {
			t.Fatalf("backup: exit %d, want 0 naming %s", code, snapshot)
		}

		// A CronJob a namespace editor changed: refused, naming the
		// fields, and no Job made from it.
		if err := k8sClient.Get(ctx, clientKey(ns, "m-snapshots"), cj); err != nil {
			t.Fatal(err)
		}
		cj.Spec.JobTemplate.Spec.Template.Spec.HostPID = true
		cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "busybox"
		if err := k8sClient.Update(ctx, cj); err != nil {
			t.Fatal(err)
		}
		code, out, errOut = runPlugin(t, bin, editor, append(backup[0], "--hook-image", e2eHookImage)...)
		if code != 2 || !strings.Contains(errOut, "spec.jobTemplate.spec.template.spec.containers[0].image, spec.jobTemplate.spec.template.spec.hostPID differ") ||
			!strings.Contains(errOut, "kubectl -n "+ns+" delete cronjob m-snapshots") {
			t.Errorf("backup of a changed CronJob: exit %d\n%s%s", code, out, errOut)
		}
		if jobs := jobsOf(t, ns, "m-snapshots-b"); len(jobs) != 1 {
			t.Errorf("Jobs m-snapshots-b*: %d, want the first backup's only", len(jobs))
		}
		// Put back as it was, for the steps that follow.
		if err := k8sClient.Get(ctx, clientKey(ns, "m-snapshots"), cj); err != nil {
			t.Fatal(err)
		}
		cj.Spec.JobTemplate.Spec.Template.Spec.HostPID = false
		cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = e2eHookImage
		if err := k8sClient.Update(ctx, cj); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("janitor", func(t *testing.T) {
		code, out, errOut := runPlugin(t, bin, editor, "janitor", "m", "wipe-crawler-data", "-n", ns, "--workspace", "nova", "--crawler", "zuul")
		if code != 2 || !strings.Contains(errOut, `the config the API mounts has no workspace "nova"; its workspaces: "demo"`) {
			t.Fatalf("janitor on a workspace the config lacks: exit %d\n%s%s", code, out, errOut)
		}
		if jobs := jobsOf(t, ns, "m-janitor-"); len(jobs) > 0 {
			t.Fatal("a refused janitor made a Job")
		}
		commands := documented(t, "maintenance.md", "janitor", ns)
		if len(commands) != 3 || strings.Join(commands[0], " ") != "janitor m update-idents -n "+ns {
			t.Fatalf("docs/maintenance.md prints %q, want update-idents first", commands)
		}
		for i, end := range []bool{false, true} {
			b := startPlugin(t, bin, editor, commands[0]...)
			b.until(t, "waiting for it to end")
			job := oneJob(t, ns, "m-janitor-", nil)
			c := job.Spec.Template.Spec.Containers[0]
			switch {
			case len(job.OwnerReferences) != 1 || job.OwnerReferences[0].UID != m.GetUID() || job.OwnerReferences[0].Kind != "Monocle" ||
				metav1.GetControllerOf(&job) != nil:
				t.Errorf("owners %+v: want the Monocle, not as controller", job.OwnerReferences)
			case job.Spec.TTLSecondsAfterFinished == nil || *job.Spec.TTLSecondsAfterFinished != 3600:
				t.Errorf("ttlSecondsAfterFinished %v", job.Spec.TTLSecondsAfterFinished)
			case job.Labels["controller-uid"] != "" || job.Spec.Template.Labels["app.kubernetes.io/instance"] != "m":
				t.Errorf("labels %v, template's %v", job.Labels, job.Spec.Template.Labels)
			case len(c.Env) != 1 || c.Env[0].ValueFrom.SecretKeyRef.Name != "m-elastic" || c.Env[0].ValueFrom.SecretKeyRef.Key != "monocle.url":
				t.Errorf("env %+v: want the writer's URL from m-elastic", c.Env)
			case strings.Join(c.Command[:3], " ") != "monocle janitor update-idents":
				t.Errorf("command %q", c.Command)
			}
			endJob(t, ns, job.Name, end)
			code := b.exit(t)
			if end && (code != 0 || !strings.Contains(b.out.String(), "monocle janitor update-idents succeeded")) ||
				!end && (code != 1 || !strings.Contains(b.out.String(), "the janitor failed: marked by the test")) {
				t.Fatalf("run %d: exit %d", i, code)
			}
			if i == 1 && !strings.Contains(b.out.String(), "ran this command before: deleting it to run it again") {
				t.Error("the second run did not replace the first's Job")
			}
		}
		// The page's other commands, each its own Job, run with the
		// crawler stopped (Monocle 1.11.2 README.md:621-629 stops it around
		// wipe-crawler-data; src/Macroscope/Worker.hs:212-213 commits the
		// crawler's own date over set-crawler-commit-date's): recorded on
		// the Monocle, the Job's UID in the record, put back at the end.
		for _, args := range commands[1:] {
			b := startPlugin(t, bin, editor, args...)
			b.until(t, "Stopping the crawler first (spec.crawler.enabled: false")
			var job batchv1.Job
			for deadline := time.Now().Add(time.Minute); job.Name == ""; time.Sleep(200 * time.Millisecond) {
				d.sync("m")
				for _, j := range jobsOf(t, ns, "m-janitor-") {
					if !jobEnded(j) {
						job = j
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("%q: no Job after a minute:\n%s", args, b.out.String())
				}
			}
			if got := strings.Join(job.Spec.Template.Spec.Containers[0].Command[:3], " "); got != "monocle janitor "+args[2] {
				t.Fatalf("%q: the Job runs %q", args, got)
			}
			if err := k8sClient.Get(ctx, clientKey(ns, "m-crawler"), &appsv1.Deployment{}); nestedOr(d.monocle("m").Object, "spec", "crawler", "enabled") != false || !apierrors.IsNotFound(err) {
				t.Errorf("%q: the Job runs while the crawler is not stopped", args)
			}
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
				rec, err := restorerecord.DecodeJanitor(d.monocle("m").GetAnnotations()[restorerecord.JanitorAnnotation])
				if err == nil && rec.JobUID == string(job.UID) && rec.Job == job.Name && rec.MonocleUID == string(m.GetUID()) && rec.CrawlerEnabled != nil && *rec.CrawlerEnabled {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%q: the record does not name Job %s: %v", args, job.UID, err)
				}
			}
			endJob(t, ns, job.Name, true)
			if code := b.exit(t); code != 0 || !strings.Contains(b.out.String(), "Crawler put back as it was (spec.crawler.enabled: true)") {
				t.Fatalf("%q: exit %d", args, code)
			}
			if nestedOr(d.monocle("m").Object, "spec", "crawler", "enabled") != true || d.monocle("m").GetAnnotations()[restorerecord.JanitorAnnotation] != "" {
				t.Fatalf("%q: the crawler is not put back", args)
			}
			d.converge("m")
		}

		// Interrupted while it waits for the crawler (no sync answers), the
		// crawler stays stopped; the same command resumes and puts it back.
		b := startPlugin(t, bin, editor, commands[1]...)
		b.until(t, "Waiting until no crawler pod runs.")
		if err := b.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := b.exit(t); code != 2 || !strings.Contains(b.out.String(), "The crawler stays stopped") ||
			nestedOr(d.monocle("m").Object, "spec", "crawler", "enabled") != false {
			t.Fatalf("interrupted: exit %d", code)
		}
		b = startPlugin(t, bin, editor, commands[1]...)
		b.until(t, "Resuming monocle janitor wipe-crawler-data")
		job := oneJob(t, ns, "m-janitor-", func() {
			d.sync("m")
			for _, j := range jobsOf(t, ns, "m-janitor-") {
				if jobEnded(j) {
					deleteEnded(t, j)
				}
			}
		})
		endJob(t, ns, job.Name, true)
		if code := b.exit(t); code != 0 || nestedOr(d.monocle("m").Object, "spec", "crawler", "enabled") != true ||
			d.monocle("m").GetAnnotations()[restorerecord.JanitorAnnotation] != "" {
			t.Fatalf("resumed: exit %d, the crawler not put back", code)
		}
		d.converge("m")

		// A record it cannot check is refused, nothing applied; the
		// printed command removes it.
		mon := d.monocle("m")
		mon.SetAnnotations(map[string]string{restorerecord.JanitorAnnotation: `{"monocleUID":"x"}`})
		if err := k8sClient.Update(ctx, mon); err != nil {
			t.Fatal(err)
		}
		rv := d.monocle("m").GetResourceVersion()
		code, out, errOut = runPlugin(t, bin, editor, commands[1]...)
		if code != 2 || !strings.Contains(errOut, "nothing of it is applied") || d.monocle("m").GetResourceVersion() != rv {
			t.Fatalf("%q on a forged record: exit %d\n%s%s", commands[1], code, out, errOut)
		}
		remove := between(t, errOut, "Remove it, ", ", and set")
		if u := startShell(t, editor, bin, remove); u.exit(t) != 0 || d.monocle("m").GetAnnotations()[restorerecord.JanitorAnnotation] != "" {
			t.Fatalf("%s did not remove the record", remove)
		}
	})

	t.Run("restore", func(t *testing.T) {
		const snapshot = "monocle-20261130-030000"
		before := routineSpec(t, d)
		rv := d.monocle("m").GetResourceVersion()
		restore := documented(t, "snapshots.md", "restore", ns)
		if len(restore) != 3 || !slices.Equal(restore[0], []string{"restore", "m", "-n", ns, "--snapshot", snapshot, "--dry-run"}) ||
			!slices.Equal(restore[1], restore[0][:6]) || !slices.Equal(restore[2][:5], []string{"restore", "m", "-n", ns, "--undo"}) {
			t.Fatalf("docs/snapshots.md prints %q", restore)
		}
		code, out, errOut := runPlugin(t, bin, editor, restore[0]...)
		if code != 0 || !strings.Contains(out, `"spec":{"api":{"replicas":0},"crawler":{"enabled":false},"elasticsearch":{"snapshots":{"suspend":true}}}`) ||
			!strings.Contains(out, `"spec":{"api":{"replicas":2},"crawler":{"enabled":true},"elasticsearch":{"snapshots":{"suspend":null}}}}`) ||
			!strings.Contains(out, "kind: Job") {
			t.Fatalf("restore --dry-run: exit %d\n%s%s", code, out, errOut)
		}
		if d.monocle("m").GetResourceVersion() != rv || len(jobsOf(t, ns, "m-restore-")) > 0 {
			t.Fatal("restore --dry-run changed the Monocle, or made a Job")
		}

		// restore up to the Job, then update-idents, then the Monocle
		// put back as it was once they complete; and once the restore
		// fails. The record names this Monocle and the Job at each step.
		for _, succeed := range []bool{true, false} {
			b := startPlugin(t, bin, editor, restore[1]...)
			b.until(t, "2/5 Waiting until no pod")
			stopped := routineSpec(t, d)
			if !jsonEqual(stopped["api"], map[string]any{"replicas": int64(0)}) || !jsonEqual(stopped["crawler"], map[string]any{"enabled": false}) ||
				nestedOr(d.monocle("m").Object, "spec", "elasticsearch", "snapshots", "suspend") != true {
				t.Fatalf("while restoring: %v", stopped)
			}
			if rec := record(t, d, restorerecord.Stopping, ""); rec.MonocleUID != string(m.GetUID()) || rec.Repository != "monocle" || rec.Snapshot != snapshot {
				t.Errorf("the record while stopping: %s", rec.Encode())
			}
			job := oneJob(t, ns, "m-restore-", func() { d.sync("m") })
			if cj := (&batchv1.CronJob{}); k8sClient.Get(ctx, clientKey(ns, "m-snapshots"), cj) != nil || !*cj.Spec.Suspend {
				t.Error("the restore Job was created before the snapshots were suspended")
			}
			record(t, d, restorerecord.Restoring, string(job.UID))
			endJob(t, ns, job.Name, succeed)
			if succeed {
				// Then update-idents, for a snapshot holds the authors as
				// they were crawled (Monocle 1.11.2 src/Lentille.hs:151-161;
				// src/Monocle/Backend/Janitor.hs:29-55 rewrites them).
				idents := updateIdentsJob(t, ns)
				record(t, d, restorerecord.UpdatingIdents, string(idents.UID))
				if len(jobsOf(t, ns, "m-restore-")) > 0 {
					t.Error("the restore Job is kept once it succeeded")
				}
				endJob(t, ns, idents.Name, true)
			}
			code := b.exit(t)
			if after := routineSpec(t, d); !jsonEqual(after, before) || d.monocle("m").GetAnnotations()["monocle.monocle.change-metrics.io/restore"] != "" {
				t.Fatalf("after the restore: %v, want %v as before, and no annotation", after, before)
			}
			if kept := len(jobsOf(t, ns, "m-restore-")) == 1; succeed && (code != 0 || kept) || !succeed && (code != 1 || !kept) {
				t.Fatalf("restore (Job succeeded %t): exit %d, its Job kept %t", succeed, code, kept)
			}
			if succeed && !strings.Contains(b.out.String(), "4/5 Updating the idents: Job ") {
				t.Error("the restore did not say it updates the idents")
			}
			d.converge("m")
		}

		// Interrupted while waiting for the writers (no sync answers):
		// the printed commands resume and undo it.
		var resume, undo string
		for _, step := range []string{"resume", "undo"} {
			b := startPlugin(t, bin, editor, "restore", "m", "-n", ns, "--snapshot", snapshot, "--stop-timeout", "2m")
			b.until(t, "2/5 Waiting until no pod")
			if err := b.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := b.exit(t); code != 2 {
				t.Fatalf("interrupted: exit %d", code)
			}
			msg := b.out.String()
			resume = between(t, msg, "Resume it with ", ", or put")
			undo = between(t, msg, "back as it was with ", " (a restore")
			// Nothing else writes or snapshots meanwhile.
			for _, args := range [][]string{{"janitor", "m", "update-idents", "-n", ns}, {"backup", "m", "-n", ns}} {
				code, out, errOut := runPlugin(t, bin, editor, args...)
				if code != 2 || !strings.Contains(errOut, "a restore of Monocle m is under way") || !strings.Contains(errOut, "kubectl monocle restore m -n "+ns+" --undo") {
					t.Errorf("%q during a restore: exit %d\n%s%s", args, code, out, errOut)
				}
			}
			if step == "undo" {
				break
			}
			// Resumed: it goes on with the values recorded before, not
			// the stopped ones.
			r := startShell(t, editor, bin, resume)
			job := oneJob(t, ns, "m-restore-", func() { d.sync("m") })
			// While the restore Job runs, --undo is refused.
			if code, out, errOut := runPlugin(t, bin, editor, "restore", "m", "-n", ns, "--undo"); code != 2 || !strings.Contains(errOut, "the restore Job "+job.Name+" runs") {
				t.Errorf("--undo while the Job runs: exit %d\n%s%s", code, out, errOut)
			}
			endJob(t, ns, job.Name, true)
			endJob(t, ns, updateIdentsJob(t, ns).Name, true)
			if code := r.exit(t); code != 0 || !strings.Contains(r.out.String(), "Resuming the restore of snapshot "+snapshot) {
				t.Fatalf("%s: exit %d", resume, code)
			}
			if after := routineSpec(t, d); !jsonEqual(after, before) {
				t.Fatalf("after the resumed restore: %v, want %v", after, before)
			}
			d.converge("m")
		}
		wantResume := "kubectl monocle restore m -n " + ns + " --snapshot " + snapshot
		if resume != wantResume || undo != "kubectl monocle restore m -n "+ns+" --undo" {
			t.Errorf("printed %q and %q", resume, undo)
		}
		if u := startShell(t, editor, bin, undo); u.exit(t) != 0 {
			t.Fatalf("%s failed", undo)
		}
		if after := routineSpec(t, d); !jsonEqual(after, before) || d.monocle("m").GetAnnotations()["monocle.monocle.change-metrics.io/restore"] != "" {
			t.Fatalf("after %s: %v, want %v", undo, after, before)
		}

		// A record it cannot check (another repository, as a namespace
		// editor may write it) is refused, and nothing is applied; the
		// printed --undo with explicit values puts back what it says.
		forged := restorerecord.Record{MonocleUID: string(m.GetUID()), Snapshot: snapshot, Repository: "other", Location: "/usr/share/elasticsearch/snapshots/other",
			Step: restorerecord.Stopping, Before: &restorerecord.Before{}}
		mon := d.monocle("m")
		mon.SetAnnotations(map[string]string{restorerecord.Annotation: forged.Encode()})
		if err := k8sClient.Update(ctx, mon); err != nil {
			t.Fatal(err)
		}
		rv = d.monocle("m").GetResourceVersion()
		var explicit string
		for _, args := range [][]string{restore[1], {"restore", "m", "-n", ns, "--undo"}} {
			code, out, errOut := runPlugin(t, bin, editor, args...)
			if code != 2 || !strings.Contains(errOut, `it names repository "other"`) || !strings.Contains(errOut, "nothing of it is applied") {
				t.Fatalf("%q on a forged record: exit %d\n%s%s", args, code, out, errOut)
			}
			explicit = between(t, errOut, "before the restore: ", " (those are the defaults")
		}
		if d.monocle("m").GetResourceVersion() != rv || len(jobsOf(t, ns, "m-restore-")) > 0 {
			t.Fatal("a refused record changed the Monocle, or made a Job")
		}
		if explicit != "kubectl monocle "+strings.Join(restore[2], " ") {
			t.Errorf("printed %q, docs/snapshots.md %q", explicit, restore[2])
		}
		if u := startShell(t, editor, bin, explicit); u.exit(t) != 0 {
			t.Fatalf("%s failed", explicit)
		}
		want := map[string]any{"api": map[string]any{"replicas": int64(1)}, "crawler": map[string]any{"enabled": true},
			"snapshots": map[string]any{"schedule": "0 3 * * *", "keep": int64(7), "suspend": false}}
		if after := routineSpec(t, d); !jsonEqual(after, want) || d.monocle("m").GetAnnotations()[restorerecord.Annotation] != "" {
			t.Fatalf("after %s: %v, want %v", explicit, after, want)
		}
	})
}

// deleteEnded deletes an ended Job of an earlier run.
func deleteEnded(t *testing.T, j batchv1.Job) {
	t.Helper()
	if err := k8sClient.Delete(context.Background(), &j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// record waits, at most a minute, for the restore's record on the Monocle
// m to be at step, naming the Job of UID jobUID, and gives it: read as the
// hook reads it.
func record(t *testing.T, d *driver, step restorerecord.Step, jobUID string) restorerecord.Record {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		raw := d.monocle("m").GetAnnotations()[restorerecord.Annotation]
		rec, err := restorerecord.Decode(raw)
		if err == nil && rec.Step == step && rec.JobUID == jobUID {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, the record is not at step %s with Job UID %q: %q (%v)", step, jobUID, raw, err)
		}
	}
}

// updateIdentsJob waits for the update-idents Job a restore creates (the
// janitor's, running) and gives it.
func updateIdentsJob(t *testing.T, ns string) batchv1.Job {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		for _, j := range jobsOf(t, ns, "m-janitor-") {
			if c := j.Spec.Template.Spec.Containers[0]; !jobEnded(j) && strings.Join(c.Command[:3], " ") == "monocle janitor update-idents" {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("after a minute, no update-idents Job runs")
		}
	}
}

// documented are the kubectl monocle commands of a docs page's code
// blocks that start with verb, as arguments, the page's placeholders (N,
// NS, W, C) replaced by the test's Monocle m, namespace ns, workspace
// demo and crawler zuul.
func documented(t *testing.T, page, verb, ns string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	var found [][]string
	inCode := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		words := strings.Fields(line)
		if !inCode || len(words) < 3 || words[0] != "kubectl" || words[1] != "monocle" || words[2] != verb {
			continue
		}
		args := words[2:]
		for i, w := range args {
			args[i] = map[string]string{"N": "m", "NS": ns, "W": "demo", "C": "zuul"}[w]
			if args[i] == "" {
				args[i] = w
			}
		}
		found = append(found, args)
	}
	if len(found) == 0 {
		t.Fatalf("docs/%s prints no kubectl monocle %s", page, verb)
	}
	return found
}

// between is what msg holds between from and to.
func between(t *testing.T, msg, from, to string) string {
	t.Helper()
	_, rest, ok := strings.Cut(msg, from)
	cmd, _, ok2 := strings.Cut(rest, to)
	if !ok || !ok2 {
		t.Fatalf("no %q...%q in:\n%s", from, to, msg)
	}
	return cmd
}

// startShell runs line, a command the plugin printed, in sh with the
// plugin on PATH as kubectl-monocle beside kubectl, as the editor.
func startShell(t *testing.T, kubeconfig, bin, line string) *background {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "kubectl-monocle")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+dir+":"+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
	return start(t, cmd)
}
