package hook

import (
	"fmt"
	"slices"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Customize answers Metacontroller's customize hook: the related objects
// each sync of this Monocle needs. They are the instance's Elasticsearch
// volumes (to report their size and judge growth) and the user-owned
// ConfigMap and Secrets the spec names (a change to any of them then
// triggers a sync, which rolls the pods). Metacontroller caches the answer
// per parent generation, so a spec edit asks again.
//
// Every rule names its objects and the parent's namespace: Metacontroller
// v4.17.2 matches each event of a related kind against every parent's rules
// (customize/manager.go, findRelatedParents), where a label selector is
// built anew per parent, and a rule by names without a namespace lists the
// whole cluster's objects of its kind at each sync (GetRelatedObjects,
// selectByNamespaceAndNames with an empty namespace).
func Customize(req *wire.CustomizeRequest) (*wire.CustomizeResponse, error) {
	if req == nil || req.Parent == nil || req.Parent.Metadata.Name == "" {
		return nil, fmt.Errorf("%w: no parent", ErrBadRequest)
	}
	namespace := req.Parent.Metadata.Namespace
	n := instance.For(req.Parent.Metadata.Name)
	rules := []wire.RelatedRule{{
		APIVersion: "v1",
		Resource:   "persistentvolumeclaims",
		Namespace:  namespace,
		Names:      []string{n.DataClaim(), n.SnapshotsClaim()},
	}}
	// A spec that does not decode names nothing; the sync reports it.
	spec, _ := decodeSpec(req.Parent.Spec)
	if spec.ConfigMapRef != nil && spec.ConfigMapRef.Name != "" {
		rules = append(rules, wire.RelatedRule{APIVersion: "v1", Resource: "configmaps", Namespace: namespace, Names: []string{spec.ConfigMapRef.Name}})
	}
	var secrets []string
	if spec.SecretRef != nil && spec.SecretRef.Name != "" {
		secrets = append(secrets, spec.SecretRef.Name)
	}
	if ref := spec.Elasticsearch.URLSecretRef; ref != nil && ref.Name != "" && !slices.Contains(secrets, ref.Name) {
		secrets = append(secrets, ref.Name)
	}
	if len(secrets) > 0 {
		rules = append(rules, wire.RelatedRule{APIVersion: "v1", Resource: "secrets", Namespace: namespace, Names: secrets})
	}
	return &wire.CustomizeResponse{RelatedResources: rules}, nil
}
