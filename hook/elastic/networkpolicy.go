package elastic

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// makeNetworkPolicy is who may reach Elasticsearch's port: the pods
// of this Monocle that call it (each carries its name and instance labels:
// the API, the update-idents Job, the snapshot CronJob's Jobs and the Jobs
// the project prints) and the spec's peers; not the crawler, which calls
// only the API (Monocle 1.11.2, src/CLI.hs:90-91: the crawler reads the
// config, MONOCLE_PUBLIC_URL and its port, no Elasticsearch URL). It selects Elasticsearch's pods only: the API's port (the
// web UI) and the crawler's stay open.
func makeNetworkPolicy(n instance.Names, s Settings) *networkingv1.NetworkPolicy {
	own := n.Selector("")
	delete(own, "app.kubernetes.io/component")
	notCrawler := []metav1.LabelSelectorRequirement{{Key: "app.kubernetes.io/component", Operator: metav1.LabelSelectorOpNotIn, Values: []string{child.ComponentCrawler}}}
	peers := append([]networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: own, MatchExpressions: notCrawler}}}, s.Peers...)
	return &networkingv1.NetworkPolicy{
		TypeMeta:   wire.TypeNetworkPolicy,
		ObjectMeta: metav1.ObjectMeta{Name: n.Elastic, Labels: n.Labels(child.ComponentElastic)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: n.Selector(child.ComponentElastic)},
			// policyTypes: Ingress, the API server's default for a policy
			// of ingress rules only.
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				// Protocol set, as the API server defaults it: Metacontroller's
				// three-way merge replaces a list of no merge key (ingress)
				// whole, so a rule that differs from the stored one would be
				// written again at every sync (e2e TestListsReplacedWhole).
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(instance.ElasticPort))}},
				From:  peers,
			}},
		},
	}
}
