#!/usr/bin/env bash
# Prints the folder of Metacontroller v4.17.2's own Helm chart
# (deploy/helm/metacontroller), which one e2e test installs as the chart's
# message says. It is read once into a per-version cache folder outside the
# repo (never into it): from METACONTROLLER_REPO, a git directory of
# github.com/metacontroller/metacontroller holding the tag, when set; else
# from a clone of GitHub. Without either it prints nothing and exits 0: the
# test that needs it is skipped, and says so.
#
# Usage: export METACONTROLLER_CHART=$(tools/metacontroller-chart.sh)
set -euo pipefail

VERSION=v4.17.2
log() { echo "metacontroller-chart: $*" >&2; }

dir="${MONOCLE_HOOK_CACHE:-$HOME/.cache/monocle-hook}/metacontroller-chart-$VERSION"
if [[ -f "$dir/deploy/helm/metacontroller/Chart.yaml" ]]; then
	log "cached"
	echo "$dir/deploy/helm/metacontroller"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo="${METACONTROLLER_REPO:-}"
if [[ -z "$repo" ]]; then
	repo="$tmp/repo.git"
	if ! git clone -q --bare --filter=blob:none https://github.com/metacontroller/metacontroller "$repo" 2>/dev/null; then
		log "no METACONTROLLER_REPO and no clone of GitHub: the test that installs it is skipped"
		exit 0
	fi
fi
mkdir -p "$tmp/out"
if ! git --git-dir="$repo" archive "$VERSION" deploy/helm/metacontroller | tar -x -C "$tmp/out"; then
	log "$repo has no $VERSION: the test that installs it is skipped"
	exit 0
fi
mkdir -p "$(dirname "$dir")"
rm -rf "$dir" && mv "$tmp/out" "$dir"
log "read from $repo"
echo "$dir/deploy/helm/metacontroller"
