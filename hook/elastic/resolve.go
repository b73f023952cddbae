package elastic

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/check"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

const (
	DefaultImage       = "docker.elastic.co/elasticsearch/elasticsearch:7.17.26"
	DefaultStorageSize = "10Gi"
	// defaultHeap is Elasticsearch's heap when neither heap nor memory is set.
	defaultHeap = "512m"
)

// Settings are spec.elasticsearch (and the spec-wide storageClassName,
// storageSize, networkPolicy and scheduling) with their defaults applied
// and their values checked: all that Elasticsearch's children read.
type Settings struct {
	// URL or URLSecret set: Elasticsearch is external, none is created.
	URL       string
	URLSecret *corev1.SecretKeySelector
	image     string
	size      resource.Quantity
	// sizeAsked: a size is set in the spec. A default size (like an unset
	// class) applies at creation only: never held against a volume.
	sizeAsked  bool
	sizeField  string // the spec field the size came from, for messages
	class      string
	classField string
	Heap       string
	Resources  corev1.ResourceRequirements
	deleteData bool
	snapshots  *snapshotSettings // nil: no snapshots
	// NetworkPolicy: make the NetworkPolicy N-elastic, which admits Peers
	// too.
	NetworkPolicy bool
	Peers         []networkingv1.NetworkPolicyPeer
	scheduling    child.Scheduling
}

// External: Elasticsearch is another's, none is created.
func (s Settings) External() bool { return s.URL != "" || s.URLSecret != nil }

// Resolve reads spec.elasticsearch and what Elasticsearch takes of the
// rest of the spec; sched is the spec's scheduling, checked. note, when
// not "", is a value applied that is unwise, for SpecApplied's message.
func Resolve(spec *v1alpha1.MonocleSpec, sched child.Scheduling) (s Settings, note string, errs condition.FieldErrors) {
	es := spec.Elasticsearch
	s = Settings{
		URL:        es.URL,
		URLSecret:  v1alpha1.Core[*corev1.SecretKeySelector](es.URLSecretRef),
		image:      cmp.Or(es.Image, DefaultImage),
		class:      cmp.Or(es.StorageClassName, spec.StorageClassName),
		sizeAsked:  es.StorageSize != "" || spec.StorageSize != "",
		deleteData: es.DeleteDataOnDelete,
		// On unless turned off: Elasticsearch is for this Monocle alone.
		NetworkPolicy: spec.NetworkPolicy == nil || ptr.Deref(spec.NetworkPolicy.Enabled, true),
		scheduling:    sched,
	}
	if np := spec.NetworkPolicy; np != nil {
		s.Peers = v1alpha1.Core[[]networkingv1.NetworkPolicyPeer](np.ElasticsearchPeers)
	}
	errs = condition.Refusals(refused(spec, s))
	// The API server takes a template whose image has spaces around it,
	// and refuses each of its pods.
	if strings.ContainsAny(s.image, " \t\n") || strings.TrimSpace(s.image) != s.image {
		errs = append(errs, condition.Invalid("elasticsearch.image", "%s is not an image reference", condition.Quote(s.image)))
	} else if note, ferr := resolve(spec, &s); ferr != nil {
		errs = append(errs, ferr)
	} else if len(errs) == 0 {
		return s, note, nil
	}
	return Settings{}, "", errs
}

// refused are the API server's errors for the values Elasticsearch's
// children take of the spec: its resources, its volumes' classes, the
// Secret of its URL, the NetworkPolicy's peers. A PersistentVolumeClaim's
// class and the name of a Secret a pod reads are DNS subdomains; a Secret's
// key is a ConfigMap's key. The optional parts are checked only when set:
// every sync runs this, and a path checked costs allocations (counted by
// BenchmarkSync's allocs/op).
func refused(spec *v1alpha1.MonocleSpec, s Settings) field.ErrorList {
	es := spec.Elasticsearch
	var errs field.ErrorList
	if es.Resources != nil {
		errs = check.Resources(v1alpha1.Core[corev1.ResourceRequirements](es.Resources), field.NewPath("elasticsearch", "resources"))
	}
	errs = append(errs, check.DNSSubdomain(spec.StorageClassName, field.NewPath("storageClassName"))...)
	errs = append(errs, check.DNSSubdomain(es.StorageClassName, field.NewPath("elasticsearch", "storageClassName"))...)
	if es.Snapshots != nil {
		errs = append(errs, check.DNSSubdomain(es.Snapshots.StorageClassName, field.NewPath("elasticsearch", "snapshots", "storageClassName"))...)
	}
	if ref := es.URLSecretRef; ref != nil {
		p := field.NewPath("elasticsearch", "urlSecretRef")
		errs = append(errs, check.DNSSubdomain(ref.Name, p.Child("name"))...)
		errs = append(errs, check.ConfigMapKey(ref.Key, p.Child("key"))...)
	}
	if spec.NetworkPolicy != nil {
		errs = append(errs, check.Peers(s.Peers, field.NewPath("networkPolicy", "elasticsearchPeers"))...)
	}
	return errs
}

// resolve checks how Elasticsearch is reached, and sets its volume, its
// memory and its snapshots; note is what is applied but unwise.
func resolve(spec *v1alpha1.MonocleSpec, s *Settings) (note string, ferr *condition.FieldError) {
	es := spec.Elasticsearch
	// The URL as Monocle reads it, written as every client (the API's
	// environment, the update-idents Job) gets it.
	if es.URL != "" {
		var err error
		if s.URL, err = child.ElasticURL(es.URL); err != nil {
			// The value may hold credentials: never repeat it.
			return "", condition.Invalid("elasticsearch.url", "%v", err)
		}
	}
	if es.URLSecretRef != nil && (es.URLSecretRef.Name == "" || es.URLSecretRef.Key == "") {
		return "", condition.Invalid("elasticsearch.urlSecretRef", "needs a name and a key")
	}
	sizeField, size := "elasticsearch.storageSize", es.StorageSize
	if size == "" {
		sizeField, size = "storageSize", spec.StorageSize
	}
	q, err := resource.ParseQuantity(cmp.Or(size, DefaultStorageSize))
	if err != nil {
		return "", condition.Invalid(sizeField, "%s is not a quantity such as 10Gi", condition.Quote(size))
	}
	if q.Sign() <= 0 {
		return "", condition.Invalid(sizeField, "%s must be more than zero", condition.Quote(size))
	}
	s.size, s.sizeField = q, sizeField
	s.classField = "elasticsearch.storageClassName"
	if es.StorageClassName == "" {
		s.classField = "storageClassName"
	}
	note, ferr = memory(es.Heap, v1alpha1.Core[*corev1.ResourceRequirements](es.Resources), s)
	if ferr == nil && es.Snapshots != nil {
		s.snapshots, ferr = resolveSnapshots(*es.Snapshots, s.size)
	}
	return note, ferr
}

// JVM heap bounds: the smallest heap Elasticsearch is run with here, and
// the largest the JVM still addresses with compressed pointers.
const (
	minHeap = 256 << 20
	maxHeap = 31 << 30
)

var heapPattern = regexp.MustCompile(`^([0-9]+)([mMgG])$`)

// memory ties the heap to the container's memory: the heap given,
// else half the memory (Elasticsearch's own advice, at most 31g), else 512m
// in 1Gi. A heap the JVM cannot start with, or that does not fit the memory,
// is refused here: never a -Xmx flag that crash-loops. What is applied but
// unwise is the note. It sets s's heap and resources.
func memory(heap string, res *corev1.ResourceRequirements, s *Settings) (note string, ferr *condition.FieldError) {
	var heapBytes int64
	if heap != "" {
		m := heapPattern.FindStringSubmatch(heap)
		if m == nil {
			return "", condition.Invalid("elasticsearch.heap", "%s is not a JVM size such as 512m or 2g", condition.Quote(heap))
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		shift := 20
		if strings.EqualFold(m[2], "g") {
			shift = 30
		}
		switch {
		case err != nil || n > maxHeap>>shift:
			return "", condition.Invalid("elasticsearch.heap", "%s is over 31g, the largest heap Elasticsearch can use well", heap)
		case n<<shift < minHeap:
			return "", condition.Invalid("elasticsearch.heap", "%s is under 256m, the smallest heap Elasticsearch is run with", heap)
		}
		heapBytes = n << shift
	}
	s.Heap = cmp.Or(heap, defaultHeap)
	if res == nil {
		mem := *resource.NewQuantity(max(2*cmp.Or(heapBytes, 512<<20), 1<<30), resource.BinarySI)
		s.Resources = instance.Resources("500m", "1Gi", "1Gi")
		s.Resources.Requests[corev1.ResourceMemory], s.Resources.Limits[corev1.ResourceMemory] = mem, mem
		return "", nil
	}
	s.Resources = *res
	memField := "elasticsearch.resources.limits.memory"
	mem, ok := res.Limits[corev1.ResourceMemory]
	if !ok {
		memField = "elasticsearch.resources.requests.memory"
		mem, ok = res.Requests[corev1.ResourceMemory]
	}
	if !ok {
		return "", nil
	}
	memBytes, exact := mem.AsInt64()
	switch {
	case !exact || memBytes <= 0:
		return "", condition.Invalid(memField, "%s is not a memory size Elasticsearch can run in", mem.String())
	case heap == "" && memBytes/2 < minHeap:
		return "", condition.Invalid(memField, "%s is too small: the heap is half the memory, and needs 256m at least", mem.String())
	case heap == "":
		s.Heap = fmt.Sprintf("%dm", min(memBytes/2, maxHeap)>>20)
	case heapBytes >= memBytes:
		return "", condition.Invalid("elasticsearch.heap", "%s must be less than the memory of elasticsearch.resources (%s)", heap, mem.String())
	case heapBytes > memBytes/2:
		note = fmt.Sprintf("spec.elasticsearch.heap %s is over half the memory (%s): Elasticsearch advises half, the rest for the file system cache", heap, mem.String())
	}
	return note, nil
}
