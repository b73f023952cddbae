#!/usr/bin/env bash
# Builds (once) promtool, which `make rules` runs on observability/rules.yaml,
# from the Go module proxy (tools/promtool pins it and its dependencies) into
# a per-version cache folder outside the repo (cache.sh).
#
# Usage: PROMTOOL=$(tools/promtool.sh)
# stdout carries only the binary's absolute path; progress goes to stderr.
set -euo pipefail

PROMETHEUS_VERSION=v0.316.0 # must match tools/promtool/go.mod

tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$tools/cache.sh"
cache_folder promtool "promtool-$PROMETHEUS_VERSION"

# remove_all_sd leaves out Prometheus' service discoveries (plugins/: AWS,
# Azure, GCE, Consul...), which checking and testing rules never use: the
# build takes half the time (BENCHMARKS.md).
build promtool go build -C "$tools/promtool" -tags remove_all_sd -ldflags "-s -w" -o "$tmp/promtool" github.com/prometheus/prometheus/cmd/promtool
echo "$dir/promtool"
