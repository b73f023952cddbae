package main

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"
)

// certCheckInterval bounds how often the key pair's files are looked at:
// at most once per interval, and only when a TLS handshake asks for it.
const certCheckInterval = time.Second

// certReloader serves the key pair in certFile and keyFile, and picks up a
// new one when either file changes (a renewed Secret, mounted by the
// kubelet, is swapped in atomically). It never logs key material: only the
// file names, the certificate's serial number and expiry, and errors.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	now               func() time.Time

	mu      sync.Mutex
	cert    *tls.Certificate
	files   []byte // as last looked at (see read); nil while unreadable
	checked time.Time
}

// newCertReloader loads the key pair once: a pair that does not load at
// start is an error, not a server without a certificate.
func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log, now: time.Now}
	certPEM, keyPEM, files, err := r.read()
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading %s and %s: %w", certFile, keyFile, err)
	}
	r.cert, r.files, r.checked = &cert, files, r.now()
	r.log.Info("serving TLS", certAttrs(r, &cert)...)
	return r, nil
}

// GetCertificate is tls.Config.GetCertificate: the current pair, reloaded
// first if the files changed since the last check (at most once per
// certCheckInterval). A pair that fails to load is logged and the last good
// one kept; it is tried again once the files change again.
func (r *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); now.Sub(r.checked) >= certCheckInterval {
		r.checked = now
		r.reload()
	}
	return r.cert, nil
}

// reload compares the files' contents, not their mtime and size: a Secret
// re-issued within the same second with a key of the same size, or a
// filesystem with coarse timestamps, would otherwise go unnoticed. The files
// are small and read at most once per certCheckInterval.
func (r *certReloader) reload() {
	certPEM, keyPEM, files, err := r.read()
	if err != nil {
		// Keep serving and look again at the next check; log once until
		// the files are back.
		if r.files != nil {
			r.log.Warn("TLS key pair unreadable: keeping the current certificate", "error", err.Error())
			r.files = nil
		}
		return
	}
	if bytes.Equal(files, r.files) {
		return
	}
	r.files = files
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// Often the certificate is written before its key: the pair loads
		// once the key is written too, which changes the files again.
		r.log.Warn("TLS key pair changed but does not load: keeping the current certificate",
			"certFile", r.certFile, "keyFile", r.keyFile, "error", err.Error())
		return
	}
	r.cert = &cert
	r.log.Info("reloaded TLS certificate", certAttrs(r, &cert)...)
}

// read returns both files, and the two as one, a NUL between them: never
// empty, so never the nil of unreadable files.
func (r *certReloader) read() (certPEM, keyPEM, files []byte, err error) {
	if certPEM, err = os.ReadFile(r.certFile); err != nil {
		return nil, nil, nil, err
	}
	if keyPEM, err = os.ReadFile(r.keyFile); err != nil {
		return nil, nil, nil, err
	}
	return certPEM, keyPEM, slices.Concat(certPEM, []byte{0}, keyPEM), nil
}

// certAttrs describes a certificate for the log: never its key.
func certAttrs(r *certReloader, cert *tls.Certificate) []any {
	attrs := []any{"certFile", r.certFile, "keyFile", r.keyFile}
	if leaf := cert.Leaf; leaf != nil {
		attrs = append(attrs, "serial", leaf.SerialNumber.String(),
			"subject", leaf.Subject.String(), "notAfter", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return attrs
}

// tlsConfig is the server's TLS configuration for the key pair in certFile
// and keyFile, or nil when neither is set.
func tlsConfig(certFile, keyFile string, log *slog.Logger) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "" || keyFile == "":
		return nil, errors.New("--tls-cert-file and --tls-key-file go together: set both or neither")
	}
	r, err := newCertReloader(certFile, keyFile, log)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: r.GetCertificate,
	}, nil
}
