package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/internal/instance"
)

// objects are Monocles and the ConfigMaps and Secrets beside them, read
// from YAML documents or a List (kubectl get -o yaml), for render and check
// to answer the Monocles offline as /sync would.
type objects struct {
	monocles   []json.RawMessage
	configMaps map[string]*corev1.ConfigMap // by namespace/name
	secrets    map[string]*corev1.Secret
}

// readObjects reads YAML documents, Lists among them; objects of other
// kinds are ignored.
func readObjects(data []byte) (*objects, error) {
	objs := &objects{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if string(j) != "null" {
			if err := objs.add(j); err != nil {
				return nil, err
			}
		}
	}
	return objs, nil
}

func (objs *objects) add(doc json.RawMessage) error {
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
	case "List", Kind + "List":
		for _, item := range head.Items {
			if err := objs.add(item); err != nil {
				return err
			}
		}
	case Kind:
		objs.monocles = append(objs.monocles, doc)
	case "ConfigMap":
		var cm corev1.ConfigMap
		if err := json.Unmarshal(doc, &cm); err != nil {
			return fmt.Errorf("decoding ConfigMap %s: %w", key, err)
		}
		objs.configMaps[key] = &cm
	case "Secret":
		var s corev1.Secret
		if err := json.Unmarshal(doc, &s); err != nil {
			return fmt.Errorf("decoding Secret %s: %w", key, err)
		}
		objs.secrets[key] = &s
	}
	return nil
}

// request is the sync request for a Monocle of objs: the generated Secret
// and ConfigMap as its observed children when they are there, and every
// ConfigMap and Secret of its namespace as related objects (Sync reads only
// those the spec names).
func (objs *objects) request(monocle json.RawMessage) (*SyncRequest, error) {
	var req SyncRequest
	if err := json.Unmarshal([]byte(`{"parent":`+string(monocle)+`}`), &req); err != nil {
		return nil, fmt.Errorf("reading the Monocle: %w", err)
	}
	ns, n := req.Parent.Metadata.Namespace, instance.For(req.Parent.Metadata.Name)
	req.Children = Children{ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}}
	if cm := objs.configMaps[ns+"/"+n.API]; cm != nil {
		req.Children.ConfigMaps[n.API] = cm
	}
	if s := objs.secrets[ns+"/"+n.API]; s != nil {
		req.Children.Secrets[n.API] = s
	}
	req.Related = Related{ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}}
	for key, cm := range objs.configMaps {
		if strings.HasPrefix(key, ns+"/") {
			req.Related.ConfigMaps[key] = cm
		}
	}
	for key, s := range objs.secrets {
		if strings.HasPrefix(key, ns+"/") {
			req.Related.Secrets[key] = s
		}
	}
	return &req, nil
}
