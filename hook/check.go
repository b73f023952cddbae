package hook

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// NotSynced is the reason of a Monocle whose status is not of its spec:
// Metacontroller has not synced its last change (Unsynced).
const NotSynced = "NotSynced"

// SyncGrace is how long a new Monocle may have no status before check and
// kubectl monocle status say it is not synced: Metacontroller syncs a new
// Monocle within seconds.
const SyncGrace = 2 * time.Minute

// Unsynced says why a Monocle's status is not of its spec, "" when it is:
// its status.observedGeneration is behind its metadata.generation, or it
// has had no status for SyncGrace since created (a Monocle read from a
// file, with no generation nor creation time, is neither). Its spec is then
// not applied, whatever its conditions say.
func Unsynced(generation, observedGeneration int64, hasStatus bool, created, now time.Time) string {
	var what string
	switch {
	case hasStatus && observedGeneration < generation:
		what = fmt.Sprintf("its status is of generation %d, its spec of %d: its last change is not applied", observedGeneration, generation)
	case !hasStatus && !created.IsZero() && now.Sub(created) >= SyncGrace:
		what = fmt.Sprintf("it has no status %s after its creation: it was never synced", SyncGrace)
	default:
		return ""
	}
	return what + ". Likely causes: Metacontroller does not run; or it cannot sync Monocles, its ClusterRole lacking a kind of child this hook answers " +
		"(after an upgrade of the chart before Metacontroller's values: docs/upgrade.md); or every sync of it fails (its SyncError events)"
}

// Refusal is a Monocle this hook would not apply in full, and why.
type Refusal struct {
	Namespace, Name, Reason, Message string
}

func (r Refusal) String() string {
	// One line of text, whatever the objects checked hold.
	return printable.Escape(fmt.Sprintf("%s/%s: %s: %s", r.Namespace, r.Name, r.Reason, r.Message))
}

// Report is what Check found: how many Monocles it answered, those this
// hook would not apply in full, and those whose pods a default image of
// this hook would roll.
type Report struct {
	Checked  int
	Refusals []Refusal
	Rolls    []Roll
}

// Roll is a Monocle whose pods upgrading to this hook rolls, and why: it
// sets no image of its own and runs another one than this hook's default,
// or its public URL is written another way (a trailing slash dropped).
type Roll struct {
	Namespace, Name, Component, From, To, Why string
}

// Print writes the report as monocle-hook check and kubectl monocle check
// print it: each refusal, each roll, then the summary line.
func (rep Report) Print(w io.Writer) {
	for _, r := range rep.Refusals {
		fmt.Fprintln(w, r)
	}
	// A Monocle may be refused twice (not synced, and its spec).
	refused, rolling := map[string]bool{}, map[string]bool{}
	for _, r := range rep.Refusals {
		refused[r.Namespace+"/"+r.Name] = true
	}
	for _, r := range rep.Rolls {
		fmt.Fprintln(w, r)
		rolling[r.Namespace+"/"+r.Name] = true
	}
	fmt.Fprintf(w, "Monocles checked: %d; applied in full: %d; not: %d; rolled: %d\n",
		rep.Checked, rep.Checked-len(refused), len(refused), len(rolling))
}

func (r Roll) String() string {
	return printable.Escape(fmt.Sprintf("%s/%s: rolls %s from %s to %s (%s)", r.Namespace, r.Name, r.Component, r.From, r.To, r.Why))
}

// Check answers every Monocle in objects (the output of `kubectl get
// monocles,configmaps,secrets -A -o yaml`: a List, or YAML documents) the
// way /sync would, with the generated and referenced ConfigMaps and Secrets
// found beside it, and lists those whose SpecApplied would be False (what
// an upgrade to this hook would hold) and those it would roll onto a new
// default image (from the images their status says run). Objects of other
// kinds are ignored.
func Check(data []byte, env Env) (Report, error) {
	objs, err := readObjects(data)
	if err != nil {
		return Report{}, err
	}
	return objs.check(env)
}

// check answers every Monocle of objs as /sync would: Check's and
// CheckObjects' report.
func (objs *objects) check(env Env) (Report, error) {
	rep := Report{Checked: len(objs.monocles)}
	for _, monocle := range objs.monocles {
		req, err := objs.request(monocle)
		if err != nil {
			return Report{}, err
		}
		md, st := req.Parent.Metadata, req.Parent.Status
		if why := Unsynced(md.Generation, st.ObservedGeneration, len(st.Conditions) > 0 || st.ObservedGeneration > 0, md.CreationTimestamp.Time, env.Now()); why != "" {
			rep.Refusals = append(rep.Refusals, Refusal{md.Namespace, md.Name, NotSynced, why})
		}
		resp, err := Sync(req, env)
		if err != nil {
			rep.Refusals = append(rep.Refusals, Refusal{md.Namespace, md.Name, "BadObject", err.Error()})
			continue
		}
		for _, c := range resp.Status.Conditions {
			if c.Type == condition.ConditionSpecApplied && c.Status != "True" {
				rep.Refusals = append(rep.Refusals, Refusal{md.Namespace, md.Name, c.Reason, c.Message})
			}
		}
		secured := req.Children.Secrets[instance.For(md.Name).Elastic] != nil
		rep.Rolls = append(rep.Rolls, rolls(monocle, md.Namespace, md.Name, resp.Status.URL, secured)...)
	}
	slices.SortFunc(rep.Refusals, func(a, b Refusal) int { return strings.Compare(a.String(), b.String()) })
	slices.SortFunc(rep.Rolls, func(a, b Roll) int { return strings.Compare(a.String(), b.String()) })
	return rep, nil
}

// rolls compares the images a Monocle's status says run with the defaults,
// for the images its spec leaves to them, and the public URL its status
// says the API runs with with the one it would get (url); and a managed
// Elasticsearch that runs without its users' Secret (secured: N-elastic is
// there) is one the hook made before it turned security on.
func rolls(monocle []byte, namespace, name, url string, secured bool) []Roll {
	var m struct {
		Spec struct {
			Image         string `json:"image"`
			Elasticsearch struct {
				Image string `json:"image"`
				URL   string `json:"url"`
			} `json:"elasticsearch"`
		} `json:"spec"`
		Status struct {
			Versions v1alpha1.Versions `json:"versions"`
			URL      string            `json:"url"`
		} `json:"status"`
	}
	if json.Unmarshal(monocle, &m) != nil {
		return nil
	}
	var out []Roll
	if v := m.Status.Versions.Monocle; m.Spec.Image == "" && v != "" && v != DefaultImage {
		out = append(out, Roll{namespace, name, "the API and the crawler", v, DefaultImage, "the new default image"})
	}
	if v := m.Status.Versions.Elasticsearch; m.Spec.Elasticsearch.Image == "" && v != "" && v != DefaultElasticImage {
		out = append(out, Roll{namespace, name, "Elasticsearch", v, DefaultElasticImage, "the new default image"})
	}
	if m.Status.Versions.Elasticsearch != "" && m.Spec.Elasticsearch.URL == "" && !secured {
		out = append(out, Roll{namespace, name, "Elasticsearch and the API", "no authentication", "each client its own user (Secret " + instance.For(name).Elastic + ")", "Elasticsearch's security"})
	}
	if v := m.Status.URL; v != "" && url != "" && v != url {
		out = append(out, Roll{namespace, name, "the API", v, url, "its public URL as Monocle serves it"})
	}
	return out
}
