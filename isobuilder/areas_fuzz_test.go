package isobuilder

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// FuzzValidateAreas crafts the metadata that places embed areas (igninfo.json, kargs.json,
// the legacy system-area headers, the extent of images/ignition.img) into the 2023-07 x86_64
// fixture; an empty kargs.json removes it, so that the coreKarg header counts. Whatever it
// says, an ISO that opens is reset without touching the system area, the volume descriptors
// or any directory: the result has the same file tree.
func FuzzValidateAreas(f *testing.F) {
	base := fixtures.Bytes(f, "embed-areas-2023-07.x86_64.iso")
	const igninfoAt, kargsAt, headersAt = 413696, 415744, 32672
	f.Add([]byte(`{"file": "images/ignition.img"}`), base[kargsAt:kargsAt+385], make([]byte, 96), uint32(68), uint32(262144))
	f.Fuzz(func(t *testing.T, igninfo, kargs, headers []byte, ignLBA, ignLen uint32) {
		if len(igninfo) > SectorSize || len(kargs) > SectorSize || len(headers) > 96 {
			return
		}
		iso := bytes.Clone(base)
		fixtures.SetFile(t, iso, "IGNINFO.JSO;1", igninfoAt, igninfo)
		fixtures.SetFile(t, iso, "KARGS.JSO;1", kargsAt, kargs)
		if len(kargs) == 0 { // no kargs.json: the legacy coreKarg header is read instead
			iso[fixtures.DirectoryRecord(t, iso, "KARGS.JSO;1")+33] = 'X'
		}
		copy(iso[headersAt:], headers)
		fixtures.SetExtent(iso, fixtures.DirectoryRecord(t, iso, "IGNITION.IMG;1"), ignLBA, ignLen)
		l, err := OpenReader(bytes.NewReader(iso), int64(len(iso)))
		if err != nil {
			return
		}
		patches := []Patch{}
		if empty, err := l.PayloadPatch(nil); err == nil {
			patches = append(patches, empty)
		}
		if k := l.Kargs(); k != nil {
			if kargs, err := l.KargsPatches(k.Default); err == nil {
				patches = append(patches, kargs...)
			}
		}
		img, err := l.Image(patches...)
		if err != nil {
			return // overlapping patches are refused by the image itself
		}
		var out bytes.Buffer
		if _, err := img.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		descriptorsEnd := (descriptorLBA + len(l.Volume().Descriptors) + 1) * SectorSize
		if !bytes.Equal(out.Bytes()[:descriptorsEnd], iso[:descriptorsEnd]) {
			t.Fatal("reset changed the system area or the volume descriptors")
		}
		if before, after := fileTree(t, iso), fileTree(t, out.Bytes()); before != after {
			t.Fatalf("reset changed the file tree:\n%s\nbecame\n%s", before, after)
		}
	})
}

// fileTree lists every record of an image's primary volume with its extent.
func fileTree(t *testing.T, iso []byte) string {
	vol, err := ReadVolume(bytes.NewReader(iso), int64(len(iso)))
	if err != nil {
		return "unreadable: " + err.Error()
	}
	var b strings.Builder
	err = vol.Walk(func(e WalkEntry) error {
		fmt.Fprintf(&b, "%s %d %d %v\n", e.DisplayPath, e.LBA, e.Length, e.Dir)
		return nil
	})
	if err != nil {
		fmt.Fprintf(&b, "walk: %v", err)
	}
	return b.String()
}
