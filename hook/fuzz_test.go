package hook

import (
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
)

// FuzzSyncRequest feeds arbitrary bodies through the decoder and Sync, as
// /sync does: no panic, and every answer is valid.
func FuzzSyncRequest(f *testing.F) {
	for _, name := range fixtureNames(f) {
		f.Add(readFixture(f, name))
	}
	f.Add([]byte(`{"parent":{"kind":"Monocle","metadata":{"name":"a"},"spec":{"storageSize":"1e3","publicURL":"http://x"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req wire.SyncRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		resp, err := Sync(&req, testEnv())
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("Sync: %v", err)
			}
			return
		}
		checkPrinted(t, resp.Status.Conditions)
		b, err := json.Marshal(resp)
		if err != nil {
			t.Fatalf("encoding: %v", err)
		}
		a := decodeAnswer(t, b)
		seen := map[string]bool{}
		for _, c := range a.Children {
			kind, _ := c["kind"].(string)
			md, _ := c["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			if kind == "" || c["apiVersion"] == nil {
				t.Fatalf("child without kind or apiVersion: %v", c)
			}
			if seen[kind+"/"+name] {
				t.Fatalf("%s/%s answered twice", kind, name)
			}
			seen[kind+"/"+name] = true
			// A child answered as last applied keeps whatever name it has;
			// the names the hook makes must be valid.
			// A child answered as last applied repeats what the API server
			// stored (and so validated): only the hook's own must be checked.
			if lastAppliedAnswer(resp) {
				continue
			}
			if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
				t.Fatalf("%s %q: %v", kind, name, errs)
			}
			labels, _ := md["labels"].(map[string]any)
			for k, v := range labels {
				s, _ := v.(string)
				if errs := validation.IsQualifiedName(k); len(errs) > 0 {
					t.Fatalf("label key %q: %v", k, errs)
				}
				if errs := validation.IsValidLabelValue(s); len(errs) > 0 {
					t.Fatalf("label %s=%q: %v", k, s, errs)
				}
			}
		}
	})
}

// lastAppliedAnswer: the spec was not honoured, so the children are the
// observed ones repeated, whatever names they came with.
func lastAppliedAnswer(resp *wire.SyncResponse) bool {
	return answerStatus{resp.Status}.Condition(condition.ConditionSpecApplied).Reason == condition.ReasonInvalidSpec
}

// FuzzSpec fuzzes a Monocle's name and spec through Sync, with and without
// observed children.
func FuzzSpec(f *testing.F) {
	f.Add("monocle-sample", `{"publicURL":"https://m.example.com","storageSize":"5Gi","image":"x:1"}`, false)
	f.Add("a", `{"monoclePublicURL":"http://localhost:8090","storageClassName":"fast"}`, true)
	f.Add("Bad_Name", `{"storageSize":"-1"}`, true)
	f.Add("snap", `{"elasticsearch":{"snapshots":{"schedule":"30 6-16/4 * * 1-5","timeZone":"Europe/Paris","keep":3,"storageSize":"2Gi"}}}`, true)
	f.Add("snap", `{"elasticsearch":{"snapshots":{"schedule":"TZ=","keep":3}}}`, false)
	f.Add("ext", `{"elasticsearch":{"url":"es.example:9200/"}}`, false)
	f.Add("ext", `{"elasticsearch":{"url":"http://es.example:9200"}}`, true)
	f.Add("ext", `{"elasticsearch":{"urlSecretRef":{"name":"es","key":"url"}}}`, false)
	observed := fixture(f, "sync-v1-all-ready-job-complete").Children
	f.Fuzz(func(t *testing.T, name, spec string, withChildren bool) {
		req := &wire.SyncRequest{Parent: &wire.Parent{Kind: Kind, Spec: json.RawMessage(spec)}}
		req.Parent.Metadata.Name = name
		if !json.Valid(req.Parent.Spec) {
			req.Parent.Spec = nil
		}
		if withChildren {
			req.Children = observed
		}
		resp, err := Sync(req, testEnv())
		if err != nil {
			if name == "" && errors.Is(err, ErrBadRequest) {
				return
			}
			t.Fatalf("Sync: %v", err)
		}
		checkPrinted(t, resp.Status.Conditions)
		b, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		a := decodeAnswer(t, b)
		if lastAppliedAnswer(resp) {
			if len(a.Children) != 0 && !withChildren {
				t.Fatalf("a bad spec with no children answered %d", len(a.Children))
			}
			return
		}
		checkAnswer(t, name, a)
	})
}
