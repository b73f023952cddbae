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
for pkg in github.com/sigstore/cosign/v2/cmd/cosign github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod; do
	name=${pkg##*/}
	[[ -x "$dir/$name" ]] && continue
	echo "release tools: building $name..." >&2
	start=$SECONDS
	go build -C "$tools/release" -trimpath -ldflags "-s -w" -o "$tmp/$name" "$pkg"
	mv -f "$tmp/$name" "$dir/$name"
	echo "release tools: $name built in $((SECONDS - start))s" >&2
done
echo "$dir"
