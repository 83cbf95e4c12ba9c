package serve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key, as PEM files.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sno-iso test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	return certFile, keyFile
}

// Over TLS with a self-signed certificate, a client that does not verify it (as a BMC does
// not) gets the node's ISO at its capability URL, and boot.ipxe names https URLs.
func TestTLSSelfSigned(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	certFile, keyFile := selfSigned(t, t.TempDir())
	cfg, err := TLSConfig(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(ctx, tls.NewListener(ln, cfg)) }()
	defer func() {
		cancel()
		<-served
	}()
	base := "https://" + ln.Addr().String()
	bmc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(path string) (int, []byte) {
		resp, err := bmc.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	if status, body := get(h.path("/a.iso")); status != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("GET a's ISO over TLS: %d, %d bytes", status, len(body))
	}
	if status, body := get(h.path("/a/boot.ipxe")); status != 200 || !strings.Contains(string(body), "kernel "+base+h.path("/a/vmlinuz")) {
		t.Errorf("boot.ipxe over TLS: %d %q", status, body)
	}
	if status, _ := get("/a.iso"); status != 404 {
		t.Errorf("GET /a.iso over TLS without the token: %d", status)
	}
	if _, err := http.Get(base + h.path("/a.iso")); err == nil {
		t.Error("a client that verifies certificates accepted the self-signed one")
	}
}

func TestTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir)
	if _, err := TLSConfig(keyFile, certFile); err == nil || !strings.Contains(err.Error(), keyFile) {
		t.Errorf("swapped certificate and key: %v", err)
	}
	if _, err := TLSConfig(filepath.Join(dir, "none"), keyFile); err == nil {
		t.Error("a missing certificate was accepted")
	}
}
