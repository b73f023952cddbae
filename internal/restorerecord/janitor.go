package restorerecord

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/change-metrics/monocle-hook/internal/instance"
)

// JanitorAnnotation, on a Monocle, holds the record of a `kubectl monocle
// janitor` command that stopped the crawler for its run (wipe-crawler-data,
// set-crawler-commit-date): what it puts back when the janitor ends, so
// that an interrupted run is resumed by the same command. Decoded as
// strictly as a restore's record, for the same reason.
const JanitorAnnotation = instance.Group + "/janitor"

// Janitor is JanitorAnnotation's value.
type Janitor struct {
	// MonocleUID is the UID of the Monocle the record was written on.
	MonocleUID string `json:"monocleUID"`
	// Job is the janitor Job's name: its command and arguments, hashed
	// (the same command is the same Job).
	Job string `json:"job"`
	// JobUID is the UID of that Job once the plugin created it ("" before):
	// a Job of that name with another UID is not the run's.
	JobUID string `json:"jobUID"`
	// CrawlerEnabled is spec.crawler.enabled as it was (null: not set).
	CrawlerEnabled *bool `json:"crawlerEnabled"`
}

// Encode is the annotation's value for j: the one form DecodeJanitor takes.
func (j Janitor) Encode() string {
	out, _ := json.Marshal(j)
	return string(out)
}

// DecodeJanitor reads JanitorAnnotation's value as Decode reads a
// restore's: refused unless it is, byte for byte, a record Encode writes,
// with values the plugin writes.
func DecodeJanitor(raw string) (Janitor, error) {
	var j Janitor
	if err := decode(raw, &j); err != nil {
		return Janitor{}, err
	}
	switch {
	case !uid.MatchString(j.MonocleUID):
		return Janitor{}, fmt.Errorf("monocleUID %q is not a UID", j.MonocleUID)
	case j.JobUID != "" && !uid.MatchString(j.JobUID):
		return Janitor{}, fmt.Errorf("jobUID %q is not a UID", j.JobUID)
	case len(validation.IsDNS1123Label(j.Job)) > 0 || !strings.Contains(j.Job, "-janitor-"):
		return Janitor{}, fmt.Errorf("job %q is not a janitor Job's name", j.Job)
	}
	return j, nil
}
