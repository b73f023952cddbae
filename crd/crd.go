// Package crd holds the Monocle CRD, which controller-gen writes from
// api/v1alpha1 (`make manifests`). The hook reads the spec's bounds from
// it, so that a Monocle stored before a bound existed is held to it too.
package crd

import _ "embed"

// YAML is crd/monocle.yaml, as applied to clusters.
//
//go:embed monocle.yaml
var YAML []byte
