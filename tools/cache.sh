# Sourced by the scripts that build, once, the tools the tests run
# (assets.sh, promtool.sh, release.sh, krew.sh). There is no download site
# here, only the Go module proxy, so each tool is built from source into a
# per-version cache folder outside the repo and reused by every later run.
#
# cache_folder LABEL NAME: "$dir" is the cache folder NAME (made if need be)
# and "$tmp" a temp folder inside it, where builds write. Binaries are built
# there and renamed into place, so a half-written binary is never seen. The
# temp folder goes on exit, including on INT/TERM/HUP (trapped so that the
# EXIT trap runs and the build in progress finishes first: an orphaned
# `go build -o` would recreate it). Folders left by a SIGKILL are swept
# after a day. Progress goes to stderr, prefixed with LABEL.
cache_folder() {
	label=$1
	dir="${MONOCLE_HOOK_CACHE:-$HOME/.cache/monocle-hook}/$2"
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	# Each tool's module stands alone: never let a go.work elsewhere in the
	# repo pull it into a workspace. Built as the Makefile builds everything
	# (static, -trimpath), the standard library and client-go's closure come
	# from the build cache.
	export GOWORK=off CGO_ENABLED=0 GOFLAGS=-trimpath
	find "$dir" -maxdepth 1 -name '.build.*' -mmin +1440 -exec rm -rf {} +
	tmp=$(mktemp -d "$dir/.build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM HUP
}

log() { echo "$label: $*" >&2; }

# build "NAME..." COMMAND...: run COMMAND (which must write each "$tmp/NAME")
# unless every "$dir/NAME" already exists, then move the results into place.
build() {
	local names=($1) name missing=0; shift
	for name in "${names[@]}"; do
		[[ -x "$dir/$name" ]] || missing=1
	done
	if ((!missing)); then
		log "${names[*]}: cached"
		return
	fi
	log "${names[*]}: building..."
	local start=$SECONDS
	"$@"
	for name in "${names[@]}"; do
		mv -f "$tmp/$name" "$dir/$name"
	done
	log "${names[*]}: built in $((SECONDS - start))s"
}
