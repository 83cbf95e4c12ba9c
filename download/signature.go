package download

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
)

// Keyring holds the OpenPGP public keys that artifacts' detached signatures must verify with.
type Keyring struct {
	entities openpgp.EntityList
}

var armorBegin = []byte("-----BEGIN ")

// ParseKeyring reads every key of data: one or more ASCII-armored blocks one after the other
// (as Fedora publishes its keys), or binary key packets.
func ParseKeyring(data []byte) (*Keyring, error) {
	if !bytes.Contains(data, armorBegin) {
		el, err := openpgp.ReadKeyRing(bytes.NewReader(data))
		if err == nil && len(el) == 0 {
			err = errors.New("empty")
		}
		if err != nil {
			return nil, fmt.Errorf("no OpenPGP public keys: %w", err)
		}
		return &Keyring{entities: el}, nil
	}
	var k Keyring
	// armor.Decode reads past the end of its block, so each block is decoded on its own.
	for i, block := range splitArmor(data) {
		b, err := armor.Decode(bytes.NewReader(block))
		if err != nil {
			return nil, fmt.Errorf("armored block %d: %w", i+1, err)
		}
		if b.Type != openpgp.PublicKeyType {
			return nil, fmt.Errorf("armored block %d is a %q, not a public key block", i+1, b.Type)
		}
		el, err := openpgp.ReadKeyRing(b.Body)
		if err != nil {
			return nil, fmt.Errorf("armored block %d: %w", i+1, err)
		}
		k.entities = append(k.entities, el...)
	}
	if len(k.entities) == 0 {
		return nil, errors.New("no OpenPGP public keys")
	}
	return &k, nil
}

// splitArmor cuts data at each armor header line.
func splitArmor(data []byte) [][]byte {
	var blocks [][]byte
	for {
		start := bytes.Index(data, armorBegin)
		if start < 0 {
			return blocks
		}
		data = data[start:]
		next := bytes.Index(data[len(armorBegin):], armorBegin)
		if next < 0 {
			return append(blocks, data)
		}
		blocks = append(blocks, data[:len(armorBegin)+next])
		data = data[len(armorBegin)+next:]
	}
}

// Verify checks signature, detached and binary or ASCII-armored, over signed.
func (k *Keyring) Verify(signed io.Reader, signature []byte) error {
	var err error
	if bytes.HasPrefix(bytes.TrimSpace(signature), armorBegin) {
		_, err = openpgp.CheckArmoredDetachedSignature(k.entities, signed, bytes.NewReader(signature), nil)
	} else {
		_, err = openpgp.CheckDetachedSignature(k.entities, signed, bytes.NewReader(signature), nil)
	}
	return err
}
