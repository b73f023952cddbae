#!/usr/bin/env bash
# Builds (once) krew v0.4.3, kubectl's plugin manager, and its manifest
# checker validate-krew-manifest (the one krew-index runs on a plugin's
# manifest), from the Go module proxy (tools/krew pins them and their
# dependencies) into a per-version cache folder outside the repo, reused by
# every later run. krew is named kubectl-krew there, as kubectl finds it:
# with that folder on PATH, `kubectl krew ...` runs it. e2e/krew_test.go runs
# `kubectl krew install --manifest=... --archive=...` with it, offline.
#
# Usage: KREW_TOOLS=$(tools/krew.sh)   # then PATH=$KREW_TOOLS:$PATH kubectl krew ...
# stdout carries only the folder's absolute path; progress goes to stderr.
set -euo pipefail

KREW_VERSION=v0.4.3 # must match tools/krew/go.mod

tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir="${MONOCLE_HOOK_CACHE:-$HOME/.cache/monocle-hook}/krew-$KREW_VERSION"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if [[ -x "$dir/kubectl-krew" && -x "$dir/validate-krew-manifest" ]]; then
	echo "$dir"
	exit 0
fi

export GOWORK=off
# Built in a temp folder and renamed into place: a half-written binary is
# never seen (the same pattern as tools/assets.sh).
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
# The version stamped as krew's release builds stamp it: `kubectl krew
# version` says v0.4.3, and its upgrade check (off with KREW_NO_UPGRADE_CHECK)
# is the release's.
ldflags="-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION"
# One go build for both: their links run side by side. No -trimpath: the
# binaries never leave this machine, and the standard library comes from the
# build cache. cmd/krew's binary is named krew: kubectl-krew here.
names=() pkgs=()
for pair in kubectl-krew:sigs.k8s.io/krew/cmd/krew validate-krew-manifest:sigs.k8s.io/krew/cmd/validate-krew-manifest; do
	[[ -x "$dir/${pair%%:*}" ]] || { names+=("${pair%%:*}"); pkgs+=("${pair#*:}"); }
done
echo "krew: building ${names[*]} $KREW_VERSION..." >&2
start=$SECONDS
go build -C "$tools/krew" -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}"
[[ ! -e "$tmp/krew" ]] || mv -f "$tmp/krew" "$tmp/kubectl-krew"
for name in "${names[@]}"; do mv -f "$tmp/$name" "$dir/$name"; done
echo "krew: ${names[*]} built in $((SECONDS - start))s" >&2
echo "$dir"
