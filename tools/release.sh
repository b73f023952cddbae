#!/usr/bin/env bash
# Builds (once) the tools `make push` signs and describes the release with,
# cosign and cyclonedx-gomod, from the Go module proxy (tools/release pins
# them and their dependencies) into a per-version cache folder outside the
# repo, reused by every later run.
#
# Usage: RELEASE_TOOLS=$(tools/release.sh)   # then $RELEASE_TOOLS/cosign ...
# stdout carries only the folder's absolute path; progress goes to stderr.
set -euo pipefail

COSIGN_VERSION=v2.6.5          # must match tools/release/go.mod
CYCLONEDX_GOMOD_VERSION=v1.10.0 # must match tools/release/go.mod

tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir="${MONOCLE_HOOK_CACHE:-$HOME/.cache/monocle-hook}/release-cosign-$COSIGN_VERSION-cyclonedx-gomod-$CYCLONEDX_GOMOD_VERSION"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if [[ -x "$dir/cosign" && -x "$dir/cyclonedx-gomod" ]]; then
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
# One go build for both: their links run side by side. No -trimpath: the
# binaries never leave this machine, and the standard library comes from the
# build cache.
names=() pkgs=()
for pkg in github.com/sigstore/cosign/v2/cmd/cosign github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod; do
	[[ -x "$dir/${pkg##*/}" ]] || { names+=("${pkg##*/}"); pkgs+=("$pkg"); }
done
echo "release tools: building ${names[*]}..." >&2
start=$SECONDS
go build -C "$tools/release" -ldflags "-s -w" -o "$tmp/" "${pkgs[@]}"
for name in "${names[@]}"; do mv -f "$tmp/$name" "$dir/$name"; done
echo "release tools: ${names[*]} built in $((SECONDS - start))s" >&2
echo "$dir"
