package hook

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
)

// Render answers the one Monocle of a file (YAML or JSON documents) the way
// /sync answers it as a new parent (no children yet, the ConfigMaps and
// Secrets of the file as its related objects), and prints the children as
// YAML documents: to review them, or to apply them without Metacontroller.
// held is SpecApplied when it is False but the rest is answered (a crawler
// held on a missing token, a missing Secret, ...): what the output lacks.
func Render(data []byte, env Env) (out []byte, held *metav1.Condition, err error) {
	objs, err := readObjects(data)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the Monocle: %w", err)
	}
	if len(objs.monocles) != 1 {
		return nil, nil, fmt.Errorf("the file holds %d Monocles, not one", len(objs.monocles))
	}
	req, err := objs.request(objs.monocles[0])
	if err != nil {
		return nil, nil, err
	}
	req.Children = wire.Children{}
	resp, err := Sync(req, env)
	if err != nil {
		return nil, nil, err
	}
	// Objects the spec names cannot be looked up here: only a spec the
	// hook cannot honour at all is an error.
	if c := condition.Refused(resp.Status); c != nil {
		return nil, nil, fmt.Errorf("%s: %s", c.Reason, c.Message)
	}
	if c := meta.FindStatusCondition(resp.Status.Conditions, condition.ConditionSpecApplied); c != nil && c.Status != metav1.ConditionTrue {
		held = c
	}
	// Through JSON, as /sync sends them, then YAML.
	for _, child := range resp.Children {
		doc, err := yaml.Marshal(wire.WithoutStatus(child))
		if err != nil {
			return nil, nil, err
		}
		out = append(append(out, "---\n"...), doc...)
	}
	return out, held, nil
}
