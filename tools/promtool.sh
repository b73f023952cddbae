#!/usr/bin/env bash
# Builds (once) promtool, which `make rules` runs on observability/rules.yaml,
# from the Go module proxy (tools/promtool pins it and its dependencies) into
# a per-version cache folder outside the repo, reused by every later run.
#
# Usage: PROMTOOL=$(tools/promtool.sh)
# stdout carries only the binary's absolute path; progress goes to stderr.
set -euo pipefail

PROMETHEUS_VERSION=v0.316.0 # must match tools/promtool/go.mod

tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir="${MONOCLE_HOOK_CACHE:-$HOME/.cache/monocle-hook}/promtool-$PROMETHEUS_VERSION"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if [[ -x "$dir/promtool" ]]; then
	echo "$dir/promtool"
	exit 0
fi

export GOWORK=off
# Built in a temp folder and renamed into place: a half-written binary is
# never seen (the same pattern as tools/assets.sh).
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
echo "promtool: building $PROMETHEUS_VERSION..." >&2
start=$SECONDS
# remove_all_sd leaves out Prometheus' service discoveries (plugins/: AWS,
# Azure, GCE, Consul...), which checking and testing rules never use: the
# build takes half the time (BENCHMARKS.md). No -trimpath: the binary never
# leaves this machine, and the standard library comes from the build cache.
go build -C "$tools/promtool" -tags remove_all_sd -ldflags "-s -w" -o "$tmp/promtool" github.com/prometheus/prometheus/cmd/promtool
mv -f "$tmp/promtool" "$dir/promtool"
echo "promtool: built in $((SECONDS - start))s" >&2
echo "$dir/promtool"
