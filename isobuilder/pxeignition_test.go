package isobuilder

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
)

// A wrapped config unwraps to the same bytes, also after another archive; an archive
// without config.ign is a typed error.
func TestWrapUnwrapIgnition(t *testing.T) {
	for _, config := range [][]byte{[]byte(`{"ignition":{"version":"3.2.0"}}`), {}} {
		wrapped, err := WrapIgnition(config)
		if err != nil {
			t.Fatal(err)
		}
		other, err := initrd.Pack(initrd.Files{"etc/hostname": []byte("node\n")})
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnwrapIgnition(bytes.NewReader(append(other, wrapped...)))
		if err != nil || !bytes.Equal(got, config) {
			t.Errorf("UnwrapIgnition = %q, %v; want %q", got, err, config)
		}
		if _, err := UnwrapIgnition(bytes.NewReader(other)); !errors.Is(err, ErrNoIgnitionInArchive) {
			t.Errorf("an archive without config.ign: %v", err)
		}
	}
}
