// Package v1alpha1 is the Monocle API: the Go types of the Monocle custom
// resource. Their comments and kubebuilder markers are the CRD's schema:
// `make manifests` generates crd/monocle.yaml from them with controller-gen.
// Kubernetes' own types (tolerations, affinity, resources) are mirrored here
// with bounds, so that one hook can serve every Monocle in a cluster; core.go
// converts them back.
//
// +groupName=monocle.monocle.change-metrics.io
package v1alpha1
