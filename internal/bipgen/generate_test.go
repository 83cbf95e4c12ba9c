package bipgen_test

import (
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/vincent-petithory/dataurl"
)

func generate(t *testing.T, opts bipgen.Options) []byte {
	t.Helper()
	out, err := bipgen.Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// files decodes every file of a generated config, by path.
func files(t *testing.T, raw []byte) map[string][]byte {
	t.Helper()
	var c struct {
		Storage struct {
			Files []struct {
				Path     string
				Contents struct{ Source, Compression string }
			}
		}
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range c.Storage.Files {
		u, err := dataurl.DecodeString(f.Contents.Source)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		data := u.Data
		if f.Contents.Compression == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
		}
		out[f.Path] = data
	}
	return out
}

func TestGenerateExactSizes(t *testing.T) {
	for _, size := range []int{150_000, 262_144, 700_000} {
		out := generate(t, bipgen.Options{Size: size, Seed: 3})
		if len(out) != size {
			t.Errorf("size %d: got %d bytes", size, len(out))
		}
		ig, _, err := coreos.ParseIgnition(out)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if ig.Version != "3.2.0" || !ig.IsBootstrapInPlace() {
			t.Errorf("size %d: version %s, bootstrap-in-place %v", size, ig.Version, ig.IsBootstrapInPlace())
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a := generate(t, bipgen.Options{Size: 200_000, Seed: 42})
	b := generate(t, bipgen.Options{Size: 200_000, Seed: 42})
	c := generate(t, bipgen.Options{Size: 200_000, Seed: 43})
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave different configs")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same config")
	}
}

// TestGenerateIsIncompressible: like the installer's, the config is mostly keys,
// certificates and secrets, so it compresses poorly — which is what fills embed areas.
func TestGenerateIsIncompressible(t *testing.T) {
	out := generate(t, bipgen.Options{Size: 300_000, Seed: 5})
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write(out)
	zw.Close()
	if ratio := float64(z.Len()) / float64(len(out)); ratio < 0.45 {
		t.Errorf("gzip shrinks it to %.0f%%: not realistic", ratio*100)
	}
}

func TestGenerateInstallerStructure(t *testing.T) {
	out := generate(t, bipgen.Options{Seed: 9, Disk: "/dev/disk/by-id/wwn-9"})
	fs := files(t, out)
	for _, path := range []string{
		"/usr/local/bin/bootkube.sh", "/usr/local/bin/install-to-disk.sh", "/usr/local/bin/bootstrap-in-place.sh",
		"/opt/openshift/master.ign", "/opt/openshift/auth/kubeconfig", "/opt/openshift/manifests/cluster-config.yaml",
		"/opt/openshift/tls/root-ca.key", "/opt/openshift/tls/root-ca.crt", "/opt/openshift/tls/service-account.key",
	} {
		if _, ok := fs[path]; !ok {
			t.Errorf("no %s", path)
		}
	}
	info, err := coreos.InspectIgnition(out)
	if err != nil || info.Installation.Disk != "/dev/disk/by-id/wwn-9" {
		t.Errorf("inspected %+v, %v", info, err)
	}
	if !bytes.Contains(out, []byte(`"compression":"gzip"`)) {
		t.Error("no gzip-compressed file")
	}

	// The root CA is a real RSA-2048 key whose certificate signs others.
	block, _ := pem.Decode(fs["/opt/openshift/tls/root-ca.key"])
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	block, _ = pem.Decode(fs["/opt/openshift/tls/root-ca.crt"])
	root, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if key.N.BitLen() != 2048 || !key.PublicKey.Equal(root.PublicKey) {
		t.Errorf("root key of %d bits, matches its certificate: %v", key.N.BitLen(), key.PublicKey.Equal(root.PublicKey))
	}
	signed := 0
	for path, data := range fs {
		if !strings.HasSuffix(path, ".crt") {
			continue
		}
		block, _ := pem.Decode(data)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if cert.CheckSignatureFrom(root) == nil {
			signed++
		}
	}
	if signed < 3 {
		t.Errorf("only %d certificates signed by the root CA", signed)
	}
	block, _ = pem.Decode(fs["/opt/openshift/tls/service-account.key"])
	if block == nil || len(block.Bytes) < 2200 { // PKCS#1 DER of an RSA-4096 key is about 2.3 KB
		t.Errorf("service-account.key is not RSA-4096 sized")
	}
}

func TestGenerateVersions(t *testing.T) {
	for _, version := range coreos.SupportedIgnitionVersions() {
		ig, warnings, err := coreos.ParseIgnition(generate(t, bipgen.Options{Seed: 1, Version: version}))
		if err != nil || ig.Version != version {
			t.Errorf("%s: %v", version, err)
		}
		if len(warnings) != 1 { // only the installer's install-to-disk.service without [Install]
			t.Errorf("%s: warnings %v", version, warnings)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, c := range []struct {
		opts bipgen.Options
		want string
	}{
		{bipgen.Options{Size: 1000}, "size 1000 is below"},
		{bipgen.Options{Size: -1}, "negative"},
		{bipgen.Options{Version: "2.2.0"}, `"2.2.0": choose one of`},
	} {
		if _, err := bipgen.Generate(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.opts, err, c.want)
		}
	}
}
