package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	DefaultImage        = "quay.io/change-metrics/monocle:1.11.2"
	DefaultElasticImage = "docker.elastic.co/elasticsearch/elasticsearch:7.17.26"
	DefaultStorageSize  = "10Gi"
	// DefaultPublicURL is the seed operator's default: the UI reached through
	// `kubectl port-forward svc/N-api 8090:8080`. Not the Service's URL: a
	// browser cannot resolve a cluster Service name.
	DefaultPublicURL = "http://localhost:8090"
	// defaultHeap is Elasticsearch's heap when neither heap nor memory is set.
	defaultHeap = "512m"
)

// Spec is the Monocle spec as the CRD in crd/ defines it. The seed
// operator's fields (monoclePublicURL, storageSize, storageClassName,
// route) are kept as aliases so that its objects keep working.
type Spec struct {
	PublicURL        string                        `json:"publicURL,omitempty"`
	MonoclePublicURL string                        `json:"monoclePublicURL,omitempty"`
	Image            string                        `json:"image,omitempty"`
	WebappTitle      string                        `json:"webappTitle,omitempty"`
	StorageSize      string                        `json:"storageSize,omitempty"`
	StorageClassName string                        `json:"storageClassName,omitempty"`
	Route            *RouteSpec                    `json:"route,omitempty"`
	Elasticsearch    ElasticsearchSpec             `json:"elasticsearch,omitempty"`
	API              APISpec                       `json:"api,omitempty"`
	Crawler          CrawlerSpec                   `json:"crawler,omitempty"`
	Ingress          *IngressSpec                  `json:"ingress,omitempty"`
	Config           string                        `json:"config,omitempty"`
	ConfigMapRef     *LocalRef                     `json:"configMapRef,omitempty"`
	SecretRef        *LocalRef                     `json:"secretRef,omitempty"`
	NodeSelector     map[string]string             `json:"nodeSelector,omitempty"`
	Tolerations      []corev1.Toleration           `json:"tolerations,omitempty"`
	Affinity         *corev1.Affinity              `json:"affinity,omitempty"`
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
}

type RouteSpec struct {
	Host   string            `json:"host,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

type ElasticsearchSpec struct {
	Image              string                       `json:"image,omitempty"`
	StorageSize        string                       `json:"storageSize,omitempty"`
	StorageClassName   string                       `json:"storageClassName,omitempty"`
	Heap               string                       `json:"heap,omitempty"`
	Resources          *corev1.ResourceRequirements `json:"resources,omitempty"`
	URL                string                       `json:"url,omitempty"`
	URLSecretRef       *corev1.SecretKeySelector    `json:"urlSecretRef,omitempty"`
	DeleteDataOnDelete bool                         `json:"deleteDataOnDelete,omitempty"`
}

type APISpec struct {
	Replicas  *int32                       `json:"replicas,omitempty"`
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

type CrawlerSpec struct {
	Enabled   *bool                        `json:"enabled,omitempty"`
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

type IngressSpec struct {
	Host          string            `json:"host,omitempty"`
	ClassName     string            `json:"className,omitempty"`
	TLSSecretName string            `json:"tlsSecretName,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type LocalRef struct {
	Name string `json:"name"`
}

// settings is a spec with its defaults applied and its values checked: all
// that the child constructors read.
type settings struct {
	publicURL   string
	webappTitle string
	image       string
	elastic     elasticSettings
	apiReplicas int32
	apiRes      corev1.ResourceRequirements
	crawler     bool
	crawlerRes  corev1.ResourceRequirements
	ingress     *IngressSpec // with route.host folded in; nil: no Ingress
	config      string       // inline config.yaml; "" when not given
	configMap   string       // a user-owned ConfigMap to mount instead of N-api
	secret      string       // a user-owned Secret added to the pods' environment
	scheduling  scheduling
}

type elasticSettings struct {
	// url or urlSecret set: Elasticsearch is external, none is created.
	url       string
	urlSecret *corev1.SecretKeySelector
	image     string
	size      resource.Quantity
	// sizeAsked: a size is set in the spec. A default size (like an unset
	// class) applies at creation only: never held against a volume.
	sizeAsked  bool
	sizeField  string // the spec field the size came from, for messages
	class      string
	classField string
	heap       string
	res        corev1.ResourceRequirements
	deleteData bool
}

func (e elasticSettings) external() bool { return e.url != "" || e.urlSecret != nil }

type scheduling struct {
	nodeSelector     map[string]string
	tolerations      []corev1.Toleration
	affinity         *corev1.Affinity
	imagePullSecrets []corev1.LocalObjectReference
}

// fieldError names the spec field the hook cannot honour and why. reason is
// the SpecApplied condition's: InvalidSpec (nothing of the spec is applied)
// or another (all but that field is).
type fieldError struct {
	reason, field, message string
}

func (e *fieldError) Error() string {
	if e.field == "" {
		return e.message
	}
	return "spec." + e.field + " " + e.message
}

func invalid(field, format string, args ...any) *fieldError {
	return &fieldError{"InvalidSpec", field, fmt.Sprintf(format, args...)}
}

var heapPattern = regexp.MustCompile(`^[1-9][0-9]*[mg]$`)

// decodeSpec reads a raw spec; a spec of the wrong shape is a fieldError.
func decodeSpec(raw json.RawMessage) (Spec, *fieldError) {
	var spec Spec
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return spec, nil
	}
	if err := json.Unmarshal(trimmed, &spec); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return spec, invalid(typeErr.Field, "must be a %s, not a JSON %s", typeErr.Type, typeErr.Value)
		}
		return spec, invalid("", "spec is not valid: %v", err)
	}
	return spec, nil
}

// resolveSpec decodes and checks a raw spec. The CRD schema already rejects
// most bad values; this is the hook's own guard for objects written before
// the schema, or with validation off.
func resolveSpec(raw json.RawMessage) (settings, *fieldError) {
	spec, ferr := decodeSpec(raw)
	if ferr != nil {
		return settings{}, ferr
	}
	es := spec.Elasticsearch
	s := settings{
		webappTitle: spec.WebappTitle,
		image:       firstNonEmpty(spec.Image, DefaultImage),
		apiReplicas: 1,
		crawler:     spec.Crawler.Enabled == nil || *spec.Crawler.Enabled,
		config:      spec.Config,
		scheduling: scheduling{
			nodeSelector:     spec.NodeSelector,
			tolerations:      spec.Tolerations,
			affinity:         spec.Affinity,
			imagePullSecrets: spec.ImagePullSecrets,
		},
		elastic: elasticSettings{
			url:        es.URL,
			urlSecret:  es.URLSecretRef,
			image:      firstNonEmpty(es.Image, DefaultElasticImage),
			class:      firstNonEmpty(es.StorageClassName, spec.StorageClassName),
			sizeAsked:  es.StorageSize != "" || spec.StorageSize != "",
			deleteData: es.DeleteDataOnDelete,
		},
	}
	if spec.API.Replicas != nil {
		if *spec.API.Replicas < 0 {
			return settings{}, invalid("api.replicas", "must not be negative")
		}
		s.apiReplicas = *spec.API.Replicas
	}
	if spec.ConfigMapRef != nil {
		s.configMap = spec.ConfigMapRef.Name
	}
	if spec.SecretRef != nil {
		s.secret = spec.SecretRef.Name
	}

	// The public URL: given, else the Ingress's, else the port-forward one.
	urlField, urlValue := "publicURL", spec.PublicURL
	if urlValue == "" && spec.MonoclePublicURL != "" {
		urlField, urlValue = "monoclePublicURL", spec.MonoclePublicURL
	}
	if spec.Ingress != nil || (spec.Route != nil && spec.Route.Host != "") {
		in := IngressSpec{}
		if spec.Ingress != nil {
			in = *spec.Ingress
		}
		if in.Host == "" && spec.Route != nil {
			in.Host = spec.Route.Host // the seed's OpenShift route
		}
		if in.Host == "" {
			return settings{}, invalid("ingress.host", "is required for an Ingress")
		}
		s.ingress = &in
		if urlValue == "" {
			scheme := "http"
			if in.TLSSecretName != "" {
				scheme = "https"
			}
			urlValue = scheme + "://" + in.Host
		}
	}
	s.publicURL = firstNonEmpty(urlValue, DefaultPublicURL)
	if u, err := url.Parse(s.publicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return settings{}, invalid(urlField, "%q is not an http or https URL", s.publicURL)
	}
	for _, f := range [][2]string{{"image", s.image}, {"elasticsearch.image", s.elastic.image}} {
		if strings.ContainsAny(f[1], " \t\n") {
			return settings{}, invalid(f[0], "%q is not an image reference", f[1])
		}
	}

	if es.URL != "" {
		if u, err := url.Parse(es.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The value may hold credentials: never repeat it.
			return settings{}, invalid("elasticsearch.url", "is not an http or https URL")
		}
	}
	if es.URLSecretRef != nil && (es.URLSecretRef.Name == "" || es.URLSecretRef.Key == "") {
		return settings{}, invalid("elasticsearch.urlSecretRef", "needs a name and a key")
	}

	sizeField, size := "elasticsearch.storageSize", es.StorageSize
	if size == "" {
		sizeField, size = "storageSize", spec.StorageSize
	}
	q, err := resource.ParseQuantity(firstNonEmpty(size, DefaultStorageSize))
	if err != nil {
		return settings{}, invalid(sizeField, "%q is not a quantity such as 10Gi", size)
	}
	if q.Sign() <= 0 {
		return settings{}, invalid(sizeField, "%q must be more than zero", size)
	}
	s.elastic.size, s.elastic.sizeField = q, sizeField
	s.elastic.classField = "elasticsearch.storageClassName"
	if es.StorageClassName == "" {
		s.elastic.classField = "storageClassName"
	}

	var ferr2 *fieldError
	if s.elastic.heap, s.elastic.res, ferr2 = elasticMemory(es.Heap, es.Resources); ferr2 != nil {
		return settings{}, ferr2
	}
	s.apiRes = resourcesOr(spec.API.Resources, resources("100m", "256Mi", "1Gi"))
	s.crawlerRes = resourcesOr(spec.Crawler.Resources, resources("50m", "128Mi", "512Mi"))
	return s, nil
}

// elasticMemory ties the heap to the container's memory: the heap given,
// else half the memory limit (Elasticsearch's own advice), else 512m in 1Gi.
func elasticMemory(heap string, res *corev1.ResourceRequirements) (string, corev1.ResourceRequirements, *fieldError) {
	if heap != "" && !heapPattern.MatchString(heap) {
		return "", corev1.ResourceRequirements{}, invalid("elasticsearch.heap", "%q is not a JVM size such as 512m or 2g", heap)
	}
	if res == nil {
		h := firstNonEmpty(heap, defaultHeap)
		mem := *resource.NewQuantity(2*jvmBytes(h), resource.BinarySI)
		if mem.Cmp(resource.MustParse("1Gi")) < 0 {
			mem = resource.MustParse("1Gi")
		}
		r := resources("500m", "1Gi", "1Gi")
		r.Requests[corev1.ResourceMemory], r.Limits[corev1.ResourceMemory] = mem, mem
		return h, r, nil
	}
	mem, ok := res.Limits[corev1.ResourceMemory]
	if !ok {
		mem, ok = res.Requests[corev1.ResourceMemory]
	}
	if heap == "" {
		if !ok {
			return defaultHeap, *res, nil
		}
		return fmt.Sprintf("%dm", mem.Value()/2>>20), *res, nil
	}
	if ok && jvmBytes(heap) >= mem.Value() {
		return "", corev1.ResourceRequirements{}, invalid("elasticsearch.heap", "%s must be less than the memory of elasticsearch.resources (%s)", heap, mem.String())
	}
	return heap, *res, nil
}

func jvmBytes(heap string) int64 {
	var n int64
	fmt.Sscanf(heap[:len(heap)-1], "%d", &n)
	if strings.HasSuffix(heap, "g") {
		return n << 30
	}
	return n << 20
}

func resourcesOr(r *corev1.ResourceRequirements, def corev1.ResourceRequirements) corev1.ResourceRequirements {
	if r == nil {
		return def
	}
	return *r
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
