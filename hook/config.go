package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// defaultConfig is the seed operator's: one workspace, no crawlers.
const defaultConfig = "workspaces:\n  - name: demo\n    crawlers: []\n"

// identsHash hashes the idents of every workspace in a config.yaml. It names
// the update-idents Job, so only an idents change (not a comment, a crawler
// or a reformatting) runs the Job again.
func identsHash(configYAML string) (string, error) {
	var config struct {
		Workspaces []struct {
			Name   string `json:"name"`
			Idents any    `json:"idents"`
		} `json:"workspaces"`
	}
	if err := yaml.Unmarshal([]byte(configYAML), &config); err != nil {
		return "", fmt.Errorf("%s is not valid: %w", configFile, err)
	}
	// Re-encoding the decoded values gives a canonical form (sorted keys).
	canonical, err := json.Marshal(config.Workspaces)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])[:identsHashLength], nil
}

// hashData hashes a string or byte map in key order, for pod template
// annotations that roll the pods when the map changes.
func hashData[V ~string | ~[]byte](m map[string]V) string {
	h := sha256.New()
	for _, k := range sortedKeys(m) {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(m[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
