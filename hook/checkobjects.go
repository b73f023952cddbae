package hook

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// CheckObjects is Check on objects already read from the cluster (by
// kubectl-monocle check): the Monocles, each as the API server returns it
// in JSON, and the ConfigMaps and Secrets of their namespaces that they
// reference or the hook generates for them (N-api, N-elastic). Any other
// may be left out: Sync reads only those the spec names, so the answer is
// Check's on the whole namespace.
func CheckObjects(monocles []json.RawMessage, configMaps []*corev1.ConfigMap, secrets []*corev1.Secret, env Env) (Report, error) {
	objs := &objects{monocles: monocles, sources: map[string]source{}}
	for _, cm := range configMaps {
		if err := objs.keep("ConfigMap", cm.Namespace, cm.Name, cm); err != nil {
			return Report{}, err
		}
	}
	for _, s := range secrets {
		if err := objs.keep("Secret", s.Namespace, s.Name, s); err != nil {
			return Report{}, err
		}
	}
	return objs.check(env)
}

// keep keeps an object already read as its JSON.
func (objs *objects) keep(kind, namespace, name string, obj any) error {
	j, err := json.Marshal(obj)
	objs.sources[sourceKey(kind, namespace, name)] = source{text: j}
	return err
}

// References are the names of the ConfigMaps and Secrets of its namespace
// that a sync of the Monocle (its JSON, as the API server returns it)
// reads: those the hook generates for it (N-api, N-elastic) and those its
// spec names, as Customize asks Metacontroller for them.
func References(monocle json.RawMessage) (configMaps, secrets []string, err error) {
	var parent wire.Parent
	if err := json.Unmarshal(monocle, &parent); err != nil {
		return nil, nil, fmt.Errorf("reading the Monocle: %w", err)
	}
	n := instance.For(parent.Metadata.Name)
	configMaps, secrets = []string{n.API}, []string{n.API, n.Elastic}
	resp, err := Customize(&wire.CustomizeRequest{Parent: &parent})
	if err != nil {
		return nil, nil, err
	}
	for _, rule := range resp.RelatedResources {
		for _, name := range rule.Names {
			switch rule.Resource {
			case "configmaps":
				if !slices.Contains(configMaps, name) {
					configMaps = append(configMaps, name)
				}
			case "secrets":
				if !slices.Contains(secrets, name) {
					secrets = append(secrets, name)
				}
			}
		}
	}
	return configMaps, secrets, nil
}
