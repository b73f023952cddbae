package testbodies

import (
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// Release010 is what monocle-hook 0.1.0 made of examples/monocle-snapshots.yaml
// (hook/testdata/v0.1.0/snapshots-demo.yaml, read at path): its children, one
// object each, as render printed them. The upgrade tests start from it.
func Release010(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var objs []map[string]any
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, err
		}
		if obj != nil {
			objs = append(objs, obj)
		}
	}
	return objs, nil
}
