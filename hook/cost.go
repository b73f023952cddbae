package hook

import (
	"encoding/json"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
)

// Cost is the most heap Sync(req) takes beyond what any request costs: the
// parse of one config.yaml. Sync parses one (the user's ConfigMap's, the
// spec's, or the generated ConfigMap's, never a mounted copy): each
// candidate's cost is bounded from its bytes by monocleconfig.ParseCostOf,
// and the largest is the cost. The server charges it before calling Sync.
// It looks up the generated ConfigMap alone, as Observe would key it: Sync
// observes the children once.
func Cost(req *wire.SyncRequest) int64 {
	if req == nil || req.Parent == nil {
		return 0
	}
	var spec struct {
		Config string `json:"config"`
	}
	// A spec that does not decode parses no config.
	_ = json.Unmarshal(req.Parent.Spec, &spec)
	cost := monocleconfig.ParseCostOf([]byte(spec.Config))
	namespace, generated := req.Parent.Metadata.Namespace, instance.For(req.Parent.Metadata.Name).API
	for _, cm := range req.Children.ConfigMaps {
		if wire.ObservedIn(cm, namespace) && cm.Name == generated {
			cost = max(cost, monocleconfig.ParseCostOf([]byte(cm.Data[instance.ConfigFile])))
		}
	}
	for _, cm := range req.Related.ConfigMaps {
		if cm != nil {
			cost = max(cost, monocleconfig.ParseCostOf([]byte(cm.Data[instance.ConfigFile])))
		}
	}
	return cost
}
