package download

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// newSigner makes an Ed25519 OpenPGP key, quick to generate, like the keys that sign releases.
func newSigner(t testing.TB, name string) *openpgp.Entity {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", name+"@example.org", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// armoredPublicKey is e's public key as one armored block.
func armoredPublicKey(t testing.TB, e *openpgp.Entity) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	buf.WriteString("\n")
	return buf.Bytes()
}

func binaryPublicKey(t testing.TB, e *openpgp.Entity) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := e.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// detachSign is a binary detached signature of data, as Fedora CoreOS publishes in NAME.sig.
func detachSign(t testing.TB, e *openpgp.Entity, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := openpgp.DetachSign(&buf, e, bytes.NewReader(data), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestKeyringReadsEveryArmoredBlock(t *testing.T) {
	other, signer := newSigner(t, "other"), newSigner(t, "signer")
	data := []byte("a live ISO")
	sig := detachSign(t, signer, data)
	// Fedora's key file is several armored blocks one after the other; the signer's is last.
	file := append(append([]byte("Fedora keys\n"), armoredPublicKey(t, other)...), armoredPublicKey(t, signer)...)
	k, err := ParseKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Verify(bytes.NewReader(data), sig); err != nil {
		t.Errorf("the last block's key does not verify: %v", err)
	}
	if err := k.Verify(bytes.NewReader([]byte("another ISO")), sig); err == nil {
		t.Error("a signature over other bytes verified")
	}
	var armored bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&armored, signer, bytes.NewReader(data), nil); err != nil {
		t.Fatal(err)
	}
	if err := k.Verify(bytes.NewReader(data), armored.Bytes()); err != nil {
		t.Errorf("an armored signature does not verify: %v", err)
	}
}

func TestKeyringBinaryAndUnknownSigner(t *testing.T) {
	signer, stranger := newSigner(t, "signer"), newSigner(t, "stranger")
	k, err := ParseKeyring(binaryPublicKey(t, signer))
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("a live ISO")
	err = k.Verify(bytes.NewReader(data), detachSign(t, stranger, data))
	if !errors.Is(err, pgperrors.ErrUnknownIssuer) {
		t.Errorf("a stranger's signature: got %v, want unknown issuer", err)
	}
}

func TestParseKeyringRejectsWhatIsNotAKey(t *testing.T) {
	signer := newSigner(t, "signer")
	var sigBlock bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&sigBlock, signer, bytes.NewReader([]byte("x")), nil); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":            nil,
		"text":             []byte("not a key\n"),
		"signature block":  sigBlock.Bytes(),
		"a key then a sig": append(armoredPublicKey(t, signer), sigBlock.Bytes()...),
	} {
		if _, err := ParseKeyring(data); err == nil {
			t.Errorf("%s: parsed as a keyring", name)
		}
	}
}
