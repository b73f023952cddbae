package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	k8stesting "k8s.io/client-go/testing"
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
			dyn := fakeCluster(t, tc.objects...)
			code, stdout, stderr := runWith(&clients{dyn: dyn}, tc.args...)
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
