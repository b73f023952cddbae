package main

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// The seed's operator (change-metrics/monocle-operator, its last commit,
// built outside the repo), measured in Metacontroller's place as the
// reference: with its own CRD (-crds: its config/crd/bases file and
// Metacontroller's, whose CompositeController only names the child kinds to
// watch), it makes for each Monocle the Elasticsearch Service and
// StatefulSet, the API's Secret, ConfigMap, Service and Deployment, and the
// crawler's Deployment, then writes a status of the three components.
const (
	seedName     = "seed-operator"
	seedChildren = 7
)

// seedSpec is the seed's sample Monocle's spec.
func seedSpec() map[string]any {
	return map[string]any{"publicURL": "https://my-monocle-instance.com"}
}

// seedStatusWritten: the seed writes the status after every child exists.
func seedStatusWritten(u *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedString(u.Object, "status", "monocle-elastic")
	return v != ""
}
