// Package restorerecord is the record `kubectl monocle restore` keeps on a
// Monocle while it restores a snapshot into it: what it restores, the step
// it is at, and the spec's values it changed as they were, so that an
// interrupted restore is resumed or undone with what the user had. The
// plugin writes it; the plugin (to resume or undo) and the hook (to say the
// Monocle is not ready while it restores) read it. The record a janitor
// command keeps while it has stopped the crawler (Janitor) is read the same
// strict way.
//
// Anyone who may edit the Monocle may write the annotation, so a record is
// taken only in the exact form this package writes: Decode refuses any
// other bytes (another key case or order, a duplicate or unknown key, text
// after the object) before its values are checked. What a well-formed
// record may still claim (another repository, another Job) is checked
// against the cluster by the plugin, which alone can read it.
package restorerecord

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// Annotation, on a Monocle, holds the record of the restore under way.
const Annotation = instance.Group + "/restore"

// MaxLength bounds the annotation's value: a record this package writes is
// far shorter (its names are at most 200 characters each), so a longer one
// is refused before it is decoded.
const MaxLength = 2048

// Step is where a restore is.
type Step string

const (
	// Stopping: the writers are being stopped; the restore waits for their
	// pods to end.
	Stopping Step = "Stopping"
	// Restoring: the restore Job runs.
	Restoring Step = "Restoring"
	// UpdatingIdents: the snapshot is restored; update-idents re-attributes
	// its changes to the idents of the config the API runs, the writers
	// still stopped. A snapshot holds the authors as the crawler resolved
	// them when it crawled (Monocle 1.11.2 src/Lentille.hs:151-161): an
	// idents edit since then is applied only by update-idents.
	UpdatingIdents Step = "UpdatingIdents"
	// PuttingBack: the restore has ended (or is undone); the spec's values
	// are being put back.
	PuttingBack Step = "PuttingBack"
)

// Steps are the steps, in their order.
var Steps = []Step{Stopping, Restoring, UpdatingIdents, PuttingBack}

// Record is the annotation's value.
type Record struct {
	// MonocleUID is the UID of the Monocle the record was written on: a
	// record copied onto another Monocle (or onto a Monocle of the same name
	// made anew) is not its restore.
	MonocleUID string `json:"monocleUID"`
	Snapshot   string `json:"snapshot"`
	Repository string `json:"repository"`
	Location   string `json:"location"`
	Step       Step   `json:"step"`
	// JobUID is the UID of the Job the plugin created for the step: the
	// restore Job at Restoring (always set), the update-idents Job at
	// UpdatingIdents once it exists; "" while Stopping. A Job of the same
	// name with another UID is not the restore's.
	JobUID string `json:"jobUID"`
	// Before are spec.api.replicas, spec.crawler.enabled and
	// spec.elasticsearch.snapshots.suspend as they were (null: not set).
	Before *Before `json:"before"`
}

// Before is the merge patch that puts the spec's values back: only these
// three fields, each of its type or null.
type Before struct {
	Spec struct {
		API struct {
			Replicas *int32 `json:"replicas"`
		} `json:"api"`
		Crawler struct {
			Enabled *bool `json:"enabled"`
		} `json:"crawler"`
		Elasticsearch struct {
			Snapshots struct {
				Suspend *bool `json:"suspend"`
			} `json:"snapshots"`
		} `json:"elasticsearch"`
	} `json:"spec"`
}

// String is the merge patch, for messages: numbers, booleans and null.
func (b *Before) String() string {
	out, _ := json.Marshal(b)
	return string(out)
}

// Encode is the annotation's value for r: the one form Decode takes.
func (r Record) Encode() string {
	out, _ := json.Marshal(r)
	return string(out)
}

// uid is a Kubernetes UID as the API server makes them (a UUID).
var uid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Decode reads the annotation's value: refused unless it is, byte for byte,
// a record Encode writes, with values this package's writer could have
// written. Its errors quote no value of raw unescaped: %q at most.
func Decode(raw string) (Record, error) {
	var r Record
	if err := decode(raw, &r); err != nil {
		return Record{}, err
	}
	if err := r.check(); err != nil {
		return Record{}, err
	}
	return r, nil
}

// decode reads raw into v, refused unless raw is, byte for byte, what v's
// Encode writes.
func decode[T interface{ Encode() string }](raw string, v *T) error {
	if len(raw) > MaxLength {
		return fmt.Errorf("%d bytes, more than a record's %d", len(raw), MaxLength)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not a record: %w", err)
	}
	// encoding/json matches keys case-insensitively, keeps the last of two
	// keys and stops at the object's end: the written form, compared byte
	// for byte, refuses all of these at once.
	if (*v).Encode() != raw {
		return errors.New("not in the form kubectl monocle writes (its keys, their case and order, nothing else)")
	}
	return nil
}

// check holds the values to what the writer writes.
func (r Record) check() error {
	switch {
	case !uid.MatchString(r.MonocleUID):
		return fmt.Errorf("monocleUID %q is not a UID", r.MonocleUID)
	case r.JobUID != "" && !uid.MatchString(r.JobUID):
		return fmt.Errorf("jobUID %q is not a UID", r.JobUID)
	case !slices.Contains(Steps, r.Step):
		return fmt.Errorf("step %q is none of %q", r.Step, Steps)
	case r.Step == Stopping && r.JobUID != "":
		return errors.New("a jobUID while Stopping, before any Job")
	case r.Step == Restoring && r.JobUID == "":
		return errors.New("no jobUID while Restoring")
	case r.Before == nil:
		return errors.New("no before")
	case r.Before.Spec.API.Replicas != nil && *r.Before.Spec.API.Replicas < 0:
		return errors.New("negative replicas in before")
	}
	if err := snapshot.CheckName("snapshot", r.Snapshot); err != nil {
		return err
	}
	if err := snapshot.CheckName("repository", r.Repository); err != nil {
		return err
	}
	return snapshot.CheckLocation(r.Location)
}
