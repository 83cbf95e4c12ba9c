package origin

import "testing"

// FuzzParseContentRange: an origin's Content-Range never panics the parser, and what it
// accepts is a range within the size that prints back as it was sent.
func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-1023/1048576", "bytes */100", "bytes 9-0/10", "bytes 0-0/1", "bytes 1-2/3/4", "bytes 00-1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cr, err := ParseContentRange(s)
		if err != nil {
			return
		}
		if cr.First < 0 || cr.First > cr.Last || cr.Last >= cr.Size {
			t.Fatalf("%q accepted as %+v", s, cr)
		}
		again, err := ParseContentRange(cr.String())
		if err != nil || again != cr {
			t.Fatalf("%q: %+v prints as %q, which parses as %+v, %v", s, cr, cr.String(), again, err)
		}
	})
}
