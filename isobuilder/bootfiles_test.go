package isobuilder

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// An igninfo.json that places the Ignition area in a file the boot reads (the kernel, the
// initramfs, the EFI image, isolinux, a boot loader's configuration) is refused: `reset` would zero part of it.
func TestIgnitionAreaInABootFileIsRefused(t *testing.T) {
	base := fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")
	const igninfoAt = 413696
	for _, path := range []string{"images/pxeboot/vmlinuz", "images/pxeboot/initrd.img", "images/efiboot.img", "isolinux/isolinux.bin", "images/pxeboot/rootfs.img",
		"isolinux/isolinux.cfg", "zipl.prm"} {
		t.Run(path, func(t *testing.T) {
			iso := bytes.Clone(base)
			fixtures.SetFile(t, iso, "IGNINFO.JSO;1", igninfoAt, []byte(`{"file": "`+path+`", "offset": 0, "length": 8}`))
			_, err := OpenReader(bytes.NewReader(iso), int64(len(iso)))
			var area *AreaError
			if !errors.As(err, &area) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open: %v, want an AreaError naming %s", err, path)
			}
		})
	}
}

// The fixtures' own areas, including s390x's Ignition area inside images/cdboot.img, stay
// valid.
func TestFixtureAreasAreNotBootFiles(t *testing.T) {
	for _, name := range []string{"embed-areas-2020-09.iso", "embed-areas-2021-01.iso", "embed-areas-2021-12.iso",
		"embed-areas-2023-07.s390x.iso", "embed-areas-2023-07.x86_64.iso"} {
		iso := fixtures.Bytes(t, name)
		if _, err := OpenReader(bytes.NewReader(iso), int64(len(iso))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
