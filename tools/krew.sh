#!/usr/bin/env bash
# Builds (once) krew v0.4.3, kubectl's plugin manager, and its manifest
# checker validate-krew-manifest (the one krew-index runs on a plugin's
# manifest), from the Go module proxy (tools/krew pins them and their
# dependencies) into a per-version cache folder outside the repo, reused by
# every later run (cache.sh). krew is named kubectl-krew there, as kubectl finds it:
# with that folder on PATH, `kubectl krew ...` runs it. e2e/krew_test.go runs
# `kubectl krew install --manifest=... --archive=...` with it, offline.
#
# Usage: KREW_TOOLS=$(tools/krew.sh)   # then PATH=$KREW_TOOLS:$PATH kubectl krew ...
# stdout carries only the folder's absolute path; progress goes to stderr.
set -euo pipefail

KREW_VERSION=v0.4.3 # must match tools/krew/go.mod

tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$tools/cache.sh"
cache_folder krew "krew-$KREW_VERSION"

# The version stamped as krew's release builds stamp it: `kubectl krew
# version` says v0.4.3, and its upgrade check (off with KREW_NO_UPGRADE_CHECK)
# is the release's.
ldflags="-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION"
build kubectl-krew go build -C "$tools/krew" -ldflags "$ldflags" -o "$tmp/kubectl-krew" sigs.k8s.io/krew/cmd/krew
build validate-krew-manifest go build -C "$tools/krew" -ldflags "$ldflags" -o "$tmp/validate-krew-manifest" sigs.k8s.io/krew/cmd/validate-krew-manifest
echo "$dir"
