package hook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook/wire"
)

// Render prints exactly the children /sync answers for each example as a
// new parent.
func TestRenderIsSync(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			monocle, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// The Secret an example's comment asks you to create: without
			// it, the API and the crawler are not made.
			monocle = append(monocle, "\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: es-url}\ndata: {url: aHR0cDovL2VzLmV4YW1wbGUuY29tOjkyMDA=}\n"...)
			rendered, _, err := Render(monocle, testEnv())
			if err != nil {
				t.Fatal(err)
			}

			objs, err := readObjects(monocle)
			if err != nil {
				t.Fatal(err)
			}
			req, err := objs.request(objs.monocles[0])
			if err != nil {
				t.Fatal(err)
			}
			// What /sync answers is Sync's bytes (server's TestHTTPSyncFixture).
			answer := syncJSON(t, &wire.SyncRequest{Parent: req.Parent, Related: req.Related})
			var a struct{ Children []json.RawMessage }
			if err := json.Unmarshal(answer, &a); err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			for _, c := range a.Children {
				y, err := yaml.JSONToYAML(c)
				if err != nil {
					t.Fatal(err)
				}
				want.WriteString("---\n")
				want.Write(y)
			}
			if len(a.Children) < 5 || !bytes.Equal(rendered, want.Bytes()) {
				t.Errorf("render differs from /sync:\n%s", firstDiff(want.String(), string(rendered)))
			}
		})
	}
}
