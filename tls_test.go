package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeKeyPair writes a new self-signed certificate for 127.0.0.1 and its
// key to certFile and keyFile, certificate first, as a rotation might.
func writeKeyPair(t *testing.T, certFile, keyFile string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "monocle-hook test"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert
}

// getHTTPS asks on a new connection, trusting only roots, and returns the
// status and the serial number of the certificate the server presented.
func getHTTPS(t *testing.T, url string, roots ...*x509.Certificate) (int, *big.Int) {
	t.Helper()
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		DisableKeepAlives: true,
	}}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.TLS.PeerCertificates[0].SerialNumber
}

// The hook serves HTTPS with the files' key pair, and serves a new pair
// written to the same files without a restart.
func TestServeTLSReloadsTheKeyPair(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := writeKeyPair(t, certFile, keyFile)

	logs := &syncBuffer{}
	addr := startServe(t, logs,
		"--listen=127.0.0.1:0", "--tls-cert-file="+certFile, "--tls-key-file="+keyFile)
	url := "https://" + addr + "/healthz"

	code, serial := getHTTPS(t, url, first)
	if code != 200 || serial.Cmp(first.SerialNumber) != 0 {
		t.Fatalf("got %d with serial %v, want 200 with %v", code, serial, first.SerialNumber)
	}

	second := writeKeyPair(t, certFile, keyFile)
	deadline := time.Now().Add(5 * time.Second)
	for {
		time.Sleep(certCheckInterval / 4)
		// Trusting both: a request before the reload gets the first.
		code, serial = getHTTPS(t, url, first, second)
		if code != 200 {
			t.Fatalf("got %d", code)
		}
		if serial.Cmp(second.SerialNumber) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still serving serial %v, want the new %v", serial, second.SerialNumber)
		}
	}
	if code, _ := getHTTPS(t, url, second); code != 200 {
		t.Fatalf("with only the new certificate trusted: %d", code)
	}

	out := logs.String()
	if !strings.Contains(out, `"msg":"reloaded TLS certificate"`) || !strings.Contains(out, `"serial":"`+second.SerialNumber.String()+`"`) {
		t.Errorf("no reload logged with the new serial:\n%s", out)
	}
	if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "BEGIN") {
		t.Errorf("PEM in the log:\n%s", out)
	}
}

// A pair that does not load (here: a truncated key) is logged and the last
// good one kept; files are looked at no more than once per interval.
func TestCertReloaderKeepsTheLastGoodPair(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := writeKeyPair(t, certFile, keyFile)
	logs := &syncBuffer{}
	r, err := newCertReloader(certFile, keyFile, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r.now = func() time.Time { return now }
	r.checked = now
	serving := func() *big.Int {
		t.Helper()
		c, err := r.GetCertificate(nil)
		if err != nil || c == nil || c.Leaf == nil {
			t.Fatalf("GetCertificate: %v, %v", c, err)
		}
		return c.Leaf.SerialNumber
	}

	second := writeKeyPair(t, certFile, keyFile)
	now = now.Add(certCheckInterval / 2)
	if got := serving(); got.Cmp(first.SerialNumber) != 0 {
		t.Fatalf("reloaded %v within the interval", got)
	}
	now = now.Add(certCheckInterval / 2)
	if got := serving(); got.Cmp(second.SerialNumber) != 0 {
		t.Fatalf("serving %v after the interval, want %v", got, second.SerialNumber)
	}

	key, _ := os.ReadFile(keyFile)
	writeKeyPair(t, certFile, keyFile)
	if err := os.WriteFile(keyFile, key[:len(key)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(certCheckInterval)
	if got := serving(); got.Cmp(second.SerialNumber) != 0 {
		t.Fatalf("serving %v after a bad pair, want the last good %v", got, second.SerialNumber)
	}
	if !strings.Contains(logs.String(), "does not load: keeping the current certificate") {
		t.Errorf("bad pair not logged:\n%s", logs.String())
	}
	logged := strings.Count(logs.String(), "\n")
	now = now.Add(certCheckInterval)
	serving()
	if n := strings.Count(logs.String(), "\n"); n != logged {
		t.Errorf("the same bad pair logged again:\n%s", logs.String())
	}

	os.Remove(keyFile)
	for range 2 {
		now = now.Add(certCheckInterval)
		if got := serving(); got.Cmp(second.SerialNumber) != 0 {
			t.Fatalf("serving %v with the key missing, want %v", got, second.SerialNumber)
		}
	}
	if n := strings.Count(logs.String(), "unreadable"); n != 1 {
		t.Errorf("a missing key logged %d times, want once:\n%s", n, logs.String())
	}

	third := writeKeyPair(t, certFile, keyFile)
	now = now.Add(certCheckInterval)
	if got := serving(); got.Cmp(third.SerialNumber) != 0 {
		t.Fatalf("serving %v, want the repaired %v", got, third.SerialNumber)
	}
	if strings.Contains(logs.String(), "PRIVATE KEY") || strings.Contains(logs.String(), string(key[30:60])) {
		t.Errorf("key material in the log:\n%s", logs.String())
	}
}

func TestServeTLSFlagsGoTogether(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeKeyPair(t, certFile, keyFile)
	for name, args := range map[string][]string{
		"cert only":    {"--tls-cert-file=" + certFile},
		"key only":     {"--tls-key-file=" + keyFile},
		"missing file": {"--tls-cert-file=" + certFile, "--tls-key-file=" + filepath.Join(dir, "nope")},
		"swapped":      {"--tls-cert-file=" + keyFile, "--tls-key-file=" + certFile},
	} {
		t.Run(name, func(t *testing.T) {
			started := false
			// Were the flags accepted, serve would answer until this ends.
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			err := serve(ctx, append([]string{"--listen=127.0.0.1:0"}, args...),
				io.Discard, func(net.Addr) { started = true })
			if err == nil || started {
				t.Fatalf("serve: %v, started: %v", err, started)
			}
			t.Log(err)
		})
	}
}
