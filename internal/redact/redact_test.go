package redact

import "testing"

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@s3.example:9000/b/k.iso?sig=1#f":                          "https://s3.example:9000/b/k.iso",
		"https://h/k.iso?X-Amz-Credential=AK&X-Amz-Signature=abc&X-Amz-Expires=60": "https://h/k.iso",
		"http://h/a%0Ab.iso":    "http://h/a%0Ab.iso",
		"http://h/%zz":          "(an unparsable URL)",
		"https://token@h/x.iso": "https://h/x.iso",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
