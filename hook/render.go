package hook

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Render answers a Monocle object, as YAML or JSON, the way /sync answers it
// as a new parent (no children yet), and prints the children as YAML
// documents: to review them, or to apply them without Metacontroller.
func Render(monocle []byte, env Env) ([]byte, error) {
	parentJSON, err := yaml.YAMLToJSON(monocle)
	if err != nil {
		return nil, fmt.Errorf("reading the Monocle: %w", err)
	}
	body, err := json.Marshal(map[string]json.RawMessage{"parent": parentJSON})
	if err != nil {
		return nil, err
	}
	var req SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("reading the Monocle: %w", err)
	}
	resp, err := Sync(&req, env)
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
