package embed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// kargsJSON is coreos/kargs.json, read by FindKargs and rewritten by RewriteKargsJSON. Pad
// and End are nil when the file leaves them out.
type kargsJSON struct {
	Default string `json:"default"`
	Files   []struct {
		Path   string  `json:"path"`
		Offset int64   `json:"offset"`
		Pad    *string `json:"pad"`
		End    *string `json:"end"`
	} `json:"files"`
	Size int `json:"size"`
}

// RewriteKargsJSON returns coreos/kargs.json with a new default, in the form coreos-installer
// writes it (pretty JSON with 2-space indentation, keys default, files (path, offset, pad,
// end), size), right-padded with spaces to the original length so that the file keeps its
// extent.
func RewriteKargsJSON(raw []byte, newDefault string) ([]byte, error) {
	data, err := FormatKargsJSON(raw, newDefault)
	if err != nil {
		return nil, err
	}
	if len(data) > len(raw) {
		return nil, fmt.Errorf("new version of %s does not fit in space (%d vs %d bytes); "+
			"the new default kernel arguments are too long", kargsJSONPath, len(data), len(raw))
	}
	return append(data, bytes.Repeat([]byte{' '}, len(raw)-len(data))...), nil
}

// FormatKargsJSON returns coreos/kargs.json with a new default in coreos-installer's form.
func FormatKargsJSON(raw []byte, newDefault string) ([]byte, error) {
	var j kargsJSON
	if err := json.Unmarshal(bytes.TrimRight(raw, " \x00"), &j); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", kargsJSONPath, err)
	}
	var b bytes.Buffer
	b.WriteString("{\n  \"default\": ")
	writeJSONString(&b, newDefault)
	b.WriteString(",\n  \"files\": [")
	for i, f := range j.Files {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    {\n      \"path\": ")
		writeJSONString(&b, f.Path)
		b.WriteString(",\n      \"offset\": " + strconv.FormatInt(f.Offset, 10))
		if f.Pad != nil {
			b.WriteString(",\n      \"pad\": ")
			writeJSONString(&b, *f.Pad)
		}
		if f.End != nil {
			b.WriteString(",\n      \"end\": ")
			writeJSONString(&b, *f.End)
		}
		b.WriteString("\n    }")
	}
	if len(j.Files) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("],\n  \"size\": " + strconv.Itoa(j.Size) + "\n}")
	return b.Bytes(), nil
}

// writeJSONString writes s as a JSON string escaped the way serde_json (coreos-installer's
// serializer) escapes it: quote, backslash and the short forms of \b \f \n \r \t, other
// control characters as lowercase \u00xx, everything else as is.
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}
