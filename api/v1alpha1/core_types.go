package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Kubernetes types a Monocle passes to its pods, bounded: each string has a maximum length, each list and map a maximum size, and the values are checked as the API server checks them in a pod, so that a spec the CRD accepts never makes a child the API server refuses. Their JSON is Kubernetes' own; core.go converts them.

// LabelValue is a label value.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule=`!format.labelValue().validate(self).hasValue()`,message=`must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
type LabelValue string

// Quantity is a resource quantity, such as 500m or 1Gi.
// +kubebuilder:validation:XIntOrString
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:Pattern=`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
// +kubebuilder:validation:Type=""
type Quantity struct {
	// Embedded for its JSON methods: a quantity is a string or a number.
	resource.Quantity `json:"-"`
}

// ResourceList is the resources of a container by name.
// +kubebuilder:validation:MaxProperties=8
// +kubebuilder:validation:XValidation:rule=`self.all(k, k in ['cpu', 'memory', 'ephemeral-storage'] || k.startsWith('hugepages-') || (k.contains('/') && k.size() <= 317 && !format.qualifiedName().validate(k).hasValue()))`,message=`resource names are cpu, memory, ephemeral-storage, hugepages-<size> or extended resources such as example.com/gpu`
// +kubebuilder:validation:XValidation:rule=`self.all(k, isQuantity(string(self[k])) && !quantity(string(self[k])).isLessThan(quantity('0')))`,message=`quantities must not be negative`
type ResourceList map[corev1.ResourceName]Quantity

// ResourceRequirements are a container's requests and limits.
// +kubebuilder:validation:XValidation:rule=`!has(self.requests) || !has(self.limits) || ['cpu', 'memory', 'ephemeral-storage'].all(k, !(k in self.requests) || !(k in self.limits) || quantity(string(self.requests[k])).compareTo(quantity(string(self.limits[k]))) <= 0)`,message=`requests of cpu, memory and ephemeral-storage must not be more than their limits`
type ResourceRequirements struct {
	// The most the container may use.
	Limits ResourceList `json:"limits,omitempty"`
	// The resources the scheduler reserves.
	Requests ResourceList `json:"requests,omitempty"`
}

// SecretKeySelector is a key of a Secret in the Monocle's namespace.
type SecretKeySelector struct {
	// The Secret's name.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`!format.dns1123Subdomain().validate(self).hasValue()`,message=`must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`
	Name string `json:"name"`
	// The key (letters, digits, '-', '_' and '.').
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// LocalObjectReference is a Secret of type kubernetes.io/dockerconfigjson.
type LocalObjectReference struct {
	// The Secret's name.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`!format.dns1123Subdomain().validate(self).hasValue()`,message=`must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`
	Name string `json:"name"`
}

// Toleration is one toleration.
// +kubebuilder:validation:XValidation:rule=`(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')`,message=`operator must be Exists when key is empty (the toleration then matches every taint)`
// +kubebuilder:validation:XValidation:rule=`!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0`,message=`value must be empty when operator is Exists`
// +kubebuilder:validation:XValidation:rule=`!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')`,message=`tolerationSeconds needs effect NoExecute`
type Toleration struct {
	// The taint key; empty matches all keys with operator Exists.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule=`self == '' || !format.qualifiedName().validate(self).hasValue()`,message=`must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	Key string `json:"key,omitempty"`
	// Exists or Equal (the default).
	// +kubebuilder:validation:Enum=Exists;Equal
	Operator corev1.TolerationOperator `json:"operator,omitempty"`
	// The taint value, for Equal.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`!format.labelValue().validate(self).hasValue()`,message=`must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	Value string `json:"value,omitempty"`
	// The taint effect to match; all when empty.
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect,omitempty"`
	// For NoExecute, how long the pod stays bound to a tainted node.
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// Affinity is a pod's affinity with fewer terms.
type Affinity struct {
	// Nodes the pods prefer or require.
	NodeAffinity *NodeAffinity `json:"nodeAffinity,omitempty"`
	// Pods to be scheduled near.
	PodAffinity *PodAffinity `json:"podAffinity,omitempty"`
	// Pods to be scheduled away from.
	PodAntiAffinity *PodAffinity `json:"podAntiAffinity,omitempty"`
}

// NodeAffinity is the nodes the pods prefer or require.
type NodeAffinity struct {
	// Nodes the pods require: a node matching any term.
	RequiredDuringSchedulingIgnoredDuringExecution *NodeSelector `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	// Nodes the scheduler prefers, by weight.
	// +kubebuilder:validation:MaxItems=2
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// NodeSelector is nodes matching any of its terms.
type NodeSelector struct {
	// The terms, one at least; any may match.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	NodeSelectorTerms []NodeSelectorTerm `json:"nodeSelectorTerms"`
}

// NodeSelectorTerm is a node selector term: every requirement must hold.
type NodeSelectorTerm struct {
	// Requirements on node labels.
	// +kubebuilder:validation:MaxItems=4
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty"`
	// Requirements on node fields.
	// +kubebuilder:validation:MaxItems=1
	MatchFields []NodeFieldSelectorRequirement `json:"matchFields,omitempty"`
}

// NodeSelectorRequirement is a node label requirement.
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)`,message=`values must be given when operator is In or NotIn`
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0`,message=`values must be empty when operator is Exists or DoesNotExist`
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['Gt', 'Lt']) || (has(self.values) && size(self.values) == 1)`,message=`values must hold one value when operator is Gt or Lt`
type NodeSelectorRequirement struct {
	// The node label key.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule=`!format.qualifiedName().validate(self).hasValue()`,message=`must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	Key string `json:"key"`
	// How the key relates to the values.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt
	Operator corev1.NodeSelectorOperator `json:"operator"`
	// The values: one or more for In and NotIn, none for Exists and DoesNotExist, one integer for Gt and Lt.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule=`!format.labelValue().validate(self).hasValue()`,message=`must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	Values []string `json:"values,omitempty"`
}

// NodeFieldSelectorRequirement is a node field requirement: metadata.name only.
type NodeFieldSelectorRequirement struct {
	// The node field: metadata.name.
	// +kubebuilder:validation:Enum=metadata.name
	Key string `json:"key"`
	// In or NotIn.
	// +kubebuilder:validation:Enum=In;NotIn
	Operator corev1.NodeSelectorOperator `json:"operator"`
	// The node name, exactly one.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:XValidation:rule=`!format.dns1123Subdomain().validate(self).hasValue()`,message=`must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`
	Values []string `json:"values"`
}

// PreferredSchedulingTerm is a preferred node term.
type PreferredSchedulingTerm struct {
	// Its weight, 1 to 100.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Weight int32 `json:"weight"`
	// The nodes preferred: every requirement must hold.
	Preference NodeSelectorTerm `json:"preference"`
}

// PodAffinity is the pods to be scheduled near, or away from.
type PodAffinity struct {
	// Terms every pod must meet to be scheduled.
	// +kubebuilder:validation:MaxItems=2
	RequiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	// Terms the scheduler prefers, by weight.
	// +kubebuilder:validation:MaxItems=2
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// WeightedPodAffinityTerm is a preferred pod term.
type WeightedPodAffinityTerm struct {
	// Its weight, 1 to 100.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Weight int32 `json:"weight"`
	// Pods to be near (or away from), by labels, namespaces and topology.
	PodAffinityTerm PodAffinityTerm `json:"podAffinityTerm"`
}

// PodAffinityTerm is pods to be near (or away from), by labels, namespaces and topology.
// +kubebuilder:validation:XValidation:rule=`(!has(self.matchLabelKeys) && !has(self.mismatchLabelKeys)) || has(self.labelSelector)`,message=`matchLabelKeys and mismatchLabelKeys need a labelSelector`
type PodAffinityTerm struct {
	// The pods this term is about.
	LabelSelector *LabelSelector `json:"labelSelector,omitempty"`
	// Namespaces whose pods this term is about, with namespaces; the Monocle's own when both are empty.
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
	// Namespaces whose pods this term is about.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule=`!format.dns1123Label().validate(self).hasValue()`,message=`must be a DNS-1123 label: at most 63 lower-case letters, digits and '-'`
	Namespaces []string `json:"namespaces,omitempty"`
	// The node label whose equal values make one topology domain (e.g. kubernetes.io/hostname).
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule=`!format.qualifiedName().validate(self).hasValue()`,message=`must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	TopologyKey string `json:"topologyKey"`
	// Label keys whose values, taken from the pod, are added to labelSelector (In).
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:XValidation:rule=`!format.qualifiedName().validate(self).hasValue()`,message=`must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	MatchLabelKeys []string `json:"matchLabelKeys,omitempty"`
	// Label keys whose values, taken from the pod, are added to labelSelector (NotIn).
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:XValidation:rule=`!format.qualifiedName().validate(self).hasValue()`,message=`must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	MismatchLabelKeys []string `json:"mismatchLabelKeys,omitempty"`
}

// LabelSelector selects objects by their labels.
type LabelSelector struct {
	// Labels that must all match.
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.size() <= 317 && !format.qualifiedName().validate(k).hasValue())`,message=`label keys must be qualified names of at most 317 characters`
	MatchLabels map[string]LabelValue `json:"matchLabels,omitempty"`
	// Label requirements that must all hold.
	// +kubebuilder:validation:MaxItems=2
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is a label requirement.
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)`,message=`values must be given when operator is In or NotIn`
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0`,message=`values must be empty when operator is Exists or DoesNotExist`
type LabelSelectorRequirement struct {
	// The label key.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule=`!format.qualifiedName().validate(self).hasValue()`,message=`must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	Key string `json:"key"`
	// How the key relates to the values.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator metav1.LabelSelectorOperator `json:"operator"`
	// The values: one or more for In and NotIn, none for Exists and DoesNotExist.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule=`!format.labelValue().validate(self).hasValue()`,message=`must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
	Values []string `json:"values,omitempty"`
}

// NetworkPolicyPeer is a peer of a NetworkPolicy's rule: pods (by podSelector, namespaceSelector or both: the pods of the Monocle's namespace, or of the namespaces selected) or an IP block.
// +kubebuilder:validation:XValidation:rule=`has(self.ipBlock) != (has(self.podSelector) || has(self.namespaceSelector))`,message=`set ipBlock, or podSelector and/or namespaceSelector: one kind of peer`
type NetworkPolicyPeer struct {
	// The pods selected, in the Monocle's namespace or in those of namespaceSelector.
	PodSelector *LabelSelector `json:"podSelector,omitempty"`
	// The namespaces selected (every pod of them, or those of podSelector).
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
	// Addresses outside the cluster's pods.
	IPBlock *IPBlock `json:"ipBlock,omitempty"`
}

// IPBlock is a CIDR, less some of it.
// +kubebuilder:validation:XValidation:rule=`!has(self.except) || self.except.all(e, isCIDR(e) && cidr(self.cidr).containsCIDR(e) && cidr(e).prefixLength() > cidr(self.cidr).prefixLength())`,message=`each except must be a CIDR strictly within cidr`
type IPBlock struct {
	// A CIDR, such as 10.0.0.0/16 or 2001:db8::/64.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule=`isCIDR(self)`,message=`must be a CIDR, such as 10.0.0.0/16`
	CIDR string `json:"cidr"`
	// CIDRs within cidr that are not admitted.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=43
	Except []string `json:"except,omitempty"`
}
