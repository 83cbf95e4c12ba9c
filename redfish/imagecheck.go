package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrImageUnreachable marks an image URL that did not answer a HEAD request with 200 from
// this machine. The BMC may still reach it (it can sit on another network), so callers
// usually warn rather than stop.
var ErrImageUnreachable = errors.New("the image URL is not reachable from here")

// imageCheckTimeout bounds the check: it precedes the boot and must not hold it up.
const imageCheckTimeout = 10 * time.Second

// CheckImage asks for the image's headers before a BMC is told to fetch it, so that a typo
// or a stopped server shows at once rather than as a BMC task that fails minutes later. The
// error wraps ErrImageUnreachable. client nil means http.DefaultClient.
func CheckImage(ctx context.Context, client *http.Client, image string) error {
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, imageCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, image, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrImageUnreachable, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrImageUnreachable, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: HEAD answered %s", ErrImageUnreachable, resp.Status)
	}
	return nil
}
