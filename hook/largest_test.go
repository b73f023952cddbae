package hook

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// syncBody is Sync through JSON, as /sync runs it.
func syncBody(t testing.TB) func([]byte) ([]byte, error) {
	return func(body []byte) ([]byte, error) {
		resp, err := Sync(decodeRequest(t, body), testEnv())
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}
}

// The largest Monocle the CRD admits (every list and map at its bound, read
// from the CRD) is applied whole; each of its children, with
// Metacontroller's last-applied copy, fits the API server's 256 KiB of
// annotations; its converged sync request fits the hook's body limit.
func TestLargestMonocle(t *testing.T) {
	crd, err := os.ReadFile("../crd/monocle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, err := testbodies.LargestRequest(crd, syncBody(t))
	if err != nil {
		t.Fatal(err)
	}
	req := decodeRequest(t, body)
	req.Size = len(body) // as /sync sets it
	resp, err := Sync(req, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	c := answerStatus{resp.Status}.Condition(condition.ConditionSpecApplied)
	if c.Status != "True" {
		t.Fatalf("SpecApplied %s %s: %.500s", c.Status, c.Reason, c.Message)
	}
	// Over half the body limit: the status says how close, and why.
	if want := fmt.Sprintf("note: the sync request is %d KiB, %d%% of the 4096 KiB the hook accepts: mostly config text, in 2 ConfigMaps", len(body)>>10, 100*len(body)/wire.MaxBodyBytes); !strings.Contains(c.Message, want) {
		t.Errorf("SpecApplied's message %q, want it to say %q", c.Message, want)
	}
	if len(resp.Children) != 14 {
		t.Errorf("%d children, want all 14 (with the update-idents Job, the snapshot CronJob, Elasticsearch's users and NetworkPolicy, the API's disruption budget)", len(resp.Children))
	}
	var raw struct {
		Children map[string]map[string]struct {
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"children"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	const annotationsLimit = 256 << 10 // TotalAnnotationSizeLimitB: keys and values
	largest, largestName := 0, ""
	for _, objs := range raw.Children {
		for _, o := range objs {
			size := 0
			for k, v := range o.Metadata.Annotations {
				size += len(k) + len(v)
			}
			if size > largest {
				largest, largestName = size, o.Metadata.Name
			}
			if size > annotationsLimit {
				t.Errorf("%s: %d bytes of annotations, over the API server's %d", o.Metadata.Name, size, annotationsLimit)
			}
			t.Logf("%s: %d bytes of annotations", o.Metadata.Name, size)
		}
	}
	if len(body) > wire.MaxBodyBytes {
		t.Errorf("the converged sync request is %d bytes, over the hook's %d", len(body), wire.MaxBodyBytes)
	}
	t.Logf("converged sync request %d bytes (limit %d); largest annotations %d bytes (%s, limit %d)", len(body), wire.MaxBodyBytes, largest, largestName, annotationsLimit)
}
