package hook

import (
	"fmt"
	"slices"
	"strings"
)

// Refusal is a Monocle this hook would not apply in full, and why.
type Refusal struct {
	Namespace, Name, Reason, Message string
}

func (r Refusal) String() string {
	return fmt.Sprintf("%s/%s: %s: %s", r.Namespace, r.Name, r.Reason, r.Message)
}

// Check answers every Monocle in objects (the output of `kubectl get
// monocles,configmaps,secrets -A -o yaml`: a List, or YAML documents) the
// way /sync would, with the generated and referenced ConfigMaps and Secrets
// found beside it, and lists those whose SpecApplied would be False: what
// an upgrade to this hook would hold. Objects of other kinds are ignored.
func Check(data []byte, env Env) ([]Refusal, error) {
	objs, err := readObjects(data)
	if err != nil {
		return nil, err
	}
	var refusals []Refusal
	for _, monocle := range objs.monocles {
		req, err := objs.request(monocle)
		if err != nil {
			return nil, err
		}
		md := req.Parent.Metadata
		resp, err := Sync(req, env)
		if err != nil {
			refusals = append(refusals, Refusal{md.Namespace, md.Name, "BadObject", err.Error()})
			continue
		}
		for _, c := range resp.Status.Conditions {
			if c.Type == ConditionSpecApplied && c.Status != "True" {
				refusals = append(refusals, Refusal{md.Namespace, md.Name, c.Reason, c.Message})
			}
		}
	}
	slices.SortFunc(refusals, func(a, b Refusal) int { return strings.Compare(a.String(), b.String()) })
	return refusals, nil
}
