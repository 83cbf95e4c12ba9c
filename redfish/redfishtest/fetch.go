package redfishtest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// fetchStatusError is an image server's refusal of the virtual CD's GET.
type fetchStatusError struct{ code int }

func (e *fetchStatusError) Error() string {
	return fmt.Sprintf("GET answered %d %s", e.code, http.StatusText(e.code))
}

// maxFetch bounds an image the virtual CD fetches.
const maxFetch = 8 << 30

var fetchClient = &http.Client{Timeout: 2 * time.Minute}

// fetch downloads image into FetchDir as the profile's BMC does: one GET, or Range reads of
// FetchChunk bytes.
func (b *BMC) fetch(image string) (string, error) {
	f, err := os.CreateTemp(b.cfg.FetchDir, "virtual-cd-*.iso")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if chunk := b.cfg.Profile.FetchChunk; chunk > 0 {
		err = fetchRanges(f, image, chunk)
	} else {
		err = fetchWhole(f, image)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return filepath.Clean(f.Name()), nil
}

func fetchWhole(w io.Writer, image string) error {
	resp, err := fetchClient.Get(image)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &fetchStatusError{code: resp.StatusCode}
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, maxFetch+1))
	if err == nil && n > maxFetch {
		err = fmt.Errorf("the image is larger than %d bytes", int64(maxFetch))
	}
	return err
}

// fetchRanges reads the image chunk by chunk, learning its size from the first answer's
// Content-Range.
func fetchRanges(w io.Writer, image string, chunk int64) error {
	var size int64 = -1
	for off := int64(0); size < 0 || off < size; off += chunk {
		req, err := http.NewRequest(http.MethodGet, image, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+chunk-1))
		resp, err := fetchClient.Do(req)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusPartialContent {
			resp.Body.Close()
			return fmt.Errorf("GET with Range answered %s", resp.Status)
		}
		if size < 0 {
			cr, err := httpsem.ParseContentRange(resp.Header.Get("Content-Range"))
			if err != nil || cr.Size < 0 || cr.Size > maxFetch {
				resp.Body.Close()
				return fmt.Errorf("bad Content-Range %q", resp.Header.Get("Content-Range"))
			}
			size = cr.Size
		}
		_, err = io.Copy(w, io.LimitReader(resp.Body, chunk))
		resp.Body.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
