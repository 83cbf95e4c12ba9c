package presign

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestExpires(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want time.Time
		form string
	}{
		// The example of AWS's "Authenticating Requests: Using Query Parameters (SigV4)".
		{"https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE" +
			"%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host" +
			"&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
			time.Date(2013, 5, 25, 0, 0, 0, 0, time.UTC), "SigV4"},
		{"https://storage.googleapis.com/bucket/rhcos.iso?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Date=20261201T190859Z" +
			"&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=abc",
			time.Date(2026, 12, 1, 19, 23, 59, 0, time.UTC), "GCS V4"},
		// The legacy S3 (SigV2) example: Expires is the Unix time.
		{"https://awsexamplebucket1.s3.amazonaws.com/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM" +
			"%2BWFzoENXmpNDUsSn8%3D&Expires=1175139620", time.Unix(1175139620, 0).UTC(), "Expires"},
		// Parameter names in another case; an undecodable pair elsewhere in the query.
		{"https://s3.example.com/b/k?x-amz-date=20261203T120000Z&x-amz-expires=3600&junk=%zz",
			time.Date(2026, 12, 3, 13, 0, 0, 0, time.UTC), "SigV4"},
	} {
		got, ok, err := Expires(tc.url)
		if !ok || err != nil || !got.At.Equal(tc.want) || got.Form != tc.form {
			t.Errorf("%s:\n got %v %s, %v, %v; want %v %s", tc.url, got.At, got.Form, ok, err, tc.want, tc.form)
		}
	}
	for _, plain := range []string{"https://mirror.example.com/rhcos.iso", "https://example.com/x.iso?version=4.18", "http://[::1", ""} {
		if got, ok, err := Expires(plain); ok || err != nil {
			t.Errorf("%q: %v, %v, %v; want no expiry", plain, got, ok, err)
		}
	}
	for _, bad := range []string{
		"https://h/k?X-Amz-Date=20261203T120000Z&X-Amz-Expires=-1",
		"https://h/k?X-Amz-Date=20261203T120000Z&X-Amz-Expires=1e3",
		"https://h/k?X-Amz-Date=20261203T120000Z&X-Amz-Expires=99999999999999999999",
		"https://h/k?X-Amz-Date=20261203T120000Z&X-Amz-Expires=" + strconv.Itoa(int(MaxLifetime/time.Second)+1),
		"https://h/k?X-Amz-Date=2026-12-03T12:00:00Z&X-Amz-Expires=60",
		"https://h/k?X-Amz-Expires=60",
		"https://h/k?X-Goog-Date=20261203T120000Z&X-Goog-Expires=",
		"https://h/k?Expires=soon&Signature=SECRETSIG",
		"https://h/k?Expires=999999999999",
	} {
		_, ok, err := Expires(bad)
		if !ok || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, %v; want ErrMalformed", bad, ok, err)
		}
		if err != nil && strings.Contains(err.Error(), "SECRETSIG") {
			t.Errorf("%s: the error shows the signature: %v", bad, err)
		}
	}
}

// FuzzExpires: the signature never reaches an error, it never changes the answer, and an
// accepted expiry stated again in canonical SigV4 form reads back as the same time.
func FuzzExpires(f *testing.F) {
	f.Fuzz(func(t *testing.T, query, secret string) {
		base := "https://bucket.s3.example.com/rhcos.iso?" + query
		exp, ok, err := Expires(base)
		signed, sok, serr := Expires(base + "&X-Amz-Signature=" + url.QueryEscape(secret))
		if sok != ok || (err == nil) != (serr == nil) || !signed.At.Equal(exp.At) || signed.Form != exp.Form {
			t.Fatalf("%q: a signature changed the answer: %v %v %v, then %v %v %v", query, exp, ok, err, signed, sok, serr)
		}
		if serr != nil {
			if !ok || !errors.Is(serr, ErrMalformed) {
				t.Fatalf("%q: error %v with ok %v", query, serr, ok)
			}
			if len(secret) >= 8 && !strings.Contains(query, secret) && strings.Contains(serr.Error(), secret) {
				t.Fatalf("%q: the error shows the signature %q: %v", query, secret, serr)
			}
			return
		}
		if !ok {
			return
		}
		canonical := "https://h/k?X-Amz-Date=" + exp.At.UTC().Format(sigV4Date) + "&X-Amz-Expires=0"
		again, aok, aerr := Expires(canonical)
		if exp.At.Year() >= 1 && exp.At.Year() <= 9999 && (!aok || aerr != nil || !again.At.Equal(exp.At.Truncate(time.Second))) {
			t.Fatalf("%q: expiry %v restated as %q reads %v, %v, %v", query, exp.At, canonical, again.At, aok, aerr)
		}
	})
}
