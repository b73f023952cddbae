package child

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// ErrElasticTLS: the URL is https://, which Monocle 1.11.2's Elasticsearch
// client cannot speak: it is made with http-client's default manager
// (src/Monocle/Env.hs:39-42, HTTP.defaultManagerSettings), which has no TLS.
var ErrElasticTLS = errors.New("is https://: Monocle 1.11 speaks plain HTTP to Elasticsearch (http-client's default manager, no TLS); give an http:// URL")

// ElasticURL is an Elasticsearch URL as Monocle 1.11.2 reads it, written
// so that the paths Monocle joins to it are the ones it means, or why it
// cannot be. The error never repeats the value: it may hold credentials.
//
// Monocle's getURL (src/CLI.hs:128-132) takes a value starting with
// "http://" or "https://" as it is and prepends "http://" to any other:
// "es:9200" is http://es:9200. (The scheme is found by its prefix, not by
// net/url, which reads "es:9200" as the scheme "es".) A prefix in another
// case ("HTTP://") would be read as a host: it is written lowercase here.
//
// Monocle joins its paths to the URL with "/", in its own requests
// (src/Database/Bloodhound/Raw.hs:74,84) and in bloodhound 0.19.1.0's, the
// version Monocle's nix/default.nix:26-29 pins (joinPath': T.intercalate
// "/", src/Database/Bloodhound/Client.hs:241-247): a URL ending in "/"
// makes every path start with "//", so the trailing slashes are dropped.
// A query or a fragment would end up before the joined path: refused.
func ElasticURL(value string) (string, error) {
	rest := value
	switch {
	case hasPrefixFold(value, "https://"):
		return "", ErrElasticTLS
	case hasPrefixFold(value, "http://"):
		rest = value[len("http://"):]
	}
	if strings.ContainsFunc(value, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", errors.New("has a space or a control character (a final newline, from a file?): write it without, a space percent-encoded (%20)")
	}
	u, err := url.Parse("http://" + rest)
	if err != nil || u.Hostname() == "" || u.Opaque != "" {
		return "", errors.New("is not a URL of a host: give http://HOST:PORT (\"HOST:PORT\" alone is read as http://HOST:PORT)")
	}
	if strings.HasSuffix(u.Host, ":") || u.Port() != "" && !validPort(u.Port()) {
		return "", errors.New("has a port that is not a number from 1 to 65535 (a scheme other than http:// is read as a host with such a port)")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(rest, "#") {
		return "", errors.New("has a query or a fragment: Monocle appends its paths to the URL as written, after them")
	}
	return "http://" + strings.TrimRight(rest, "/"), nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}
