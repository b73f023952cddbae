package hook

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// objects are Monocles and the ConfigMaps and Secrets beside them, read
// from YAML documents or a List (kubectl get -o yaml), for render and check
// to answer the Monocles offline as /sync would.
type objects struct {
	monocles []json.RawMessage
	// The ConfigMaps and Secrets by namespace, each keyed namespace/name
	// as /sync's related objects are.
	related map[string]*wire.Related
}

// readObjects reads YAML documents, Lists among them; objects of other
// kinds are ignored.
func readObjects(data []byte) (*objects, error) {
	objs := &objects{related: map[string]*wire.Related{}}
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		// A document of comments only is null: an object of no kind.
		if err := objs.add(j); err != nil {
			return nil, err
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
		return decodeInto(objs.in(head.Metadata.Namespace).ConfigMaps, head.Kind, key, doc)
	case "Secret":
		return decodeInto(objs.in(head.Metadata.Namespace).Secrets, head.Kind, key, doc)
	}
	return nil
}

// in is the ConfigMaps and Secrets of a namespace.
func (objs *objects) in(namespace string) *wire.Related {
	if objs.related[namespace] == nil {
		objs.related[namespace] = &wire.Related{ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}}
	}
	return objs.related[namespace]
}

// decodeInto decodes doc, an object of that kind, into into[key].
func decodeInto[T any](into map[string]*T, kind, key string, doc json.RawMessage) error {
	obj := new(T)
	if err := json.Unmarshal(doc, obj); err != nil {
		return fmt.Errorf("decoding %s %s: %w", kind, key, err)
	}
	into[key] = obj
	return nil
}

// request is the sync request for a Monocle of objs: the generated Secrets
// (N-api, Elasticsearch's users N-elastic) and ConfigMap as its observed
// children when they are there, and every
// ConfigMap and Secret of its namespace as related objects (Sync reads only
// those the spec names).
func (objs *objects) request(monocle json.RawMessage) (*wire.SyncRequest, error) {
	var req wire.SyncRequest
	if err := json.Unmarshal([]byte(`{"parent":`+string(monocle)+`}`), &req); err != nil {
		return nil, fmt.Errorf("reading the Monocle: %w", err)
	}
	ns, n := req.Parent.Metadata.Namespace, instance.For(req.Parent.Metadata.Name)
	req.Related = *objs.in(ns)
	// nil when absent: observe skips a null child.
	req.Children = wire.Children{
		ConfigMaps: map[string]*corev1.ConfigMap{n.API: req.Related.ConfigMaps[ns+"/"+n.API]},
		Secrets:    map[string]*corev1.Secret{n.API: req.Related.Secrets[ns+"/"+n.API], n.Elastic: req.Related.Secrets[ns+"/"+n.Elastic]},
	}
	return &req, nil
}
