package isobuilder

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/sno-iso/sno-iso/embed"
)

// FuzzMinisoOutputBound: whatever miniso.dat says, unpacking never writes more than the full
// ISO's size, and succeeds only with the recorded digest. The seeds (testdata/fuzz) include
// tables that repeat the full ISO, xz indexes that lie, and MaxUint32/MaxUint64 fields.
func FuzzMinisoOutputBound(f *testing.F) {
	full := make([]byte, 64*SectorSize)
	for i := range full {
		full[i] = byte(i * 7)
	}
	f.Fuzz(func(t *testing.T, dat []byte) {
		m, err := embed.DecodeMiniso(dat)
		if err != nil {
			return
		}
		var out bytes.Buffer
		err = UnpackMinimal(bytes.NewReader(full), int64(len(full)), m, &out)
		if out.Len() > len(full) {
			t.Fatalf("wrote %d bytes, more than the %d-byte full ISO", out.Len(), len(full))
		}
		if err == nil && sha256.Sum256(out.Bytes()) != m.Digest {
			t.Fatal("UnpackMinimal succeeded but the output does not have the recorded digest")
		}
	})
}
