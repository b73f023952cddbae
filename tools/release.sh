#!/usr/bin/env bash
# Builds (once) the tools `make push` signs and describes the release with,
# cosign and cyclonedx-gomod, from the Go module proxy (tools/release pins
# them and their dependencies) into a per-version cache folder outside the
# repo (cache.sh).
#
# Usage: RELEASE_TOOLS=$(tools/release.sh)   # then $RELEASE_TOOLS/cosign ...
# stdout carries only the folder's absolute path; progress goes to stderr.
set -euo pipefail

COSIGN_VERSION=v2.6.5          # must match tools/release/go.mod
CYCLONEDX_GOMOD_VERSION=v1.10.0 # must match tools/release/go.mod

tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$tools/cache.sh"
cache_folder "release tools" "release-cosign-$COSIGN_VERSION-cyclonedx-gomod-$CYCLONEDX_GOMOD_VERSION"

# One go build for both: their links run side by side.
build "cosign cyclonedx-gomod" go build -C "$tools/release" -ldflags "-s -w" -o "$tmp/" \
	github.com/sigstore/cosign/v2/cmd/cosign github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod
echo "$dir"
