#!/usr/bin/env bash
# Builds (once) the control-plane binaries the integration tests run:
# etcd, kube-apiserver, kube-controller-manager, kubectl and helm, from the Go
# module proxy into a per-version cache folder outside the repo (cache.sh).
#
# Usage: export KUBEBUILDER_ASSETS=$(tools/assets.sh)
# stdout carries only the folder's absolute path; progress goes to stderr.
set -euo pipefail

K8S_VERSION=v1.37.2  # must match tools/kube/go.mod
ETCD_VERSION=v3.6.16 # must match tools/etcd/go.mod
HELM_VERSION=v3.22.0 # must match tools/kube/go.mod

# An existing envtest folder (e.g. set by CI or the Makefile) wins.
if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/kube-apiserver" && -x "$KUBEBUILDER_ASSETS/etcd" ]]; then
	cd "$KUBEBUILDER_ASSETS" && pwd
	exit 0
fi

tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$tools/cache.sh"
cache_folder assets "assets-k8s-$K8S_VERSION-etcd-$ETCD_VERSION"

# Without these the binaries report v0.0.0 and clients warn about skew.
major=${K8S_VERSION#v}; major=${major%%.*}
minor=${K8S_VERSION#v*.}; minor=${minor%%.*}
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

build etcd go build -C "$tools/etcd" -ldflags "-s -w" -o "$tmp/etcd" .
# The three Kubernetes binaries in one go build: their links (single-threaded
# for a large part) run side by side and overlap the compiling. client-go's
# closure in tools/kube is of e2e/go.mod's versions: `make lint` has
# already compiled it.
build "kubectl kube-apiserver kube-controller-manager" go build -C "$tools/kube" -ldflags "$k8s_ldflags" -o "$tmp/" \
	./cmd/kubectl ./cmd/kube-apiserver ./cmd/kube-controller-manager
# helm is a tool of tools/kube (pinned there): built against the same
# Kubernetes modules as the binaries above, it compiles little of its own.
# The -X flags are those of helm's Makefile: without them `helm version`
# says "v3.22" and `helm template` assumes Kubernetes v1.20 (1.37 comes
# from the k8s.io/client-go v0.37 that helm v3.22.0 uses).
helm_ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
for pkg in pkg/chartutil pkg/lint/rules; do
	helm_ldflags+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=37"
done
build helm go build -C "$tools/kube" -ldflags "$helm_ldflags" -o "$tmp/helm" helm.sh/helm/v3/cmd/helm

echo "$dir"
