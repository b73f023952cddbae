package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

const withTokens = `
apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata: {name: m, namespace: ns}
spec:
  secretRef: {name: tokens}
  config: |
    workspaces:
      - name: ws
        crawlers:
          - name: github
            update_since: "2024-01-01"
            provider: {github_organization: org, github_token: GITHUB_TOKEN}
---
apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata: {name: plain, namespace: other}
`

const tokens = `
apiVersion: v1
kind: Secret
metadata: {name: tokens, namespace: ns}
data: {GITHUB_TOKEN: eA==}
`

// unrelated is n ConfigMaps and Secrets of ns that no Monocle references.
func unrelated(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: unrelated-%d, namespace: ns}\ndata: {big: %q}\n", i, strings.Repeat("x", 1000))
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: unrelated-%d, namespace: ns}\n", i)
	}
	return b.String()
}

// check names the Secret a Monocle references and lacks (exit 1), passes
// once it is there (exit 0), and reads each ConfigMap and Secret by name:
// it lists none.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		objects []string
		args    []string
		code    int
		want    []string
	}{
		{"missing", []string{withTokens, unrelated(20)}, []string{"check", "-n", "ns"}, 1, []string{
			"ns/m: ReferenceNotFound: ", `"tokens"`,
			"Monocles checked: 1; applied in full: 0; not: 1; rolled: 0",
		}},
		{"present", []string{withTokens, tokens, unrelated(20)}, []string{"check", "-n", "ns"}, 0, []string{
			"Monocles checked: 1; applied in full: 1; not: 0; rolled: 0",
		}},
		{"by name", []string{withTokens, tokens}, []string{"check", "-n", "ns", "m"}, 0, []string{
			"Monocles checked: 1; applied in full: 1; not: 0; rolled: 0",
		}},
		{"every namespace", []string{withTokens}, []string{"check", "-A"}, 1, []string{
			"ns/m: ReferenceNotFound",
			"Monocles checked: 2; applied in full: 1; not: 1; rolled: 0",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dyn := plugintest.FakeCluster(t, tc.objects...)
			code, stdout, stderr := runWith(&plugin.Clients{Dyn: dyn}, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout does not say %q:\n%s", w, stdout)
				}
			}
			var reads []string
			for _, a := range dyn.Actions() {
				r := a.GetResource().Resource
				if r != "configmaps" && r != "secrets" {
					continue
				}
				get, ok := a.(k8stesting.GetAction)
				if !ok {
					t.Errorf("%s %s: check reads ConfigMaps and Secrets only by name", a.GetVerb(), r)
					continue
				}
				reads = append(reads, r+" "+get.GetNamespace()+"/"+get.GetName())
			}
			slices.Sort(reads)
			for _, r := range reads {
				if strings.Contains(r, "unrelated") {
					t.Errorf("read %s, which no Monocle references", r)
				}
			}
			t.Logf("reads: %v", reads)
		})
	}
}

// check shows each child that runs pods whose pod template is not what
// the hook answers, as backup refuses its CronJob (the same drift): the
// fields, and how to put it back; the children as the hook answers them
// show none.
func TestCheckShowsDrift(t *testing.T) {
	ctx := context.Background()
	dyn := plugintest.FakeCluster(t, plugintest.SnapshotsMonocle)
	c := &plugin.Clients{Dyn: dyn}
	m, err := plugin.ReadMonocle(ctx, c, "ns", "m")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := plugin.Answer(ctx, c, m, elastic.DefaultHookImage)
	if err != nil {
		t.Fatal(err)
	}
	podChildren := 0
	for _, child := range resp.Children {
		obj := child.(metav1.Object)
		obj.SetNamespace("ns")
		if spec, _ := plugin.PodSpecOf(child); spec != nil {
			podChildren++
			switch o := child.(type) {
			case *batchv1.CronJob:
				plugintest.Plant(o)
			case *appsv1.Deployment:
				if o.Name == "m-api" {
					o.Spec.Template.Spec.HostPID = true
				}
			}
		}
	}
	if podChildren < 4 {
		t.Fatalf("the hook answers %d children that run pods", podChildren)
	}
	create := func(children []wire.Child) {
		for _, child := range children {
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(child)
			if err != nil {
				t.Fatal(err)
			}
			obj := &unstructured.Unstructured{Object: u}
			gvk := obj.GroupVersionKind()
			var resource string
			for _, k := range wire.ChildKinds {
				if k.Kind == gvk.Kind {
					resource = k.Resource
				}
			}
			gvr := gvk.GroupVersion().WithResource(resource)
			dyn.Resource(gvr).Namespace("ns").Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
			if _, err := dyn.Resource(gvr).Namespace("ns").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	create(resp.Children)
	code, stdout, stderr := runWith(c, "check", "-n", "ns", "--hook-image", elastic.DefaultHookImage)
	t.Logf("exit %d\n%s%s", code, stdout, stderr)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{
		"ns/m: ChildDrift: the CronJob m-snapshots is not what the hook answers: spec.jobTemplate.spec.template.spec.initContainers, ",
		"spec.jobTemplate.spec.template.spec.serviceAccountName differ",
		"kubectl -n ns delete cronjob m-snapshots (the hook makes it again at its next sync)",
		"ns/m: ChildDrift: the Deployment m-api is not what the hook answers: spec.template.spec.hostPID differ",
		"kubectl -n ns delete deployment m-api",
		"Monocles checked: 1; applied in full: 0; not: 1; rolled: 0",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check does not say %q", want)
		}
	}
	if n := strings.Count(stdout, ChildDrift); n != 2 {
		t.Errorf("%d children drift, want 2", n)
	}
	// As the hook answers them: none.
	resp, err = plugin.Answer(ctx, c, m, elastic.DefaultHookImage)
	if err != nil {
		t.Fatal(err)
	}
	for _, child := range resp.Children {
		child.(metav1.Object).SetNamespace("ns")
	}
	create(resp.Children)
	if code, stdout, stderr := runWith(c, "check", "-n", "ns", "--hook-image", elastic.DefaultHookImage); code != 0 || strings.Contains(stdout, ChildDrift) {
		t.Errorf("the hook's own children: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A Monocle whose spec the hook refuses has its children held as last
// applied, a copy anyone who may edit the child can write: the plugin
// builds nothing from that answer. backup and restore are refused, naming
// the reason (backup the command that says what to change), and change
// nothing; check reports the refusal and compares no child.
func TestCheckNoJobFromAHeldAnswer(t *testing.T) {
	c := plugintest.HeldAnswer(t)
	code, stdout, stderr := runWith(c, "check", "-n", "ns")
	if code != 1 || !strings.Contains(stdout, "ns/m: InvalidSpec: ") || strings.Contains(stdout, ChildDrift) {
		t.Errorf("check: exit %d\n%s%s", code, stdout, stderr)
	}
	plugintest.Unchanged(t, c)
}
