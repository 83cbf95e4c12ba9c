package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

func pxeCommand() *cli.Command {
	return &cli.Command{
		Name:  "pxe",
		Usage: "network boot: extract the PXE files, wrap an Ignition config as an initrd, build a node's PXE directory",
		Subcommands: []*cli.Command{
			{
				Name:      "extract",
				Usage:     "copy the kernel, initramfs and rootfs out of a live ISO as <ISO name>-vmlinuz, -initrd.img, -rootfs.img",
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Value: ".", Usage: "write the files to `DIR`, created if needed"},
				},
				Action: pxeExtract,
			},
			{
				Name:  "ignition",
				Usage: "wrap an Ignition config as an initrd, or get it back from one",
				Subcommands: []*cli.Command{
					{
						Name:  "wrap",
						Usage: "write an initrd (xz newc) holding config.ign, to append to the live initramfs",
						Flags: []cli.Flag{
							&cli.StringFlag{Name: "ignition-file", Aliases: []string{"i"}, Usage: "read the config from `FILE` (default: standard input)"},
							&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the initrd to `FILE` (default: standard output)"},
							forceFlag("replace an existing output file"),
						},
						Action: pxeIgnitionWrap,
					},
					{
						Name:      "unwrap",
						Usage:     "print the config.ign of an initrd, or of a whole customized initramfs",
						ArgsUsage: "[INITRD]",
						Action:    pxeIgnitionUnwrap,
					},
				},
			},
			{
				Name:  "build",
				Usage: "make a node's PXE directory: kernel, customized initramfs, rootfs and iPXE, PXELINUX and GRUB configurations",
				Description: "Prepares the bootstrap-in-place Ignition exactly as `build` does, appends it to the ISO's live\n" +
					"initramfs, and writes DIR/vmlinuz, DIR/initrd.img, DIR/rootfs.img, DIR/boot.ipxe,\n" +
					"DIR/pxelinux.cfg/default and DIR/grub.cfg. With --base-url the configurations fetch the\n" +
					"files from that URL and the live system its rootfs (coreos.live.rootfs_url); without it they\n" +
					"use names relative to where the loader found its configuration, and load the rootfs as a\n" +
					"second initrd.",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "iso", Usage: "the RHCOS live `ISO`", Required: true},
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the files to `DIR`, created if needed", Required: true},
					&cli.StringFlag{Name: "base-url", Usage: "the http(s) `URL` at which DIR will be served"},
					forceFlag("replace existing files in DIR"),
				}, nodeFlags()...),
				Action: pxeBuild,
			},
		},
	}
}

func pxeExtract(c *cli.Context) error {
	iso, isoPath, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	dir := c.String("output-dir")
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Base(isoPath)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	if stem == "" {
		stem = base
	}
	written, err := iso.ExtractPXE(c.Context, dir, stem+"-")
	if err != nil {
		if errors.Is(statErr, fs.ErrNotExist) {
			os.Remove(dir) // only if empty: it was made for this run
		}
		return err
	}
	for _, p := range written {
		fmt.Fprintln(c.App.Writer, p)
	}
	return nil
}

func pxeIgnitionWrap(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("pxe ignition wrap takes no arguments, got %q; the config comes from -i FILE or standard input", c.Args().Slice())
	}
	config, err := readIgnitionBytes(c)
	if err != nil {
		return err
	}
	// Like coreos-installer, the config is wrapped as given: it may be empty or not Ignition.
	packed, err := initrd.Pack(initrd.Files{initrd.IgnitionPath: config})
	if err != nil {
		return err
	}
	out := c.String("output")
	if out == "" || out == "-" {
		if stdout, ok := c.App.Writer.(*os.File); ok && isTerminal(stdout) {
			return errors.New("refusing to write binary data to a terminal; redirect standard output or use -o FILE")
		}
		_, err := c.App.Writer.Write(packed)
		return err
	}
	img, err := isobuilder.NewImage(bytes.NewReader(packed), int64(len(packed)))
	if err != nil {
		return err
	}
	return isobuilder.WriteFile(c.Context, img, out, isobuilder.WriteOptions{Force: c.Bool("force")})
}

func pxeIgnitionUnwrap(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("pxe ignition unwrap takes at most one INITRD argument, got %d", c.NArg())
	}
	name, r := "standard input", c.App.Reader
	if c.NArg() == 1 {
		name = c.Args().First()
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	} else if stdin, ok := r.(*os.File); ok && isTerminal(stdin) {
		return usagef("no initrd given: pass INITRD or pipe it to standard input")
	}
	files, err := initrd.Read(r, initrd.ReadOptions{
		MaxSize: isobuilder.MaxInitramfsSize,
		Match:   func(p string) bool { return p == initrd.IgnitionPath },
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	config, ok := files[initrd.IgnitionPath]
	if !ok {
		return fmt.Errorf("couldn't find Ignition config in archive %s", name)
	}
	_, err = c.App.Writer.Write(config)
	return err
}

func pxeBuild(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("pxe build takes no arguments, got %q; the ISO goes in --iso", c.Args().Slice())
	}
	baseURL, err := parseBaseURL(c.String("base-url"))
	if err != nil {
		return err
	}
	isoPath := c.String("iso")
	iso, err := isobuilder.Open(isoPath)
	if err != nil {
		return err
	}
	defer iso.Close()
	var kernel, initramfs, rootfs isobuilder.PXEFile
	for _, f := range []struct {
		dst  *isobuilder.PXEFile
		name string
	}{{&kernel, pxeKernel}, {&initramfs, pxeInitramfs}, {&rootfs, pxeRootfs}} {
		if *f.dst, err = iso.PXEFile(f.name); err != nil {
			return fmt.Errorf("%s: %w", isoPath, err)
		}
	}
	node, err := nodeInputsFromFlags(c).prepare()
	if err != nil {
		return err
	}
	kargs, err := pxeKargs(iso, node.LiveKargs)
	if err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	layout := bootLayout{BaseURL: baseURL, Kargs: kargs}

	outDir := c.String("output")
	configs := layout.bootConfigs()
	names := []string{pxeKernel, pxeInitramfs, pxeRootfs}
	for name := range configs {
		names = append(names, name)
	}
	slices.Sort(names[3:])
	stage, err := newStagedDir(outDir, names, c.Bool("force"))
	if err != nil {
		return err
	}
	defer stage.abort()

	stockName := fmt.Sprintf("%s/%s of %s", isobuilder.PXEDir, strings.ToUpper(pxeInitramfs), isoPath)
	if err := stage.write(pxeInitramfs, func(w io.Writer) error {
		if err := isobuilder.CustomizeInitramfs(w, iso.PXEFileReader(initramfs), node.Payload); err != nil {
			return fmt.Errorf("%s: %w", stockName, err)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, f := range []isobuilder.PXEFile{kernel, rootfs} {
		if err := stage.write(f.Name, func(w io.Writer) error {
			opts, done := progress(c, int64(f.Length))
			defer done()
			return iso.CopyPXEFile(c.Context, w, f, opts.Progress)
		}); err != nil {
			return err
		}
	}
	for name, data := range configs {
		if err := stage.write(name, func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		}); err != nil {
			return err
		}
	}
	for _, w := range node.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s\n", w)
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if err := stage.commit(); err != nil {
		return err
	}
	abs, _ := filepath.Abs(outDir)
	fmt.Fprintf(c.App.ErrWriter, "Wrote %s: %s\n", abs, strings.Join(names, ", "))
	if baseURL != "" {
		fmt.Fprintf(c.App.ErrWriter, "Serve it at %s and boot with iPXE: chain %s\n", baseURL, layout.url(ipxeConfig))
	} else {
		fmt.Fprintf(c.App.ErrWriter, "Serve it over HTTP and chain boot.ipxe from iPXE, or over TFTP beside pxelinux.0 or GRUB; --base-url lets the live system fetch the rootfs instead of loading it as a second initrd.\n")
	}
	return nil
}

// pxeKargs returns the live kernel arguments of a network boot of iso: the ISO's own (what
// its boot menus pass), with ignition.firstboot and ignition.platform.id=metal where an old
// ISO lacks them, edited by the node's live kargs as build edits the ISO's, and without
// coreos.liveiso=, which would make the initramfs wait for the ISO volume.
func pxeKargs(iso *isobuilder.LiveISO, edits coreos.LiveKargs) ([]string, error) {
	current, err := iso.CurrentKargs()
	if err != nil && !errors.Is(err, embed.ErrNoKargs) {
		return nil, err
	}
	base := strings.Fields(current)
	if !slices.Contains(base, "ignition.firstboot") {
		base = append(base, "ignition.firstboot")
	}
	if !slices.ContainsFunc(base, func(k string) bool { return strings.HasPrefix(k, "ignition.platform.id=") }) {
		base = append(base, "ignition.platform.id=metal")
	}
	edited, err := embed.ModifyKargs(strings.Join(base, " "), edits.Append, edits.Delete, edits.Replace)
	if err != nil {
		return nil, fmt.Errorf("live kernel arguments: %w", err)
	}
	var kargs []string
	for _, k := range strings.Fields(edited) {
		if name, _, _ := strings.Cut(k, "="); name != "coreos.liveiso" {
			kargs = append(kargs, k)
		}
	}
	return kargs, nil
}

// stagedDir writes a set of files into a hidden temporary directory inside dir and moves
// them into dir only when all are written, so an error or Ctrl-C leaves dir as it was.
type stagedDir struct {
	dir, tmp string
	names    []string        // paths relative to dir, in the order they are moved in
	existed  map[string]bool // names that were in dir before (replaced only with force)
	force    bool
	madeDir  bool     // dir was created for this run
	madeDirs []string // subdirectories of dir created by commit
}

// newStagedDir checks the destinations (an existing one is refused unless force) and
// creates the temporary directory.
func newStagedDir(dir string, names []string, force bool) (*stagedDir, error) {
	s := &stagedDir{dir: dir, names: names, existed: map[string]bool{}, force: force}
	var existing []string
	for _, name := range names {
		dest := filepath.Join(dir, name)
		info, err := os.Lstat(dest)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		case info.IsDir():
			return nil, fmt.Errorf("%s is a directory; remove it or write to another directory", dest)
		}
		s.existed[name] = true
		existing = append(existing, dest)
	}
	if len(existing) > 0 && !force {
		return nil, fmt.Errorf("%s: %w; use --force to replace them", strings.Join(existing, ", "), fs.ErrExist)
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		s.madeDir = true
	}
	tmp, err := os.MkdirTemp(dir, ".sno-iso-pxe-")
	if err != nil {
		s.abort()
		return nil, fmt.Errorf("writing to %s: %w", dir, err)
	}
	s.tmp = tmp
	return s, nil
}

// write creates name in the temporary directory with the bytes fill writes, and syncs it.
func (s *stagedDir) write(name string, fill func(io.Writer) error) error {
	p := filepath.Join(s.tmp, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// initrd.img carries the config: the node's files are the owner's only, whatever the umask.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if err := fill(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(s.dir, name), err)
	}
	return f.Close()
}

// commit moves every file into dir: renamed over an existing one with force, else linked,
// which fails rather than replace a file that appeared meanwhile. On error the files moved
// so far that did not exist before are removed.
func (s *stagedDir) commit() (err error) {
	var moved []string
	defer func() {
		if err != nil {
			for _, name := range moved {
				if !s.existed[name] {
					os.Remove(filepath.Join(s.dir, name))
				}
			}
		}
	}()
	for _, name := range s.names {
		src, dest := filepath.Join(s.tmp, name), filepath.Join(s.dir, name)
		sub := filepath.Dir(dest)
		if _, err := os.Stat(sub); errors.Is(err, fs.ErrNotExist) {
			if err := os.Mkdir(sub, 0o755); err != nil {
				return err
			}
			s.madeDirs = append(s.madeDirs, sub)
		}
		if s.force {
			err = os.Rename(src, dest)
		} else {
			err = os.Link(src, dest)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", dest, err)
		}
		moved = append(moved, name)
	}
	synced := map[string]bool{}
	for _, name := range s.names {
		if d := filepath.Dir(filepath.Join(s.dir, name)); !synced[d] {
			syncDir(d)
			synced[d] = true
		}
	}
	s.madeDirs = nil // they hold the result now
	s.madeDir = false
	return nil
}

// abort removes the temporary directory, and what was created for this run if the files
// did not make it into dir. After a successful commit it only removes the temporary one.
func (s *stagedDir) abort() {
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
	for _, d := range slices.Backward(s.madeDirs) {
		os.Remove(d)
	}
	if s.madeDir {
		os.Remove(s.dir)
	}
}

// syncDir makes the renames in dir durable; a filesystem that cannot sync a directory has
// the data synced already.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
