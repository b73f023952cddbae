package e2e

import (
	"strings"
	"testing"
)

// On the real API server, in a restricted namespace: Elasticsearch's
// NetworkPolicy with the spec's peers (pods of selected namespaces, an IPv6
// block less part of it; the hook's tests take IPv4 too) and the API's PodDisruptionBudget
// for several replicas are admitted, converge and stay still; one replica
// removes the budget.
func TestNetworkPolicyAndBudgetOnTheServer(t *testing.T) {
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	spec := map[string]any{
		"api":     map[string]any{"replicas": 3},
		"crawler": map[string]any{"enabled": false},
		"networkPolicy": map[string]any{"elasticsearchPeers": []any{
			map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": "kibana"}}, "podSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "In", "values": []any{"kibana"}}}}},
			map[string]any{"ipBlock": map[string]any{"cidr": "2001:db8::/32", "except": []any{"2001:db8:1::/48"}}},
		}},
	}
	d.createMonocle("p", spec)
	d.converge("p")
	np := d.get("NetworkPolicy.networking.k8s.io/v1", "p-elastic")
	if got := jsonOf(t, np.Object["spec"]); !strings.Contains(got, `"app.kubernetes.io/instance":"p"`) || !strings.Contains(got, `"team":"kibana"`) ||
		!strings.Contains(got, `"2001:db8:1::/48"`) || !strings.Contains(got, `"port":9200`) {
		t.Errorf("the NetworkPolicy as stored: %s", got)
	}
	d.get("PodDisruptionBudget.policy/v1", "p-api")

	spec["api"] = map[string]any{"replicas": 1}
	d.setSpec("p", spec)
	d.converge("p")
	if pdbs := d.children(d.monocle("p").GetUID())["PodDisruptionBudget.policy/v1"]; len(pdbs) != 0 {
		t.Errorf("one replica keeps a disruption budget: %v", pdbs)
	}
}
