package s3test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/filelock"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// errUnreachable marks a build that failed because the Go toolchain or the module proxy could
// not be reached: a missing thing, not a broken test.
var errUnreachable = errors.New("the Go module proxy could not be reached")

var built struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the cached `weed` binary, building it on first use. The build
// runs once per test process; a file lock beside the cache keeps concurrent test processes
// (go test runs packages in parallel) from building it twice, and Go's build cache makes a
// rebuild after the cache directory is gone cheap. A missing go command or module proxy ends
// the test through testenv.Missing.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := Build()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, errUnreachable) {
			testenv.Missing(t, "cannot build the SeaweedFS test store: %v", err)
		}
		t.Fatalf("building the SeaweedFS test store: %v", err)
	}
	return bin
}

// Build is Binary for programs that are not tests (the benchmarks): the cached binary's
// path, or why it could not be built.
func Build() (string, error) {
	built.once.Do(func() { built.path, built.err = build() })
	return built.path, built.err
}

// moduleDir is the nested module that pins SeaweedFS, found beside this source file.
func moduleDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate internal/s3test's source")
	}
	dir := filepath.Join(filepath.Dir(file), "weed")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", err
	}
	return dir, nil
}

func build() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	modDir, err := moduleDir()
	if err != nil {
		return "", err
	}
	key, err := buildKey(goBin, modDir)
	if err != nil {
		return "", err
	}
	cacheRoot, err := os.UserCacheDir()
	if err != nil {
		cacheRoot = os.TempDir()
	}
	dir := filepath.Join(cacheRoot, "sno-iso", "s3test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "weed-"+key)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	lock, err := os.OpenFile(bin+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := filelock.Wait(context.Background(), lock, filelock.Exclusive, time.Second, filelock.Forever, nil); err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // another test process built it while this one waited
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	defer os.Remove(tmp)
	cmd := exec.Command(goBin, "build", "-o", tmp, "github.com/seaweedfs/seaweedfs/weed")
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", buildError(err, out.String())
	}
	return bin, os.Rename(tmp, bin)
}

// buildKey names a build by the pinned module versions and the toolchain.
func buildKey(goBin, modDir string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(modDir, name))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	version, err := exec.Command(goBin, "version").Output()
	if err != nil {
		return "", fmt.Errorf("go version: %w", err)
	}
	h.Write(version)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// buildError keeps the end of the build's output and tells an unreachable module proxy apart
// from a broken build.
func buildError(err error, out string) error {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	tail := strings.Join(lines, "\n")
	for _, sign := range []string{"dial tcp", "no such host", "connection refused", "i/o timeout", "proxyconnect", "TLS handshake timeout"} {
		if strings.Contains(out, sign) {
			return fmt.Errorf("%w: %v\n%s", errUnreachable, err, tail)
		}
	}
	return fmt.Errorf("go build: %v\n%s", err, tail)
}
