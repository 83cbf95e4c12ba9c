package isobuilder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/sno-iso/sno-iso/embed"
)

const (
	rootfsPath    = "IMAGES/PXEBOOT/ROOTFS.IMG"
	kargsJSONPath = "COREOS/KARGS.JSO"
	// liveISOKarg names the volume the initramfs mounts the root file system from; a minimal
	// ISO has no root file system to mount, so it goes.
	liveISOKarg = "coreos.liveiso="
	// rootfsURLKarg tells the initramfs where to fetch the root file system instead.
	rootfsURLKarg = "coreos.live.rootfs_url="
)

// ErrCustomized is returned when a minimal ISO is asked of an ISO that carries an embedded
// payload or edited kernel arguments: miniso.dat rebuilds the minimal ISO from the pristine
// bytes, so it would come out corrupt. The text is coreos-installer's, which scripts grep for.
var ErrCustomized = errors.New("Cannot operate on ISO with embedded customizations")

// ErrNoMiniso is returned by MinimalFromMiniso for ISOs without coreos/miniso.dat.
var ErrNoMiniso = errors.New("this ISO image does not support extracting a minimal ISO: it has no coreos/miniso.dat")

// MinimalOptions are the choices of a minimal ISO.
type MinimalOptions struct {
	// RootfsURL, when set, is added as coreos.live.rootfs_url= to the live kernel arguments.
	RootfsURL string
}

// CheckRootfsURL refuses a URL that cannot be one kernel argument, or that a bootloader would
// cut short: white space splits the argument, and the GRUB and isolinux command lines cannot
// carry quotes, '$' or '\' through to the kernel.
func CheckRootfsURL(url string) error {
	if strings.IndexFunc(url, unicode.IsSpace) >= 0 {
		return fmt.Errorf("rootfs URL: forbidden whitespace found in '%s'; percent-encode it (a space is %%20)", url)
	}
	if i := strings.IndexAny(url, "\"'$\\"); i >= 0 {
		return fmt.Errorf("rootfs URL '%s' contains %q, which the bootloaders do not pass to the kernel intact; percent-encode it", url, url[i])
	}
	for _, r := range url {
		if unicode.IsControl(r) {
			return fmt.Errorf("rootfs URL %q contains a control character", url)
		}
	}
	return nil
}

// RootfsURLArg is the kernel argument coreos.live.rootfs_url= for url. GRUB splits words at
// its metacharacters, so a URL holding one (a query string's '&', say) is double-quoted; the kernel drops the quotes.
// Any other URL is written bare, as coreos-installer writes it.
func RootfsURLArg(url string) string {
	if strings.ContainsAny(url, "&;|<>{}#") {
		return rootfsURLKarg + `"` + url + `"`
	}
	return rootfsURLKarg + url
}

// CheckPristine refuses an ISO whose Ignition area holds anything or whose kernel arguments
// differ from the defaults.
func (l *LiveISO) CheckPristine() error {
	area, err := l.IgnitionAreaBytes()
	if err != nil {
		return err
	}
	if !embed.IsZero(area) {
		return fmt.Errorf("%w (the Ignition area in %s is not empty)", ErrCustomized, l.ignition.File)
	}
	if l.kargs == nil {
		return nil
	}
	current, err := l.kargs.Current(l)
	if err != nil {
		return err
	}
	if current != l.kargs.Default {
		return fmt.Errorf("%w (the kernel arguments are %q, not the defaults %q)", ErrCustomized, current, l.kargs.Default)
	}
	return nil
}

// minimalKargs returns the default and current kernel arguments of a minimal ISO made from
// an ISO whose defaults are defaults: coreos.liveiso= removed, and the rootfs URL added to
// the current ones.
func minimalKargs(defaults, rootfsURL string) (newDefault, current string, err error) {
	var liveISO string
	for _, k := range strings.Fields(defaults) {
		if strings.HasPrefix(k, liveISOKarg) {
			liveISO = k
			break
		}
	}
	if liveISO == "" {
		return "", "", fmt.Errorf("minimal ISO does not have %s karg (its kernel arguments are %q)", liveISOKarg, defaults)
	}
	if newDefault, err = embed.ModifyKargs(defaults, nil, []string{liveISO}, nil); err != nil {
		return "", "", err
	}
	if rootfsURL == "" {
		return newDefault, newDefault, nil
	}
	if err := CheckRootfsURL(rootfsURL); err != nil {
		return "", "", err
	}
	current, err = embed.ModifyKargs(newDefault, []string{RootfsURLArg(rootfsURL)}, nil, nil)
	return newDefault, current, err
}

// minimalKargsPatches returns the patches that give iso (a minimal ISO, or a rebuilt one) its
// minimal kernel arguments: every area holds the current ones, and the defaults recorded in
// coreos/kargs.json (or the legacy default copy) lose coreos.liveiso=, so that a kargs reset
// keeps the ISO bootable as a minimal ISO.
func minimalKargsPatches(iso *LiveISO, rootfsURL string) ([]Patch, error) {
	if iso.kargs == nil {
		return nil, embed.ErrNoKargs
	}
	newDefault, current, err := minimalKargs(iso.kargs.Default, rootfsURL)
	if err != nil {
		return nil, err
	}
	patches, err := iso.KargsPatches(current)
	if err != nil {
		return nil, err
	}
	defaults, err := defaultKargsPatch(iso, newDefault)
	if err != nil {
		return nil, err
	}
	return append(patches, defaults), nil
}

// defaultKargsPatch records newDefault as the ISO's default kernel arguments: coreos/kargs.json
// rewritten in the same form, or the legacy header's default copy.
func defaultKargsPatch(iso *LiveISO, newDefault string) (Patch, error) {
	rec, err := iso.volume.Lookup(kargsJSONPath)
	if err == nil {
		raw := make([]byte, rec.Length)
		if err := readAt(iso, iso.Size(), raw, rec.Offset()); err != nil {
			return Patch{}, fmt.Errorf("reading %s: %w", kargsJSONPath, err)
		}
		data, err := embed.RewriteKargsJSON(raw, newDefault)
		if err != nil {
			return Patch{}, err
		}
		return Patch{Offset: rec.Offset(), Data: data}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Patch{}, err
	}
	// A coreKarg header: the default copy has the same format as the areas.
	off, err := legacyDefaultKargsOffset(iso)
	if err != nil {
		return Patch{}, err
	}
	area := embed.KargsArea{Area: embed.Area{Offset: off, Length: int64(iso.kargs.Size)}, Pad: '#', Terminator: '\n'}
	data, err := iso.kargs.Render(area, newDefault)
	if err != nil {
		return Patch{}, fmt.Errorf("default kargs copy at byte %d: %w", off, err)
	}
	return Patch{Offset: off, Data: data}, nil
}

// DerivedISO is a live ISO written to a temporary file from another one (a minimal ISO, a
// rebuilt ISO). Its LiveISO reads the temporary file, so further edits are patches over it
// like over any ISO; Commit gives it its name and Close removes it.
type DerivedISO struct {
	*LiveISO
	tmp *tempFile
}

// Unname removes the temporary file's name, if it has one (on Linux it has none until
// committed), for a DerivedISO that is only read and never committed: the ISO stays
// readable until Close, and a crash leaves nothing behind.
func (d *DerivedISO) Unname() { d.tmp.unname() }

// Close closes and removes the temporary file; it is safe after Commit.
func (d *DerivedISO) Close() error {
	err := d.LiveISO.Close()
	d.tmp.discard()
	d.tmp.dir.close()
	return err
}

// Commit writes img's patches into the temporary file and renames it to dest, without
// copying the image again when dest is in the temporary file's directory. img must have been
// made by d.Image. Without opts.Force an existing dest is refused; dest may not be one of
// opts.Keep. Progress and Perm are not used: the file is SecretPerm.
func (d *DerivedISO) Commit(ctx context.Context, img *Image, dest string, opts WriteOptions) error {
	stage := NewStage(opts.Force)
	defer stage.Abort()
	stage.Keep(opts.Keep...)
	if err := d.Stage(ctx, stage, img, dest); err != nil {
		return err
	}
	return stage.Commit()
}

// Stage makes img at dest one of stage's outputs: the temporary file itself with img's
// patches written into it when dest is in its directory, else a copy.
func (d *DerivedISO) Stage(ctx context.Context, stage *Stage, img *Image, dest string) error {
	if err := checkNotBase(img, dest); err != nil {
		return err
	}
	if filepath.Dir(dest) != d.tmp.dir.path {
		f, err := stage.Create(dest, SecretPerm)
		if err != nil {
			return err
		}
		if err := newSequentialWriter(ctx, f, img.base, nil, true).writeImage(img); err != nil {
			return fmt.Errorf("writing %s: %w", dest, err)
		}
		return ctx.Err()
	}
	if img.size != d.size {
		return fmt.Errorf("writing %s: the image is %d bytes but the %s is %d bytes; "+
			"make it with its Image method", dest, img.size, d.tmp.label(), d.size)
	}
	if err := writePatches(ctx, img, d.tmp.f, d.tmp.label()); err != nil {
		return err
	}
	return stage.adopt(d.tmp, dest)
}

// openDerived reads the temporary file t as a live ISO, applies the edits that edit returns
// for it, and reads it again so that the view includes them. On error the file is removed.
func openDerived(t *tempFile, what string, edit func(*LiveISO) ([]Patch, error)) (*DerivedISO, error) {
	fail := func(err error) (*DerivedISO, error) {
		t.discard()
		t.dir.close()
		return nil, err
	}
	size := fileSize(t.f)
	l, err := OpenReader(t.f, size)
	if err != nil {
		return fail(fmt.Errorf("the %s does not read back as a CoreOS live ISO: %w", what, err))
	}
	if edit != nil {
		patches, err := edit(l)
		if err != nil {
			return fail(err)
		}
		img, err := NewImage(bytes.NewReader(nil), l.size, patches...)
		if err == nil {
			err = writePatches(context.Background(), img, t.f, t.label())
		}
		if err != nil {
			return fail(err)
		}
		if l, err = OpenReader(t.f, size); err != nil {
			return fail(fmt.Errorf("the %s does not read back as a CoreOS live ISO after editing its kernel arguments: %w", what, err))
		}
	}
	return &DerivedISO{LiveISO: l, tmp: t}, nil
}

// createDerived creates the temporary file for a derived ISO in dir.
func createDerived(dir, what string) (*tempFile, error) {
	d, err := openOutDir(dir)
	if err != nil {
		return nil, fmt.Errorf("creating the %s: %w", what, err)
	}
	t, err := createTemp(d, SecretPerm)
	if err != nil {
		d.close()
		return nil, fmt.Errorf("creating the %s: %w", what, err)
	}
	return t, nil
}

// MinimalFromMiniso rebuilds the minimal ISO recorded in coreos/miniso.dat, exactly as
// coreos-installer's `iso extract minimal-iso` does: the bytes are reconstructed into a
// temporary file in dir and checked against the recorded SHA-256, and the kernel arguments
// are edited (coreos.liveiso= removed, the rootfs URL added, kargs.json rewritten in the
// same form). The ISO must be pristine.
func (l *LiveISO) MinimalFromMiniso(ctx context.Context, dir string, opts MinimalOptions) (*DerivedISO, error) {
	if opts.RootfsURL != "" {
		if err := CheckRootfsURL(opts.RootfsURL); err != nil {
			return nil, err
		}
	}
	if l.kargs == nil {
		return nil, fmt.Errorf("cannot make a minimal ISO: %w", embed.ErrNoKargs)
	}
	if err := l.CheckPristine(); err != nil {
		return nil, err
	}
	if !l.hasMiniso {
		return nil, ErrNoMiniso
	}
	m, err := l.miniso()
	if err != nil {
		return nil, err
	}
	tmp, err := createDerived(dir, "minimal ISO")
	if err != nil {
		return nil, err
	}
	if err := UnpackMinimal(l, l.size, m, &contextWriter{ctx: ctx, w: tmp.f}); err != nil {
		tmp.discard()
		tmp.dir.close()
		return nil, err
	}
	return openDerived(tmp, "minimal ISO rebuilt from miniso.dat", func(m *LiveISO) ([]Patch, error) {
		return minimalKargsPatches(m, opts.RootfsURL)
	})
}

// miniso reads and decodes coreos/miniso.dat.
func (l *LiveISO) miniso() (*embed.Miniso, error) {
	rec, err := l.volume.Lookup(embed.MinisoPath)
	if err != nil {
		return nil, err
	}
	const maxMiniso = 1 << 20 // coreos-installer's read limit
	if rec.Length > maxMiniso {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d-byte limit; corrupt ISO?", embed.MinisoPath, rec.Length, maxMiniso)
	}
	raw := make([]byte, rec.Length)
	if err := readAt(l, l.size, raw, rec.Offset()); err != nil {
		return nil, fmt.Errorf("reading %s: %w", embed.MinisoPath, err)
	}
	m, err := embed.DecodeMiniso(raw)
	if err != nil {
		return nil, fmt.Errorf("%s at byte %d: %w", embed.MinisoPath, rec.Offset(), err)
	}
	return m, nil
}

// contextWriter stops a long write when ctx is cancelled.
type contextWriter struct {
	ctx context.Context
	w   *os.File
}

func (c *contextWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// WriteRootfs copies images/pxeboot/rootfs.img out of the ISO to dest as one of stage's
// outputs, so that a caller can make the rootfs and the minimal ISO appear together or not
// at all.
func (l *LiveISO) WriteRootfs(ctx context.Context, stage *Stage, dest string) error {
	rec, err := l.volume.Lookup(rootfsPath)
	if err != nil {
		return fmt.Errorf("the ISO has no root file system to write out: %w", err)
	}
	f, err := stage.Create(dest, PublicPerm)
	if err != nil {
		return err
	}
	if err := newSequentialWriter(ctx, f, l.base, nil, true).copyBase(rec.Offset(), int64(rec.Length)); err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	return nil
}
