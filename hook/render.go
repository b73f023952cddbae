package hook

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Render answers the one Monocle of a file (YAML or JSON documents) the way
// /sync answers it as a new parent (no children yet, the ConfigMaps and
// Secrets of the file as its related objects), and prints the children as
// YAML documents: to review them, or to apply them without Metacontroller.
func Render(data []byte, env Env) ([]byte, error) {
	objs, err := readObjects(data)
	if err != nil {
		return nil, fmt.Errorf("reading the Monocle: %w", err)
	}
	if len(objs.monocles) != 1 {
		return nil, fmt.Errorf("the file holds %d Monocles, not one", len(objs.monocles))
	}
	req, err := objs.request(objs.monocles[0])
	if err != nil {
		return nil, err
	}
	req.Children = Children{}
	resp, err := Sync(req, env)
	if err != nil {
		return nil, err
	}
	// Objects the spec names cannot be looked up here: only a spec the
	// hook cannot honour at all is an error.
	if c := resp.Status.Refused(); c != nil {
		return nil, fmt.Errorf("%s: %s", c.Reason, c.Message)
	}
	// Through JSON, as /sync sends them, then YAML.
	answer, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	var decoded struct{ Children []json.RawMessage }
	if err := json.Unmarshal(answer, &decoded); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, child := range decoded.Children {
		doc, err := yaml.JSONToYAML(child)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	return out.Bytes(), nil
}
