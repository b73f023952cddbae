package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	DefaultImage        = "quay.io/change-metrics/monocle:1.11.2"
	DefaultElasticImage = "docker.elastic.co/elasticsearch/elasticsearch:7.17.26"
	DefaultStorageSize  = "10Gi"
	// DefaultPublicURL is the seed operator's default: the UI reached through
	// `kubectl port-forward svc/N-api 8090:8080`.
	DefaultPublicURL = "http://localhost:8090"
)

// Spec is the Monocle spec as the CRD in crd/ defines it. Field names of the
// seed operator (monoclePublicURL, storageSize, storageClassName, route) are
// kept so that its objects keep working.
type Spec struct {
	// PublicURL is the URL users open; it wins over MonoclePublicURL.
	PublicURL        string `json:"publicURL,omitempty"`
	MonoclePublicURL string `json:"monoclePublicURL,omitempty"`
	Image            string `json:"image,omitempty"`
	StorageSize      string `json:"storageSize,omitempty"`
	StorageClassName string `json:"storageClassName,omitempty"`
	// Route is the seed operator's OpenShift route: accepted, not acted on.
	Route *struct {
		Host   string            `json:"host,omitempty"`
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"route,omitempty"`
}

// settings is a spec with its defaults applied and its values checked: all
// that the child constructors read.
type settings struct {
	publicURL    string
	image        string
	elasticImage string
	storageSize  resource.Quantity
	storageClass string
	// sizeAsked: storageSize is set in the spec. A default size (like an
	// unset class) applies at creation only: never held against a volume.
	sizeAsked bool
}

// fieldError names the spec field the hook cannot honour and why. reason is
// the SpecApplied condition's: InvalidSpec (nothing of the spec is applied)
// or ImmutableField (all but that field is).
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

// resolveSpec decodes and checks a raw spec. The CRD schema already rejects
// most bad values; this is the hook's own guard for objects written before
// the schema, or with validation off.
func resolveSpec(raw json.RawMessage) (settings, *fieldError) {
	var spec Spec
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&spec); err != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) && typeErr.Field != "" {
				return settings{}, invalid(typeErr.Field, "must be a %s, not a JSON %s", typeErr.Type, typeErr.Value)
			}
			return settings{}, invalid("", "spec is not a JSON object: %v", err)
		}
	}

	s := settings{
		publicURL:    firstNonEmpty(spec.PublicURL, spec.MonoclePublicURL, DefaultPublicURL),
		image:        firstNonEmpty(spec.Image, DefaultImage),
		elasticImage: DefaultElasticImage,
		storageClass: spec.StorageClassName,
		sizeAsked:    spec.StorageSize != "",
	}
	urlField := "publicURL"
	if spec.PublicURL == "" {
		urlField = "monoclePublicURL"
	}
	if u, err := url.Parse(s.publicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return settings{}, invalid(urlField, "%q is not an http or https URL", s.publicURL)
	}
	if strings.TrimSpace(s.image) != s.image || strings.ContainsAny(s.image, " \t\n") {
		return settings{}, invalid("image", "%q is not an image reference", s.image)
	}
	size, err := resource.ParseQuantity(firstNonEmpty(spec.StorageSize, DefaultStorageSize))
	if err != nil {
		return settings{}, invalid("storageSize", "%q is not a quantity such as 10Gi", spec.StorageSize)
	}
	if size.Sign() <= 0 {
		return settings{}, invalid("storageSize", "%q must be more than zero", spec.StorageSize)
	}
	s.storageSize = size
	return s, nil
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
