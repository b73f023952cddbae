package restorerecord

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

func sample() Record {
	r := Record{
		MonocleUID: "0b6e1f3c-2a8d-4c51-9e0f-7d3a5b2c1e90",
		Snapshot:   "monocle-20261130-030000",
		Repository: "monocle",
		Location:   "/usr/share/elasticsearch/snapshots",
		Step:       Restoring,
		JobUID:     "5f1c9a2e-7b3d-4e8a-a6c0-2d9b8e7f1a34",
		Before:     &Before{},
	}
	r.Before.Spec.API.Replicas = ptr.To[int32](2)
	r.Before.Spec.Crawler.Enabled = ptr.To(true)
	return r
}

// What Encode writes, Decode reads back as it was.
func TestRoundTrip(t *testing.T) {
	want := sample()
	got, err := Decode(want.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Encode() != want.Encode() || *got.Before.Spec.API.Replicas != 2 || got.Before.Spec.Elasticsearch.Snapshots.Suspend != nil {
		t.Fatalf("got %s, want %s", got.Encode(), want.Encode())
	}
}

// Every form but the written one is refused, and so is every value the
// writer never writes.
func TestDecodeRefuses(t *testing.T) {
	good := sample().Encode()
	with := func(f func(*Record)) string { r := sample(); f(&r); return r.Encode() }
	for name, raw := range map[string]string{
		"upper-case key":     strings.Replace(good, `"snapshot"`, `"Snapshot"`, 1),
		"duplicate key":      strings.Replace(good, `{"monocleUID"`, `{"repository":"other","monocleUID"`, 1),
		"duplicate key last": strings.TrimSuffix(good, "}") + `,"repository":"other"}`,
		"unknown key":        strings.TrimSuffix(good, "}") + `,"extra":1}`,
		"text after":         good + ` {}`,
		"space after":        good + " ",
		"keys reordered":     strings.Replace(with(func(r *Record) {}), `"monocleUID":"0b6e1f3c-2a8d-4c51-9e0f-7d3a5b2c1e90","snapshot":"monocle-20261130-030000"`, `"snapshot":"monocle-20261130-030000","monocleUID":"0b6e1f3c-2a8d-4c51-9e0f-7d3a5b2c1e90"`, 1),
		"escaped key":        strings.Replace(good, `"step"`, `"st\u0065p"`, 1),
		"null before":        with(func(r *Record) { r.Before = nil }),
		"negative replicas":  with(func(r *Record) { r.Before.Spec.API.Replicas = ptr.To[int32](-1) }),
		"no monocle UID":     with(func(r *Record) { r.MonocleUID = "" }),
		"bad job UID":        with(func(r *Record) { r.JobUID = "../x" }),
		"unknown step":       with(func(r *Record) { r.Step = "Done" }),
		"job while stopping": with(func(r *Record) { r.Step = Stopping }),
		"restoring, no job":  with(func(r *Record) { r.JobUID = "" }),
		"ESC in snapshot":    with(func(r *Record) { r.Snapshot = "a\x1b]0;x\x07" }),
		"relative location":  with(func(r *Record) { r.Location = "snapshots" }),
		"upper-case repo":    with(func(r *Record) { r.Repository = "Monocle" }),
		"too long":           strings.Replace(good, `"monocle-20261130-030000"`, `"`+strings.Repeat("a", MaxLength)+`"`, 1),
		"array":              `[` + good + `]`,
		"empty":              ``,
	} {
		if _, err := Decode(raw); err == nil {
			t.Errorf("%s: %s was taken", name, raw)
		}
	}
}

// A refusal quotes the value it refuses, never raw: a control character
// reaches a terminal as an escape.
func TestDecodeErrorEscapes(t *testing.T) {
	r := sample()
	r.Snapshot = "a\x1b[2J"
	_, err := Decode(r.Encode())
	if err == nil || strings.ContainsRune(err.Error(), 0x1b) {
		t.Fatalf("error %q", err)
	}
}
