package serve

import (
	"crypto/tls"
	"fmt"
	"sync"

	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/internal/input"
)

// TLSConfig serves the certificate and key of the PEM files certFile and keyFile, read again
// when either changes, so that a renewed certificate is used without a restart. BMCs accept
// self-signed certificates: they do not verify the image server. warn, when set, hears once
// of each replacement that cannot be used (the last good pair stays in use).
func TLSConfig(certFile, keyFile string, warn func(error)) (*tls.Config, error) {
	kp := &keyPair{certFile: certFile, keyFile: keyFile, warn: warn}
	if _, err := kp.certificate(nil); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.certificate}, nil
}

// keyPair is a certificate and its key as last read from their files.
type keyPair struct {
	certFile, keyFile string
	warn              func(error)

	mu     sync.Mutex
	stamps [2]filestamp.Stamp
	cert   *tls.Certificate
	// broken are the stamps of the files last found unusable: they are not read again.
	broken [2]filestamp.Stamp
}

// certificate returns the pair, read again if a file changed; a pair that became unusable
// leaves the last good one in use.
func (kp *keyPair) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	stamps := [2]filestamp.Stamp{filestamp.Of(kp.certFile), filestamp.Of(kp.keyFile)}
	kp.mu.Lock()
	defer kp.mu.Unlock()
	same := func(a, b [2]filestamp.Stamp) bool { return a[0].Same(b[0]) && a[1].Same(b[1]) }
	if kp.cert != nil && (same(stamps, kp.stamps) || same(stamps, kp.broken)) {
		return kp.cert, nil
	}
	cert, err := kp.load()
	if kp.cert != nil && err != nil {
		kp.broken = stamps
		if kp.warn != nil {
			kp.warn(fmt.Errorf("%w; still serving the previous certificate", err))
		}
		return kp.cert, nil
	}
	if err != nil {
		return nil, err
	}
	kp.cert, kp.stamps = &cert, stamps
	return kp.cert, nil
}

// maxPEMSize bounds a PEM certificate chain or key file: real ones take a few KiB.
const maxPEMSize = 1 << 20

// load reads the pair from its files, which must be regular files: a named pipe is refused
// at once, not waited on.
func (kp *keyPair) load() (tls.Certificate, error) {
	certPEM, err := input.ReadFile(kp.certFile, maxPEMSize, "a PEM certificate")
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS certificate: %w", err)
	}
	keyPEM, err := input.ReadFile(kp.keyFile, maxPEMSize, "a PEM private key")
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS certificate %s and key %s: %w", kp.certFile, kp.keyFile, err)
	}
	return cert, nil
}
