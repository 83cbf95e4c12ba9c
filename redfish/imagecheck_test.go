package redfish

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckImage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			t.Errorf("the check sent %s, want HEAD: it must not download the image", r.Method)
		}
		if r.URL.Path != "/sno.iso" {
			http.NotFound(w, r)
		}
	}))
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	defer srv.Close()
	ctx := context.Background()
	if err := CheckImage(ctx, srv.Client(), srv.URL+"/sno.iso"); err != nil {
		t.Errorf("a served image: %v", err)
	}
	for url, want := range map[string]string{
		srv.URL + "/typo.iso":   "404 Not Found",
		closed.URL + "/sno.iso": "connection refused",
		"not a URL\x7f/sno.iso": "invalid",
	} {
		err := CheckImage(ctx, srv.Client(), url)
		if !errors.Is(err, ErrImageUnreachable) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want ErrImageUnreachable saying %q", url, err, want)
		}
	}
}
