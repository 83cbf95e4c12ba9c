package initrd

import (
	"bytes"
	"path"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/ulikunitz/xz"
)

// FuzzRead checks that Read never panics and stays within MaxSize, and that what it reads
// survives WriteNewc and Read unchanged. The committed corpus holds small archives of every
// format; the CoreOS initrd fixtures are added as seeds when present (the target is skipped,
// with the fixture helper's message, when they are not).
func FuzzRead(f *testing.F) {
	f.Add(packOf(f, filesOf(IgnitionPath, `{"ignition":{"version":"3.4.0"}}`, NetworkDir+"/eth0.nmconnection", "[connection]\n")))
	f.Add(concat(
		newcOf(f, filesOf("plain", "p")),
		gzipOf(f, newcOf(f, filesOf("g", "gzip"))),
		xzOf(f, newcOf(f, filesOf("x", "xz")), xz.CRC64),
		zstdOf(f, newcOf(f, filesOf("z", "zstd"))),
	))
	f.Add(concat(rawNewcEntry("070702", "padded", 5, 0o100644, []byte("data")), rawNewcTrailer()))
	for _, name := range []string{"initrd-compressed.img", "initrd-redundant.img", "initrd-traversal-absolute.img", "initrd-traversal-relative.img"} {
		f.Add(fixtures.Bytes(f, name))
	}
	const maxSize = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := Read(bytes.NewReader(data), ReadOptions{MaxSize: maxSize})
		if err != nil {
			return
		}
		var total int
		for _, content := range files {
			total += len(content)
		}
		if total > maxSize {
			t.Fatalf("read %d bytes of files with MaxSize %d", total, maxSize)
		}
		storable := storableFiles(files)
		var archive bytes.Buffer
		if err := WriteNewc(&archive, storable); err != nil {
			t.Fatalf("WriteNewc(%q): %v", storable.Paths(), err)
		}
		again, err := Read(&archive, ReadOptions{})
		if err != nil {
			t.Fatalf("reading WriteNewc's archive of %q: %v", storable.Paths(), err)
		}
		if diff := equalFiles(again, storable); diff != "" {
			t.Fatalf("WriteNewc then Read: %s", diff)
		}
	})
}

// storableFiles keeps the files WriteNewc can store: canonical relative paths, none of which
// is also the parent directory of another.
func storableFiles(files Files) Files {
	storable := Files{}
	for p, data := range files {
		if checkArchivePath(p) == nil {
			storable[p] = data
		}
	}
	for p := range storable {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := files[dir]; ok {
				delete(storable, p)
				break
			}
		}
	}
	return storable
}
