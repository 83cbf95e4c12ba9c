package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/input"
)

// Over TLS with a self-signed certificate, a client that does not verify it (as a BMC does
// not) gets the node's ISO at its capability URL, and boot.ipxe names https URLs.
func TestTLSSelfSigned(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	certFile, keyFile := fixtures.SelfSignedCert(t, t.TempDir())
	cfg, err := TLSConfig(certFile, keyFile, nil)
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
	certFile, keyFile := fixtures.SelfSignedCert(t, dir)
	if _, err := TLSConfig(keyFile, certFile, nil); err == nil || !strings.Contains(err.Error(), keyFile) {
		t.Errorf("swapped certificate and key: %v", err)
	}
	if _, err := TLSConfig(filepath.Join(dir, "none"), keyFile, nil); err == nil {
		t.Error("a missing certificate was accepted")
	}
}

// A named pipe given as the certificate or the key is refused at once, naming it, rather
// than waited on in open(2).
func TestTLSConfigRefusesNamedPipe(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := fixtures.SelfSignedCert(t, dir)
	fifo := filepath.Join(dir, "fifo.pem")
	fixtures.NamedPipe(t, fifo)
	for _, pair := range [][2]string{{fifo, keyFile}, {certFile, fifo}} {
		_, err := TLSConfig(pair[0], pair[1], nil)
		if !errors.Is(err, input.ErrNotRegular) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "must be a regular file") {
			t.Errorf("TLSConfig(%s, %s): %v, want a refusal naming the pipe", pair[0], pair[1], err)
		}
	}
}

// A renewed certificate is served without a restart; a broken renewal leaves the last good
// one in use.
func TestTLSCertificateRenewed(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := fixtures.SelfSignedCert(t, dir)
	cfg, err := TLSConfig(certFile, keyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := cfg.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	renewed := t.TempDir()
	newCert, newKey := fixtures.SelfSignedCert(t, renewed)
	for from, to := range map[string]string{newCert: certFile, newKey: keyFile} {
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}
	second, err := cfg.GetCertificate(nil)
	if err != nil || bytes.Equal(second.Certificate[0], first.Certificate[0]) {
		t.Fatalf("after renewal: the same certificate, or %v", err)
	}
	if err := os.WriteFile(keyFile, []byte("broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if third, err := cfg.GetCertificate(nil); err != nil || !bytes.Equal(third.Certificate[0], second.Certificate[0]) {
		t.Errorf("after a broken renewal: %v, want the last good certificate", err)
	}
}
