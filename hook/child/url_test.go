package child

import (
	"errors"
	"strings"
	"testing"
)

// ElasticURL reads a value as Monocle 1.11.2's getURL does
// (src/CLI.hs:128-132: a lowercase "http://" or "https://" prefix is kept,
// anything else gets "http://"), and writes it so that the paths Monocle
// joins with "/" (src/Database/Bloodhound/Raw.hs:74,84) are the ones it
// means.
func TestElasticURL(t *testing.T) {
	tests := []struct {
		value, want string
		refused     string // a word of the error, "" when accepted
	}{
		{value: "http://es:9200", want: "http://es:9200"},
		{value: "es:9200", want: "http://es:9200"},
		{value: "es", want: "http://es"},
		{value: "HTTP://es:9200", want: "http://es:9200"},
		{value: "http://es:9200/", want: "http://es:9200"},
		{value: "http://es:9200///", want: "http://es:9200"},
		{value: "http://u:p@es:9200", want: "http://u:p@es:9200"},
		{value: "http://es:9200/prefix/", want: "http://es:9200/prefix"},
		{value: "https://es:9200", refused: "https://"},
		{value: "HTTPS://es:9200", refused: "https://"},
		{value: "http://es:9200\n", refused: "control character"},
		{value: "http://es :9200", refused: "space"},
		{value: "http://es:9200?pretty", refused: "query"},
		{value: "http://es:9200#x", refused: "fragment"},
		{value: "http://es:0", refused: "port"},
		{value: "http://es:65536", refused: "port"},
		{value: "ftp://es:9200", refused: "port"}, // read as the host "ftp" and the port "//es:9200"
		{value: "http://", refused: "not a URL of a host"},
		{value: "", refused: "not a URL of a host"},
	}
	for _, tc := range tests {
		got, err := ElasticURL(tc.value)
		switch {
		case tc.refused == "" && (err != nil || got != tc.want):
			t.Errorf("ElasticURL(%q) = %q, %v; want %q", tc.value, got, err, tc.want)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("ElasticURL(%q) = %q, %v; want an error saying %q", tc.value, got, err, tc.refused)
		case err != nil && strings.Contains(err.Error(), "es:"):
			t.Errorf("ElasticURL(%q)'s error repeats the value (it may hold credentials): %v", tc.value, err)
		}
	}
	if _, err := ElasticURL("https://es"); !errors.Is(err, ErrElasticTLS) {
		t.Errorf("https: %v, want ErrElasticTLS", err)
	}
}
