package initrd

import (
	"bytes"
	"strings"
	"testing"
)

// The block header of what Pack writes names the dictionary Pack chose, and the limit check
// reads it back from the stream's index, along with the archive's size.
func TestXZBlockDictionaryOfPack(t *testing.T) {
	files := Files{IgnitionPath: []byte(strings.Repeat("bootstrap-in-place ", 4096))}
	packed, err := Pack(files)
	if err != nil {
		t.Fatal(err)
	}
	var unpacked bytes.Buffer
	if err := WriteNewc(&unpacked, files); err != nil {
		t.Fatal(err)
	}
	const streamHeaderLen = 12
	dict, err := XZBlockDictionary(packed[streamHeaderLen:])
	if err != nil || dict == 0 {
		t.Fatalf("dictionary %d, %v", dict, err)
	}
	if declared, err := CheckXZDictionaries(packed, dict); err != nil {
		t.Errorf("at its own dictionary size: %v", err)
	} else if want := uint64(unpacked.Len()); declared != want {
		t.Errorf("the index declares %d bytes, the archive is %d", declared, want)
	}
	if _, err := CheckXZDictionaries(packed, dict-1); err == nil || !strings.Contains(err.Error(), "dictionary") {
		t.Errorf("below its dictionary size: %v", err)
	}
	for _, bad := range [][]byte{nil, {0}, {1, 0}, {2, 0x03, 0, 0}} {
		if _, err := XZBlockDictionary(bad); err == nil {
			t.Errorf("XZBlockDictionary(% x) accepted a bad header", bad)
		}
	}
}
