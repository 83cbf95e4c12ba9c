package serve

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"slices"
	"time"

	"github.com/sno-iso/sno-iso/node"
)

// Content types of the artifacts.
const (
	isoType    = "application/x-iso9660-image"
	binaryType = "application/octet-stream"
	textType   = "text/plain; charset=utf-8"
)

// artifact is one served file: parts laid end to end, each either bytes in memory or a
// span of a file (the ISO, or a minimal ISO made from it). It is immutable and shared by
// every request for the same content.
type artifact struct {
	size    int64
	etag    string // strong, quoted
	modTime time.Time
	// datesValidate is false for an artifact with a node's bytes: its Last-Modified is the
	// ISO's (the same on every replica, whenever each read the node's files), which does
	// not change when the node's files do, so only its ETag validates it.
	datesValidate bool
	contentType   string
	file          *sourceFile // where file parts are read; nil when there are none
	parts         []part
}

// part is size bytes of an artifact from start: data, or the file's bytes at fileOff.
type part struct {
	start, size int64
	data        []byte
	fileOff     int64
}

// artifactBuilder lays parts end to end and hashes what identifies the content.
type artifactBuilder struct {
	a *artifact
	h hash.Hash
}

// newArtifact starts an artifact whose identity is derived from identity (the source
// file's, and what makes this artifact differ from other artifacts over it).
func newArtifact(file *sourceFile, contentType string, modTime time.Time, identity ...string) *artifactBuilder {
	b := &artifactBuilder{a: &artifact{file: file, contentType: contentType, modTime: modTime.UTC().Truncate(time.Second)}, h: sha256.New()}
	if file != nil {
		io.WriteString(b.h, file.id)
	}
	for _, s := range identity {
		fmt.Fprintf(b.h, "%d:%s", len(s), s)
	}
	return b
}

// addData adds bytes held in memory: the pieces are one record of the identity, however
// they are split.
func (b *artifactBuilder) addData(pieces ...[]byte) {
	total := 0
	for _, data := range pieces {
		total += len(data)
	}
	if total == 0 {
		return
	}
	fmt.Fprintf(b.h, "d%d:", total)
	for _, data := range pieces {
		if len(data) > 0 {
			b.a.parts = append(b.a.parts, part{start: b.a.size, size: int64(len(data)), data: data})
			b.a.size += int64(len(data))
			b.h.Write(data)
		}
	}
}

func (b *artifactBuilder) addFile(off, size int64) {
	if size == 0 {
		return
	}
	b.a.parts = append(b.a.parts, part{start: b.a.size, size: size, fileOff: off})
	b.a.size += size
	var rec [17]byte
	rec[0] = 'f'
	binary.BigEndian.PutUint64(rec[1:], uint64(off))
	binary.BigEndian.PutUint64(rec[9:], uint64(size))
	b.h.Write(rec[:])
}

func (b *artifactBuilder) done() *artifact {
	// The parts held in memory are the node's bytes; the file's are the ISO's.
	b.a.datesValidate = !slices.ContainsFunc(b.a.parts, func(p part) bool { return p.data != nil })
	sum := b.h.Sum(nil)
	b.a.etag = `"` + hex.EncodeToString(sum[:16]) + `"`
	return b.a
}

// composedArtifact serves c, whose base is file's bytes.
func composedArtifact(file *sourceFile, c *node.Composed, contentType string, modTime time.Time, identity ...string) *artifact {
	b := newArtifact(file, contentType, modTime, identity...)
	var data [][]byte // consecutive spans in memory
	for _, sp := range c.Spans() {
		if sp.Data != nil {
			data = append(data, sp.Data)
			continue
		}
		b.addData(data...)
		data = data[:0]
		b.addFile(sp.BaseOffset, sp.Size)
	}
	b.addData(data...)
	return b.done()
}
