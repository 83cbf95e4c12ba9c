package download

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzParseStream feeds stream metadata, as a mirror or a file may hold it, to the parser
// and the artifact selection: errors are fine, panics and unverifiable artifacts are not.
func FuzzParseStream(f *testing.F) {
	raw, err := os.ReadFile("testdata/rhcos-stream.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseStream(data)
		if err != nil {
			return
		}
		for arch := range s.Architectures {
			for _, format := range []string{FormatISO, FormatPXE} {
				artifacts, err := Select(s, arch, format)
				for _, a := range artifacts {
					if err == nil && (!IsSHA256(a.SHA256) || !isHTTPURL(a.URL)) {
						t.Fatalf("selected an artifact that cannot be verified: %+v", a)
					}
				}
			}
		}
	})
}

func FuzzParseSHA256Sums(f *testing.F) {
	f.Add([]byte(strings.Repeat("0a", 32) + "  rhcos-live.x86_64.iso\n" + strings.Repeat("1B", 32) + " *kernel\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sums, err := ParseSHA256Sums(data)
		if err != nil {
			return
		}
		for name, digest := range sums {
			if name == "" || !IsSHA256(digest) || strings.ToLower(digest) != digest {
				t.Fatalf("entry %q: %q", name, digest)
			}
		}
	})
}

// FuzzVerifySignature feeds a downloaded signature, untrusted bytes, to the verification.
func FuzzVerifySignature(f *testing.F) {
	signer := newSigner(f, "signer")
	keyring, err := ParseKeyring(armoredPublicKey(f, signer))
	if err != nil {
		f.Fatal(err)
	}
	signed := []byte("a live ISO")
	f.Add(detachSign(f, signer, signed))
	f.Add([]byte("-----BEGIN PGP SIGNATURE-----\n\nwnUEABYKACcFAmc=\n-----END PGP SIGNATURE-----\n"))
	f.Fuzz(func(t *testing.T, sig []byte) {
		if keyring.Verify(bytes.NewReader(signed), sig) != nil {
			return
		}
		// A signature that verifies is bound to the bytes: it does not verify others.
		if err := keyring.Verify(bytes.NewReader(append(bytes.Clone(signed), '!')), sig); err == nil {
			t.Fatalf("signature %x verifies both %q and other bytes", sig, signed)
		}
	})
}

// FuzzParseKeyring feeds a keyring file to the parser.
func FuzzParseKeyring(f *testing.F) {
	signer := newSigner(f, "signer")
	f.Add(armoredPublicKey(f, signer))
	f.Add(binaryPublicKey(f, signer))
	f.Fuzz(func(t *testing.T, data []byte) {
		if k, err := ParseKeyring(data); err == nil && len(k.entities) == 0 {
			t.Fatal("a keyring without keys")
		}
	})
}
