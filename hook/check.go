package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Refusal is a Monocle this hook would not apply in full, and why.
type Refusal struct {
	Namespace, Name, Reason, Message string
}

func (r Refusal) String() string {
	return fmt.Sprintf("%s/%s: %s: %s", r.Namespace, r.Name, r.Reason, r.Message)
}

// Check answers every Monocle in objects (the output of `kubectl get
// monocles,configmaps,secrets -A -o yaml`: a List, or YAML documents) the
// way /sync would, with the generated and referenced ConfigMaps and Secrets
// found beside it, and lists those whose SpecApplied would be False: what
// an upgrade to this hook would hold. Objects of other kinds are ignored.
func Check(objects []byte, env Env) ([]Refusal, error) {
	var monocles []json.RawMessage
	configMaps := map[string]*corev1.ConfigMap{} // by namespace/name
	secrets := map[string]*corev1.Secret{}
	var add func(doc json.RawMessage) error
	add = func(doc json.RawMessage) error {
		var head struct {
			Kind     string            `json:"kind"`
			Items    []json.RawMessage `json:"items"`
			Metadata struct{ Namespace, Name string }
		}
		if err := json.Unmarshal(doc, &head); err != nil {
			return err
		}
		key := head.Metadata.Namespace + "/" + head.Metadata.Name
		switch head.Kind {
		case "List", "MonocleList":
			for _, item := range head.Items {
				if err := add(item); err != nil {
					return err
				}
			}
		case Kind:
			monocles = append(monocles, doc)
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := json.Unmarshal(doc, &cm); err != nil {
				return fmt.Errorf("decoding ConfigMap %s: %w", key, err)
			}
			configMaps[key] = &cm
		case "Secret":
			var s corev1.Secret
			if err := json.Unmarshal(doc, &s); err != nil {
				return fmt.Errorf("decoding Secret %s: %w", key, err)
			}
			secrets[key] = &s
		}
		return nil
	}
	for _, doc := range bytes.Split(objects, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if string(j) == "null" {
			continue
		}
		if err := add(j); err != nil {
			return nil, err
		}
	}

	var refusals []Refusal
	for _, doc := range monocles {
		var req SyncRequest
		if err := json.Unmarshal([]byte(`{"parent":`+string(doc)+`}`), &req); err != nil {
			return nil, err
		}
		md := req.Parent.Metadata
		ns, n := md.Namespace, namesFor(md.Name)
		req.Children = Children{ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}}
		if cm := configMaps[ns+"/"+n.api]; cm != nil {
			req.Children.ConfigMaps[n.api] = cm
		}
		if s := secrets[ns+"/"+n.api]; s != nil {
			req.Children.Secrets[n.api] = s
		}
		// Related: every ConfigMap and Secret of the namespace; Sync reads
		// only those the spec names.
		req.Related = Related{ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}}
		for key, cm := range configMaps {
			if strings.HasPrefix(key, ns+"/") {
				req.Related.ConfigMaps[key] = cm
			}
		}
		for key, s := range secrets {
			if strings.HasPrefix(key, ns+"/") {
				req.Related.Secrets[key] = s
			}
		}
		resp, err := Sync(&req, env)
		if err != nil {
			refusals = append(refusals, Refusal{ns, md.Name, "BadObject", err.Error()})
			continue
		}
		for _, c := range resp.Status.Conditions {
			if c.Type == ConditionSpecApplied && c.Status != "True" {
				refusals = append(refusals, Refusal{ns, md.Name, c.Reason, c.Message})
			}
		}
	}
	slices.SortFunc(refusals, func(a, b Refusal) int { return strings.Compare(a.String(), b.String()) })
	return refusals, nil
}
