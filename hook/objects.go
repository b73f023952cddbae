package hook

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// objects are Monocles and the ConfigMaps and Secrets beside them, read
// from YAML or JSON documents or a List (kubectl get -o yaml|json), for
// render and check to answer the Monocles offline as /sync would.
//
// What reading them costs is bounded by the largest object, not by the
// input: a List's items are read one at a time, and a ConfigMap or Secret
// is kept as its text in the input (no copy) and decoded only when a
// Monocle references it. A tenant's namespace of many or large ConfigMaps
// then costs check -f its input and one object's decoding at a time
// (BENCHMARKS.md, TestCheckMemoryIsBounded).
type objects struct {
	monocles []json.RawMessage
	// sources are the ConfigMaps and Secrets by kind, namespace and name
	// (sourceKey), each as its text.
	sources map[string]source
}

// source is an object's text: JSON, or one item of a YAML List written as
// a sequence of one ("- apiVersion: v1\n  kind: ...").
type source struct {
	text []byte
	item bool
}

func sourceKey(kind, namespace, name string) string {
	return kind + " " + namespace + "/" + name
}

// readObjects reads YAML or JSON documents, Lists among them; objects of
// other kinds are ignored.
func readObjects(data []byte) (*objects, error) {
	objs := &objects{sources: map[string]source{}}
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		if err := objs.readDocument(doc); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// readDocument reads one document: a List's items one at a time (in JSON,
// or in YAML's block style as kubectl writes it: "items:" then each item
// starting with "- " at the line's start), anything else whole.
func (objs *objects) readDocument(doc []byte) error {
	head, items, err := splitList(doc)
	if err != nil {
		return err
	}
	if items == nil {
		j, err := toJSON(source{text: doc})
		if err != nil {
			return err
		}
		// A document of comments only is null: an object of no kind.
		return objs.add(j, source{text: j})
	}
	var list struct {
		Kind string `json:"kind"`
	}
	if j, err := toJSON(source{text: head}); err != nil || json.Unmarshal(j, &list) != nil {
		return fmt.Errorf("reading a List: %w", cmp.Or(err, errors.New("not an object")))
	}
	if list.Kind != "List" && list.Kind != Kind+"List" {
		// Not a List: an object of another kind with items, read whole.
		j, err := toJSON(source{text: doc})
		if err != nil {
			return err
		}
		return objs.add(j, source{text: doc})
	}
	for _, item := range items {
		j, err := toJSON(item)
		if err != nil {
			return err
		}
		if err := objs.add(j, item); err != nil {
			return err
		}
	}
	return nil
}

// splitList finds the items of a List document without decoding them:
// the document without its items (head, to read its kind) and each item's
// text, a slice of doc. items is nil for a document that is not of that
// shape, which is then read whole.
func splitList(doc []byte) (head []byte, items []source, err error) {
	if t := bytes.TrimSpace(doc); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return splitJSONList(doc)
	}
	itemAt := -1
	inItems := false
	flush := func(end int) {
		if inItems && itemAt >= 0 && end > itemAt {
			items = append(items, source{text: doc[itemAt:end], item: true})
		}
	}
	for i := 0; i < len(doc); {
		end := bytes.IndexByte(doc[i:], '\n')
		if end < 0 {
			end = len(doc)
		} else {
			end += i + 1
		}
		line := doc[i:end]
		switch {
		case !inItems && string(bytes.TrimRight(line, " \r\n")) == "items:":
			inItems, itemAt = true, -1
			head = append(head, doc[:i]...)
			head = append(head, "items: []\n"...)
		case inItems && (bytes.HasPrefix(line, []byte("- ")) || string(bytes.TrimRight(line, "\r\n")) == "-"):
			flush(i)
			itemAt = i
		case inItems && (len(bytes.TrimSpace(line)) == 0 || line[0] == '#'):
		case inItems && line[0] == ' ' && itemAt < 0:
			// Items indented ("items:\n  - ..."): not kubectl's shape.
			return nil, nil, nil
		case inItems && line[0] == ' ':
			// The item goes on.
		case inItems:
			// A key at the line's start: the items end.
			flush(i)
			inItems, itemAt = false, -1
			head = append(head, doc[i:]...)
			return head, items, nil
		}
		i = end
	}
	if !inItems {
		return nil, nil, nil
	}
	flush(len(doc))
	if items == nil {
		items = []source{}
	}
	return head, items, nil
}

// splitJSONList walks a JSON document's top-level object (doc is valid
// JSON): its kind is its head, each element of items an item.
func splitJSONList(doc []byte) (head []byte, items []source, err error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	bad := func(err error) ([]byte, []source, error) {
		return nil, nil, fmt.Errorf("reading a JSON document: %w", err)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad(cmp.Or(err, errors.New("not an object")))
	}
	fields := map[string]json.RawMessage{}
	found := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := tok.(string)
		if key != "items" {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return bad(err)
			}
			if key == "kind" {
				fields[key] = v
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			// items of another shape: read whole.
			return nil, nil, nil
		}
		found, items = true, []source{}
		for dec.More() {
			start := dec.InputOffset()
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return bad(err)
			}
			items = append(items, source{text: bytes.TrimLeft(doc[start:dec.InputOffset()], " \t\r\n,")})
		}
		if _, err := dec.Token(); err != nil {
			return bad(err)
		}
	}
	if !found {
		return nil, nil, nil
	}
	head, err = json.Marshal(fields)
	return head, items, err
}

// toJSON is a source's object in JSON.
func toJSON(s source) (json.RawMessage, error) {
	if t := bytes.TrimSpace(s.text); !s.item && len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		return t, nil
	}
	j, err := yaml.YAMLToJSON(s.text)
	if err != nil || !s.item {
		return j, err
	}
	var one []json.RawMessage
	if err := json.Unmarshal(j, &one); err != nil || len(one) != 1 {
		return nil, fmt.Errorf("reading a List's item: %w", cmp.Or(err, errors.New("not one item")))
	}
	return one[0], nil
}

// add reads one object: a Monocle is kept, a ConfigMap or Secret kept as
// its source; a List's items are read in turn.
func (objs *objects) add(doc json.RawMessage, src source) error {
	var head struct {
		Kind     string            `json:"kind"`
		Items    []json.RawMessage `json:"items"`
		Metadata struct{ Namespace, Name string }
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return err
	}
	switch head.Kind {
	case "List", Kind + "List":
		for _, item := range head.Items {
			if err := objs.add(item, source{text: item}); err != nil {
				return err
			}
		}
	case Kind:
		objs.monocles = append(objs.monocles, doc)
	case "ConfigMap", "Secret":
		objs.sources[sourceKey(head.Kind, head.Metadata.Namespace, head.Metadata.Name)] = src
	}
	return nil
}

// related decodes the ConfigMaps and Secrets of namespace ns named, as
// /sync's related objects, keyed namespace/name; those not there are left
// out.
func (objs *objects) related(ns string, configMaps, secrets []string) (wire.Related, error) {
	rel := wire.Related{ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}}
	for _, name := range configMaps {
		if err := decodeInto(objs, rel.ConfigMaps, "ConfigMap", ns, name); err != nil {
			return rel, err
		}
	}
	for _, name := range secrets {
		if err := decodeInto(objs, rel.Secrets, "Secret", ns, name); err != nil {
			return rel, err
		}
	}
	return rel, nil
}

// decodeInto decodes the object of that kind ns/name, if there is one,
// into into[ns/name].
func decodeInto[T any](objs *objects, into map[string]*T, kind, ns, name string) error {
	src, ok := objs.sources[sourceKey(kind, ns, name)]
	if !ok {
		return nil
	}
	j, err := toJSON(src)
	if err != nil {
		return fmt.Errorf("decoding %s %s/%s: %w", kind, ns, name, err)
	}
	obj := new(T)
	if err := json.Unmarshal(j, obj); err != nil {
		return fmt.Errorf("decoding %s %s/%s: %w", kind, ns, name, err)
	}
	into[ns+"/"+name] = obj
	return nil
}

// request is the sync request for a Monocle of objs: the generated Secrets
// (N-api, Elasticsearch's users N-elastic) and ConfigMap as its observed
// children when they are there, and the ConfigMaps and Secrets of its
// namespace that it references (References: all Sync reads) as related
// objects.
func (objs *objects) request(monocle json.RawMessage) (*wire.SyncRequest, error) {
	var req wire.SyncRequest
	if err := json.Unmarshal([]byte(`{"parent":`+string(monocle)+`}`), &req); err != nil {
		return nil, fmt.Errorf("reading the Monocle: %w", err)
	}
	cms, secrets, err := References(monocle)
	if err != nil {
		return nil, err
	}
	ns, n := req.Parent.Metadata.Namespace, instance.For(req.Parent.Metadata.Name)
	if req.Related, err = objs.related(ns, cms, secrets); err != nil {
		return nil, err
	}
	// nil when absent: observe skips a null child.
	req.Children = wire.Children{
		ConfigMaps: map[string]*corev1.ConfigMap{n.API: req.Related.ConfigMaps[ns+"/"+n.API]},
		Secrets:    map[string]*corev1.Secret{n.API: req.Related.Secrets[ns+"/"+n.API], n.Elastic: req.Related.Secrets[ns+"/"+n.Elastic]},
	}
	return &req, nil
}
