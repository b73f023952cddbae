// Package check holds the API server's rules for the values a Monocle's
// spec copies into its children (Kubernetes v1.37's pkg/apis/core and
// networking validation, ported with apimachinery's helpers), shared by the
// parts that copy them: a value it refuses would leave a child uncreated or
// frozen while the status said the spec applied. The CRD holds the same
// rules for new objects; these are for those stored before.
package check

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// messages is one Invalid error of a validation helper's messages, if any.
func messages(msgs []string, value string, p *field.Path) field.ErrorList {
	if len(msgs) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(p, value, strings.Join(msgs, "; "))}
}

// DNSSubdomain: the name of an object a child names (a PersistentVolumeClaim's
// class, a Secret or ConfigMap a pod reads, an IngressClass); "" is unset.
func DNSSubdomain(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	return messages(validation.IsDNS1123Subdomain(name), name, p)
}

// Resources is a container's validateResourceRequirements: names a
// container may request, quantities not negative (integers for extended
// resources, whole pages for huge pages), requests within limits, and
// equal to them for resources that cannot be overcommitted.
func Resources(r corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	cpuOrMemory, hugePages := false, false
	check := func(list corev1.ResourceList, p *field.Path) {
		for _, name := range slices.Sorted(maps.Keys(list)) {
			q, kp := list[name], p.Key(string(name))
			errs = append(errs, containerResourceName(string(name), kp)...)
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(kp, q.String(), "must be greater than or equal to 0"))
			}
			if extendedResource(string(name)) && q.MilliValue()%1000 != 0 {
				errs = append(errs, field.Invalid(kp, q.String(), "must be an integer"))
			}
			if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
				hugePages = true
				if !hugePagesDivisible(string(name), q) {
					errs = append(errs, field.Invalid(kp, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name)))
				}
			}
			cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
		}
	}
	check(r.Limits, p.Child("limits"))
	check(r.Requests, p.Child("requests"))
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		req := r.Requests[name]
		limit, ok := r.Limits[name]
		switch {
		case ok && !overcommitAllowed(string(name)) && req.Cmp(limit) != 0:
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case ok && req.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !overcommitAllowed(string(name)):
			errs = append(errs, field.Required(p.Child("limits").Key(string(name)), "Limit must be set for non overcommitable resources"))
		}
	}
	if hugePages && !cpuOrMemory {
		errs = append(errs, field.Forbidden(p, "HugePages require cpu or memory"))
	}
	return errs
}

// containerResourceName: cpu, memory, ephemeral-storage, hugepages-<size>,
// or a name with a domain (an extended resource unless in kubernetes.io).
func containerResourceName(name string, p *field.Path) field.ErrorList {
	if msgs := validation.IsQualifiedName(name); len(msgs) > 0 {
		return messages(msgs, name, p)
	}
	standard := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}
	switch {
	case strings.Contains(name, "/"):
		if !nativeResource(name) && !extendedResource(name) {
			return field.ErrorList{field.Invalid(p, name, "doesn't follow extended resource name standard")}
		}
	case !slices.Contains(standard, corev1.ResourceName(name)) && !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix):
		return field.ErrorList{field.Invalid(p, name, "must be a standard resource for containers")}
	}
	return nil
}

func nativeResource(name string) bool {
	return !strings.Contains(name, "/") || strings.Contains(name, corev1.ResourceDefaultNamespacePrefix)
}

func extendedResource(name string) bool {
	if nativeResource(name) || strings.HasPrefix(name, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+name)) == 0
}

func overcommitAllowed(name string) bool {
	return nativeResource(name) && !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix)
}

func hugePagesDivisible(name string, q resource.Quantity) bool {
	page, err := resource.ParseQuantity(strings.TrimPrefix(name, corev1.ResourceHugePagesPrefix))
	if err != nil || page.Sign() <= 0 || page.MilliValue()%1000 != 0 {
		return false
	}
	return q.Value()%page.Value() == 0
}

func NodeSelector(sel map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		errs = append(errs, metav1validation.ValidateLabelName(k, p)...)
		errs = append(errs, messages(validation.IsValidLabelValue(sel[k]), sel[k], p.Key(k))...)
	}
	return errs
}

func Tolerations(tolerations []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		ip := p.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, ip.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(ip.Child("operator"), string(t.Operator), "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(ip.Child("effect"), string(t.Effect), "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			errs = append(errs, messages(validation.IsValidLabelValue(t.Value), t.Value, ip.Child("value"))...)
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(ip.Child("value"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(ip.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(ip.Child("effect"), t.Effect, []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}))
		}
	}
	return errs
}

func Affinity(a *corev1.Affinity, p *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		np := p.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			tp := np.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(req.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(tp, "must have at least one node selector term"))
			}
			for i, term := range req.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(term, tp.Index(i))...)
			}
		}
		for i, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			tp := np.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, weight(term.Weight, tp.Child("weight"))...)
			errs = append(errs, validateNodeSelectorTerm(term.Preference, tp.Child("preference"))...)
		}
	}
	podTerms := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, p *field.Path) {
		for i, term := range required {
			errs = append(errs, validatePodAffinityTerm(term, p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
		}
		for i, term := range preferred {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, weight(term.Weight, tp.Child("weight"))...)
			errs = append(errs, validatePodAffinityTerm(term.PodAffinityTerm, tp.Child("podAffinityTerm"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		podTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAffinity"))
	}
	if pa := a.PodAntiAffinity; pa != nil {
		podTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAntiAffinity"))
	}
	return errs
}

func weight(w int32, p *field.Path) field.ErrorList {
	if w <= 0 || w > 100 {
		return field.ErrorList{field.Invalid(p, w, "must be in the range 1-100")}
	}
	return nil
}

// validateNodeSelectorTerm holds preferred terms to the required terms'
// rule on values (label values), which the API server waives for them:
// a value no label can have matches no node.
func validateNodeSelectorTerm(term corev1.NodeSelectorTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, rq := range term.MatchExpressions {
		rp := p.Child("matchExpressions").Index(i)
		switch rq.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(rq.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(rq.Values) > 0 {
				errs = append(errs, field.Forbidden(rp.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(rq.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			errs = append(errs, field.Invalid(rp.Child("operator"), string(rq.Operator), "not a valid selector operator"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(rq.Key, rp.Child("key"))...)
		for j, v := range rq.Values {
			errs = append(errs, messages(validation.IsValidLabelValue(v), v, rp.Child("values").Index(j))...)
		}
	}
	for i, rq := range term.MatchFields {
		rp := p.Child("matchFields").Index(i)
		switch {
		case rq.Operator != corev1.NodeSelectorOpIn && rq.Operator != corev1.NodeSelectorOpNotIn:
			errs = append(errs, field.Invalid(rp.Child("operator"), string(rq.Operator), "not a valid selector operator"))
		case len(rq.Values) != 1:
			errs = append(errs, field.Required(rp.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
		if rq.Key != "metadata.name" {
			errs = append(errs, field.Invalid(rp.Child("key"), rq.Key, "not a valid field selector key"))
			continue
		}
		for j, v := range rq.Values {
			errs = append(errs, DNSSubdomain(v, rp.Child("values").Index(j))...)
		}
	}
	return errs
}

func validatePodAffinityTerm(term corev1.PodAffinityTerm, p *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	// ValidateLabelSelector ranges over matchLabels: stable, as the
	// annotations' errors are.
	errs := stable(metav1validation.ValidateLabelSelector(term.LabelSelector, opts, p.Child("labelSelector")))
	errs = append(errs, stable(metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, p.Child("namespaceSelector")))...)
	for _, ns := range term.Namespaces {
		errs = append(errs, messages(validation.IsDNS1123Label(ns), ns, p.Child("namespace"))...)
	}
	labelKeys := func(name string, keys []string) {
		if len(keys) > 0 && term.LabelSelector == nil {
			errs = append(errs, field.Forbidden(p.Child(name), "must not be specified when labelSelector is not set"))
			return
		}
		for i, k := range keys {
			errs = append(errs, metav1validation.ValidateLabelName(k, p.Child(name).Index(i))...)
		}
	}
	labelKeys("matchLabelKeys", term.MatchLabelKeys)
	labelKeys("mismatchLabelKeys", term.MismatchLabelKeys)
	if sel := term.LabelSelector; sel != nil {
		// When it creates a pod, the API server adds each matchLabelKeys
		// key to the selector, then refuses a key the selector already
		// had: the template is taken and every pod of it refused.
		for i, k := range term.MatchLabelKeys {
			_, inLabels := sel.MatchLabels[k]
			if inLabels || slices.ContainsFunc(sel.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool { return r.Key == k }) {
				errs = append(errs, field.Invalid(p.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and labelSelector"))
			}
		}
	}
	for i, k := range term.MatchLabelKeys {
		if slices.Contains(term.MismatchLabelKeys, k) {
			errs = append(errs, field.Invalid(p.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	if term.TopologyKey == "" {
		errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, metav1validation.ValidateLabelName(term.TopologyKey, p.Child("topologyKey"))...)
}

// stable orders errors found by ranging over a map: by field, then bad
// value, then detail.
func stable(errs field.ErrorList) field.ErrorList {
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		return cmp.Or(strings.Compare(a.Field, b.Field),
			strings.Compare(fmt.Sprint(a.BadValue), fmt.Sprint(b.BadValue)),
			strings.Compare(a.Detail, b.Detail))
	})
	return errs
}

// IngressHost: a DNS name (a wildcard's "*." first), in lower case, with no
// port, never an IP address.
func IngressHost(host string, p *field.Path) field.ErrorList {
	if host == "" {
		return nil
	}
	if netutils.ParseIPSloppy(host) != nil {
		return field.ErrorList{field.Invalid(p, host, "must be a DNS name, not an IP address")}
	}
	if strings.Contains(host, "*") {
		return messages(validation.IsWildcardDNS1123Subdomain(host), host, p)
	}
	return messages(validation.IsDNS1123Subdomain(host), host, p)
}

// Peers is the API server's check of a NetworkPolicy's peers
// (pkg/apis/networking/validation: ValidateNetworkPolicyPeer,
// ValidateIPBlock): one kind of peer, valid selectors, a CIDR with its
// excepts strictly within it.
func Peers(peers []networkingv1.NetworkPolicyPeer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	opts := metav1validation.LabelSelectorValidationOptions{}
	for i, peer := range peers {
		pp := p.Index(i)
		selectors := peer.PodSelector != nil || peer.NamespaceSelector != nil
		if selectors == (peer.IPBlock != nil) {
			errs = append(errs, field.Required(pp, "must specify a peer: ipBlock, or podSelector and/or namespaceSelector"))
			continue
		}
		errs = append(errs, stable(metav1validation.ValidateLabelSelector(peer.PodSelector, opts, pp.Child("podSelector")))...)
		errs = append(errs, stable(metav1validation.ValidateLabelSelector(peer.NamespaceSelector, opts, pp.Child("namespaceSelector")))...)
		if b := peer.IPBlock; b != nil {
			cidr, err := netip.ParsePrefix(b.CIDR)
			if err != nil {
				errs = append(errs, field.Invalid(pp.Child("ipBlock", "cidr"), b.CIDR, "must be a CIDR, such as 10.0.0.0/16"))
				continue
			}
			for j, e := range b.Except {
				except, err := netip.ParsePrefix(e)
				if err != nil || except.Addr().Is4() != cidr.Addr().Is4() || except.Bits() <= cidr.Bits() || !cidr.Contains(except.Masked().Addr()) {
					errs = append(errs, field.Invalid(pp.Child("ipBlock", "except").Index(j), e, "must be a CIDR strictly within cidr"))
				}
			}
		}
	}
	return errs
}

// ConfigMapKey: a key of a ConfigMap or a Secret.
func ConfigMapKey(key string, p *field.Path) field.ErrorList {
	return messages(validation.IsConfigMapKey(key), key, p)
}

// Annotations are the API server's rules for an object's annotations, in
// the order of their keys: ValidateAnnotations ranges over the map, and in
// its order the first error would differ from one sync of the same spec to
// the next, each difference a status write.
func Annotations(annotations map[string]string, p *field.Path) field.ErrorList {
	return stable(apivalidation.ValidateAnnotations(annotations, p))
}
