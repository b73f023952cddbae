// Package snapshot takes, prunes and restores snapshots of a Monocle's
// Elasticsearch 7.17 through its snapshot REST API. It is what the
// `monocle-hook snapshot` and `monocle-hook restore` subcommands run, in the
// hook's own image, from a CronJob and from a Job an admin applies.
package snapshot

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"
)

// Where snapshots live on the Elasticsearch node. The hook mounts the
// snapshot volume at PathRepo and sets path.repo to it; the repository's
// location is a directory under it, so that the volume's root (and its
// lost+found) is not the repository.
const (
	PathRepo          = "/usr/share/elasticsearch/snapshots"
	DefaultRepository = "monocle"
	DefaultLocation   = PathRepo + "/" + DefaultRepository
	DefaultPrefix     = "monocle"
)

// Monocle 1.11.2's indices (src/Monocle/Env.hs and src/Monocle/Backend/Index.hs):
// one per workspace, "monocle.changes.1." + the workspace's name, and the
// config index "monocle.config" that records the schema version the
// workspaces were migrated to. A snapshot holds exactly these, never the
// cluster's other indices or its global state.
const (
	configIndex          = "monocle.config"
	workspaceIndexPrefix = "monocle.changes.1."
	// Indices is the snapshot's "indices": the config index by name (a
	// snapshot without it could not be restored into a working Monocle)
	// and every workspace index.
	Indices = configIndex + "," + workspaceIndexPrefix + "*"
)

// isMonocleIndex tells whether an index is one of Monocle's.
func isMonocleIndex(name string) bool {
	return name == configIndex || (strings.HasPrefix(name, workspaceIndexPrefix) && len(name) > len(workspaceIndexPrefix))
}

// nameLayout is the time part of a snapshot's name: UTC, to the second, so
// that names sort as their times do.
const nameLayout = "20060102-150405"

// Name is the name of the snapshot taken at t: prefix-YYYYMMDD-HHMMSS, UTC.
func Name(prefix string, t time.Time) string {
	return prefix + "-" + t.UTC().Format(nameLayout)
}

// ours tells whether a snapshot's name is one that Name makes for prefix.
// Retention deletes only these: an admin's own snapshot in the same
// repository ("monocle-before-upgrade") is never ours.
func ours(prefix, name string) bool {
	stamp, ok := strings.CutPrefix(name, prefix+"-")
	if !ok {
		return false
	}
	t, err := time.Parse(nameLayout, stamp)
	return err == nil && t.Format(nameLayout) == stamp
}

// CheckWritten refuses a snapshot name that `monocle-hook snapshot` would
// not write, and returns its prefix: PREFIX-YYYYMMDD-HHMMSS as Name makes
// it, its prefix one --prefix takes (CheckName) and the whole a name
// CheckName takes (take.go checks --prefix and --name so). kubectl monocle
// refuses any other before it makes a Job of it.
func CheckWritten(name string) (prefix string, err error) {
	const stamp = len("-" + nameLayout)
	if len(name) > stamp {
		prefix = name[:len(name)-stamp]
	}
	if CheckName("prefix", prefix) != nil || CheckName("snapshot", name) != nil || !ours(prefix, name) {
		return "", fmt.Errorf("snapshot %q is not a name monocle-hook snapshot writes: PREFIX-YYYYMMDD-HHMMSS (UTC), the prefix of lowercase letters, digits, '.', '_' and '-', starting with a letter or digit", name)
	}
	return prefix, nil
}

// CheckName refuses what Elasticsearch would refuse as a repository or
// snapshot name, and more: only lowercase letters, digits, '.', '_' and '-',
// starting with a letter or digit, so a name is also safe in a URL path, a
// command line and a Kubernetes label value.
func CheckName(what, name string) error {
	if name == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if len(name) > 200 {
		return fmt.Errorf("%s %q is longer than 200 characters", what, name)
	}
	if !validName.MatchString(name) {
		return fmt.Errorf("%s %q: only lowercase letters, digits, '.', '_' and '-', starting with a letter or digit", what, name)
	}
	return nil
}

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// CheckLocation refuses a location that is not an absolute, clean path:
// Elasticsearch resolves a relative one against path.repo, which would make
// the same flag mean two directories.
func CheckLocation(location string) error {
	if !path.IsAbs(location) || path.Clean(location) != location || location == "/" {
		return fmt.Errorf("location %q must be a clean absolute path (no '..', '//' or trailing '/'), not /", location)
	}
	return nil
}
