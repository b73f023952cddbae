package child

import (
	"errors"
	"strings"
	"testing"
)

// Monocle 1.11.2's getURL (src/CLI.hs:128-132) keeps a value starting with
// "http://" or "https://" and prepends "http://" to any other; the paths it
// joins with "/" make a trailing slash a "//".
func TestElasticURL(t *testing.T) {
	tests := []struct {
		name, value, want string
		wantErr           string // a part of the error, "" for none
	}{
		{name: "host and port alone read as http", value: "es:9200", want: "http://es:9200"},
		{name: "http kept", value: "http://es:9200", want: "http://es:9200"},
		{name: "uppercase scheme written lowercase", value: "HTTP://es:9200", want: "http://es:9200"},
		{name: "trailing slashes dropped", value: "http://es:9200//", want: "http://es:9200"},
		{name: "path kept, its slash dropped", value: "http://es:9200/prefix/", want: "http://es:9200/prefix"},
		{name: "https refused", value: "https://es:9200", wantErr: "is https://"},
		{name: "https in any case refused", value: "HTTPS://es", wantErr: "is https://"},
		{name: "final newline refused", value: "http://es:9200\n", wantErr: "control character"},
		{name: "escape refused", value: "es\x1b[31m:9200", wantErr: "control character"},
		{name: "DEL refused", value: "es:9200\x7f", wantErr: "control character"},
		{name: "space refused", value: "http://es 9200", wantErr: "space"},
		{name: "no host", value: "http:///path", wantErr: "not a URL of a host"},
		{name: "empty", value: "", wantErr: "not a URL of a host"},
		{name: "other scheme is a host with a bad port", value: "ftp://es", wantErr: "port"},
		{name: "port zero", value: "es:0", wantErr: "port"},
		{name: "port too large", value: "es:65536", wantErr: "port"},
		{name: "query refused", value: "es:9200?x=1", wantErr: "query or a fragment"},
		{name: "empty query refused", value: "es:9200/?", wantErr: "query or a fragment"},
		{name: "fragment refused", value: "es:9200#top", wantErr: "query or a fragment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ElasticURL(tt.value)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ElasticURL(%q) = %q, %v; want %q", tt.value, got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ElasticURL(%q) = %q, %v; want an error with %q", tt.value, got, err, tt.wantErr)
			}
			if got != "" {
				t.Errorf("ElasticURL(%q) = %q with an error; want \"\"", tt.value, got)
			}
		})
	}
}

// The error never repeats the value: it may hold credentials.
func TestElasticURLErrorHidesValue(t *testing.T) {
	for _, value := range []string{"https://user:secret@es", "http://user:secret@es:9200?q", "user:secret@es:0"} {
		_, err := ElasticURL(value)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("ElasticURL(%q) error = %v; want an error without the value", value, err)
		}
	}
	if _, err := ElasticURL("https://es"); !errors.Is(err, ErrElasticTLS) {
		t.Errorf("https error = %v; want ErrElasticTLS", err)
	}
}
