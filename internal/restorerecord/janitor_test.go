package restorerecord

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

func janitorSample() Janitor {
	return Janitor{MonocleUID: "0b6e1f3c-2a8d-4c51-9e0f-7d3a5b2c1e90", Job: "m-janitor-0123456789", JobUID: "5f1c9a2e-7b3d-4e8a-a6c0-2d9b8e7f1a34", CrawlerEnabled: ptr.To(true)}
}

// A janitor's record is read back as it was written, and in no other form.
func TestJanitorRecord(t *testing.T) {
	good := janitorSample().Encode()
	got, err := DecodeJanitor(good)
	if err != nil || got.Encode() != good || !*got.CrawlerEnabled {
		t.Fatalf("%s: %v", got.Encode(), err)
	}
	with := func(f func(*Janitor)) string { j := janitorSample(); f(&j); return j.Encode() }
	for name, raw := range map[string]string{
		"upper-case key":  strings.Replace(good, `"job"`, `"Job"`, 1),
		"duplicate key":   strings.TrimSuffix(good, "}") + `,"crawlerEnabled":false}`,
		"unknown key":     strings.TrimSuffix(good, "}") + `,"command":"x"}`,
		"trailing data":   good + `{}`,
		"a restore's":     sample().Encode(),
		"no monocle UID":  with(func(j *Janitor) { j.MonocleUID = "" }),
		"bad job UID":     with(func(j *Janitor) { j.JobUID = "x" }),
		"not a Job name":  with(func(j *Janitor) { j.Job = "m-restore-0123456789" }),
		"ESC in job name": with(func(j *Janitor) { j.Job = "m-janitor-\x1b[2J" }),
		"too long":        strings.Replace(good, "m-janitor-", strings.Repeat("m", MaxLength)+"-janitor-", 1),
	} {
		if _, err := DecodeJanitor(raw); err == nil {
			t.Errorf("%s: %s was taken", name, raw)
		}
	}
}
