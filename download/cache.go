package download

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/internal/filelock"
	"github.com/sno-iso/sno-iso/internal/redact"
)

// Cache keeps verified artifacts under Dir, one directory per sha256:
//
//	Dir/SHA256/NAME       the artifact, read-only, present only once verified
//	Dir/SHA256/NAME.part  a download in progress, resumed by the next Get
//	Dir/SHA256/NAME.sig   its OpenPGP signature, when one was checked
//	Dir/SHA256/.lock      locked by the process downloading; holds the part's validator
//
// An entry is trusted by its name: a hit needs neither network nor hashing.
type Cache struct {
	Dir     string
	Fetcher *Fetcher
	// Keyring, when set, must verify every artifact's detached OpenPGP signature.
	Keyring *Keyring
	// lockPoll is how often a process waiting for another's download tries the lock.
	lockPoll time.Duration
}

// maxSignatureSize bounds a detached signature read into memory.
const maxSignatureSize = 64 << 10

// DefaultCacheDir is sno-iso's directory in the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache on Linux).
func DefaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "sno-iso"), nil
}

// Get returns the path of a in the cache, downloading and verifying it first when missing.
// Two processes asking for one artifact download it once: the second waits for the first.
func (c *Cache) Get(ctx context.Context, a Artifact) (string, error) {
	a.SHA256 = strings.ToLower(a.SHA256) // the entry's name, and what Fetch compares
	if err := a.check(); err != nil {
		return "", err
	}
	if c.Keyring != nil && a.SignatureURL == "" {
		return "", fmt.Errorf("%s: %w", redact.URL(a.URL), ErrNoSignature)
	}
	entry, err := c.openEntry(a.SHA256)
	if err != nil {
		return "", err
	}
	defer entry.Close()
	final := filepath.Join(c.Dir, a.SHA256, a.Name())
	if ok, err := c.lookup(ctx, a, entry, final); ok || err != nil {
		return final, err
	}
	lock, err := c.lock(ctx, entry, ".lock")
	if err != nil {
		return "", err
	}
	defer func() {
		filelock.Unlock(lock)
		lock.Close()
	}()
	// The process that held the lock may have just finished this very entry.
	if ok, err := c.lookup(ctx, a, entry, final); ok || err != nil {
		return final, err
	}
	if err := c.fill(ctx, a, entry, lock); err != nil {
		return "", err
	}
	return final, nil
}

// openEntry opens (making it) the entry directory of sha256 as an os.Root: every file of the
// entry is opened below it, so an entry directory that is a symbolic link (or one swapped in
// later) can never make the cache write, lock or read outside Dir.
func (c *Cache) openEntry(sha256 string) (*os.Root, error) {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(c.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := root.Mkdir(sha256, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	if st, err := root.Lstat(sha256); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("cache entry %s is a symbolic link, not followed; remove it", filepath.Join(c.Dir, sha256))
	}
	entry, err := root.OpenRoot(sha256)
	if err != nil {
		return nil, fmt.Errorf("cache entry %s: %w", filepath.Join(c.Dir, sha256), err)
	}
	return entry, nil
}

// lookup reports whether the artifact (final, a.Name() in entry) is in the cache, checking
// its signature when asked to.
func (c *Cache) lookup(ctx context.Context, a Artifact, entry *os.Root, final string) (bool, error) {
	st, err := entry.Lstat(a.Name())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() {
		return false, fmt.Errorf("cache entry %s is not a regular file; remove it", final)
	}
	if c.Keyring == nil {
		return true, nil
	}
	return true, c.checkSignature(ctx, a, entry, a.Name())
}

// fill downloads a into its entry, holding the entry's lock.
func (c *Cache) fill(ctx context.Context, a Artifact, entry *os.Root, lock *os.File) error {
	part := &Part{Root: entry, Path: a.Name() + ".part", Validator: readValidator(lock),
		SaveValidator: func(v string) error { return writeValidator(lock, v) }}
	if err := c.Fetcher.Fetch(ctx, a, part); err != nil {
		removeIfEmpty(entry, part.Path)
		return err
	}
	if c.Keyring != nil {
		if err := c.checkSignature(ctx, a, entry, part.Path); err != nil {
			var bad *SignatureError
			if errors.As(err, &bad) {
				entry.Remove(part.Path)
			}
			return err
		}
	}
	// Read-only: commands that edit an ISO in place must not edit the cache's copy.
	if err := entry.Chmod(part.Path, 0o444); err != nil {
		return err
	}
	if err := entry.Rename(part.Path, a.Name()); err != nil {
		return err
	}
	return syncDir(entry)
}

// checkSignature verifies path with a's detached signature, kept beside the entry as
// NAME.sig so that a later hit needs no network.
func (c *Cache) checkSignature(ctx context.Context, a Artifact, entry *os.Root, name string) error {
	if a.SignatureURL == "" {
		return fmt.Errorf("%s: %w", redact.URL(a.URL), ErrNoSignature)
	}
	sigName := a.Name() + ".sig"
	sig, err := entry.ReadFile(sigName)
	fetched := errors.Is(err, fs.ErrNotExist)
	if fetched {
		sig, err = c.Fetcher.Get(ctx, a.SignatureURL, maxSignatureSize)
	}
	if err != nil {
		return err
	}
	f, err := entry.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := c.Keyring.Verify(f, sig); err != nil {
		return &SignatureError{URL: redact.URL(a.URL), Err: err}
	}
	if fetched {
		return writeFileAtomic(entry, sigName, sig)
	}
	return nil
}

// lock takes the entry's lock file name, waiting for another process that holds it.
func (c *Cache) lock(ctx context.Context, entry *os.Root, name string) (*os.File, error) {
	path := filepath.Join(entry.Name(), name)
	f, err := openNoFollow(entry, name)
	if err != nil {
		return nil, err
	}
	poll := c.lockPoll
	if poll == 0 {
		poll = 200 * time.Millisecond
	}
	err = filelock.Wait(ctx, f, filelock.Exclusive, poll, filelock.Forever, func() { c.Fetcher.progress().Wait(path) })
	if err != nil {
		f.Close()
		if ctx.Err() == nil {
			err = fmt.Errorf("locking %s: %w", path, err)
		}
		return nil, err
	}
	return f, nil
}

// maxValidatorSize bounds what is read back from a lock file; validators are short.
const maxValidatorSize = 1024

func readValidator(lock *os.File) string {
	buf := make([]byte, maxValidatorSize)
	n, _ := lock.ReadAt(buf, 0)
	return string(bytes.TrimSpace(buf[:n]))
}

func writeValidator(lock *os.File, v string) error {
	if err := lock.Truncate(0); err != nil {
		return err
	}
	_, err := lock.WriteAt([]byte(v), 0)
	return err
}

func removeIfEmpty(entry *os.Root, name string) {
	if st, err := entry.Lstat(name); err == nil && st.Size() == 0 {
		entry.Remove(name)
	}
}

// writeFileAtomic writes data to name in entry through a temporary file and a rename.
func writeFileAtomic(entry *os.Root, name string, data []byte) error {
	tmpName := fmt.Sprintf(".tmp-%s-%d", name, time.Now().UnixNano())
	tmp, err := entry.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = entry.Rename(tmpName, name)
	}
	if err != nil {
		entry.Remove(tmpName)
	}
	return err
}

// syncDir makes a rename in the entry durable; Windows has no directory fsync and needs none.
func syncDir(entry *os.Root) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := entry.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// Upload puts the cached artifact a into bucket under key (see Uploader.Upload), holding a
// lock of the entry so that two processes of this machine never upload it at once.
func (c *Cache) Upload(ctx context.Context, a Artifact, u *Uploader, bucket, key string) (Uploaded, error) {
	a.SHA256 = strings.ToLower(a.SHA256)
	if err := a.check(); err != nil {
		return Uploaded{}, err
	}
	entry, err := c.openEntry(a.SHA256)
	if err != nil {
		return Uploaded{}, err
	}
	defer entry.Close()
	lock, err := c.lock(ctx, entry, ".upload.lock")
	if err != nil {
		return Uploaded{}, err
	}
	defer func() {
		filelock.Unlock(lock)
		lock.Close()
	}()
	// The entry's file is opened inside the entry and never through a symbolic link: a link
	// could name any file. Upload hashes what it sends, so a file changed since it was
	// checked is never completed under the digest.
	f, err := openFileNoFollow(entry, a.Name(), os.O_RDONLY)
	if err != nil {
		return Uploaded{}, err
	}
	defer f.Close()
	return u.Upload(ctx, f, a.SHA256, bucket, key)
}
