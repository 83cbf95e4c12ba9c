package redfish

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// patch sends a PATCH with If-Match set to the resource's ETag, read again when a change
// made it stale (empty ETags are not sent). On 412 it tries a weak ETag in its strong form,
// then no If-Match: BMCs that hand out weak ETags do not always accept them back.
func (c *Client) patch(ctx context.Context, path string, body any) error {
	c.mu.Lock()
	etag, known := c.etags[path]
	c.mu.Unlock()
	if !known {
		var current map[string]any
		if err := c.get(ctx, path, &current); err != nil {
			return err
		}
		c.mu.Lock()
		etag = c.etags[path]
		c.mu.Unlock()
	}
	defer c.forget(path)
	var err error
	for _, ifMatch := range ifMatchLadder(etag) {
		_, err = c.do(ctx, request{method: http.MethodPatch, path: path, body: body, ifMatch: ifMatch, retryTransient: true})
		var refusal *Error
		if !errors.As(err, &refusal) || refusal.StatusCode != http.StatusPreconditionFailed {
			return err
		}
	}
	return err
}

// forget drops the ETag of a resource that was just changed.
func (c *Client) forget(path string) {
	c.mu.Lock()
	delete(c.etags, path)
	c.mu.Unlock()
}

// ifMatchLadder is the If-Match values to try in turn for an ETag: itself, its strong form
// when it is weak, then none ("").
func ifMatchLadder(etag string) []string {
	etag = strings.TrimSpace(etag)
	tries := []string{etag}
	if tag, err := httpsem.ParseETag(etag); err == nil && tag.Weak {
		tries = append(tries, httpsem.ETag{Opaque: tag.Opaque}.String())
	}
	if etag != "" {
		tries = append(tries, "")
	}
	return tries
}
