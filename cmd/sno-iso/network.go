package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

// maxKeyfileSize bounds a NetworkManager keyfile; real ones are well under 4 KiB.
const maxKeyfileSize = 1 << 20

func networkCommand() *cli.Command {
	return &cli.Command{
		Name:  "network",
		Usage: "embed, extract or remove the NetworkManager keyfiles the live system starts with",
		Subcommands: []*cli.Command{
			{
				Name: "embed",
				Usage: "embed NetworkManager keyfiles (static addresses, bonds, VLANs) for the live system; " +
					"the embedded Ignition config is kept",
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "keyfile", Aliases: []string{"k"}, Usage: "NetworkManager keyfile `FILE` (repeatable)", Required: true},
					outputFlag(),
					forceFlag("replace embedded network settings and an existing output file"),
				},
				Action: networkEmbed,
			},
			{
				Name:      "extract",
				Usage:     "print the embedded keyfiles, or write them to a directory",
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "directory", Aliases: []string{"C"}, Usage: "write the keyfiles into `DIR` (created if needed; existing files are not replaced)"},
				},
				Action: networkExtract,
			},
			{
				Name:      "remove",
				Usage:     "remove the embedded keyfiles, keeping the embedded Ignition config",
				ArgsUsage: "ISO",
				Flags:     []cli.Flag{outputFlag(), forceFlag("replace an existing output file")},
				Action:    networkRemove,
			},
		},
	}
}

// readKeyfiles reads NetworkManager keyfiles into payload members, each at
// initrd.NetworkDir/<basename>, where the live initramfs picks them up. Each must be a
// keyfile (a [connection] section), and two inputs may not share a basename.
func readKeyfiles(paths []string) (initrd.Files, error) {
	files := initrd.Files{}
	from := map[string]string{}
	for _, p := range paths {
		name := filepath.Base(p)
		if first, dup := from[name]; dup {
			return nil, fmt.Errorf("multiple input keyfiles named %q (%s and %s): the live system keeps them in one directory, rename one", name, first, p)
		}
		from[name] = p
		data, err := readKeyfile(p)
		if err != nil {
			return nil, err
		}
		files[initrd.NetworkDir+"/"+name] = data
	}
	return files, nil
}

func readKeyfile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("keyfile %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyfileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading keyfile %s: %w", path, err)
	}
	if len(data) > maxKeyfileSize {
		return nil, fmt.Errorf("%s is larger than %d KiB: not a NetworkManager keyfile", path, maxKeyfileSize>>10)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s is not UTF-8 text: not a NetworkManager keyfile", path)
	}
	if !hasConnectionSection(data) {
		return nil, fmt.Errorf("%s is not a NetworkManager keyfile: it has no [connection] section "+
			"(write one with nmcli --offline, or copy one from /etc/NetworkManager/system-connections)", path)
	}
	return data, nil
}

// hasConnectionSection reports whether a key file has the group every NetworkManager
// connection profile has.
func hasConnectionSection(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxKeyfileSize)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "[connection]" {
			return true
		}
	}
	return false
}

// requireNetworkSupport refuses ISOs whose live initramfs would ignore embedded keyfiles.
func requireNetworkSupport(iso *isobuilder.LiveISO, isoPath string) error {
	if features, _ := iso.Features(); features.LiveInitrdNetwork {
		return nil
	}
	return fmt.Errorf("%s: this OS image does not support customizing network settings "+
		"(its coreos/features.json lacks live-initrd-network, so the live system would ignore the keyfiles); "+
		"use a newer ISO, or give static addresses as ip= live kernel arguments (liveKargs in sno.yaml, or `sno-iso kargs modify -a`)", isoPath)
}

func networkEmbed(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	keyfiles, err := readKeyfiles(c.StringSlice("keyfile"))
	if err != nil {
		return err
	}
	iso, err := isobuilder.Open(isoPath)
	if err != nil {
		return err
	}
	err = requireNetworkSupport(iso, isoPath)
	iso.Close()
	if err != nil {
		return err
	}
	return editPayload(c, isoPath, func(files initrd.Files) error {
		if len(networkFiles(files)) > 0 && !c.Bool("force") {
			return errors.New("this ISO already has embedded network settings; use -f to replace them")
		}
		removeNetworkFiles(files)
		for p, data := range keyfiles {
			files[p] = data
		}
		return nil
	})
}

func networkRemove(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	return editPayload(c, isoPath, func(files initrd.Files) error {
		removeNetworkFiles(files)
		return nil
	})
}

func networkExtract(c *cli.Context) error {
	iso, _, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	files, err := iso.Payload()
	if err != nil {
		return err
	}
	keyfiles := networkFiles(files)
	if len(keyfiles) == 0 {
		return errors.New("no embedded network settings")
	}
	if dir := c.String("directory"); dir != "" {
		written, err := initrd.Extract(keyfiles, dir)
		for _, p := range written {
			fmt.Fprintln(c.App.Writer, p)
		}
		return err
	}
	w := bufio.NewWriter(c.App.Writer)
	for i, name := range keyfiles.Paths() {
		if i > 0 {
			w.WriteString("\n")
		}
		fmt.Fprintf(w, "########## %s ##########\n", name)
		w.Write(keyfiles[name])
	}
	return w.Flush()
}

// networkFiles returns the embedded keyfiles, named relative to initrd.NetworkDir.
func networkFiles(files initrd.Files) initrd.Files {
	out := initrd.Files{}
	for p, data := range files {
		if initrd.IsNetworkFile(p) {
			out[strings.TrimPrefix(p, initrd.NetworkDir+"/")] = data
		}
	}
	return out
}

func removeNetworkFiles(files initrd.Files) {
	for p := range files {
		if initrd.IsNetworkFile(p) {
			delete(files, p)
		}
	}
}

// liveNetworkWarning warns when the live system gets network settings that the installed
// node will not keep, the trap of static addresses falling back to DHCP after the reboot.
func liveNetworkWarning(inst coreos.Installation, kargs coreos.LiveKargs, keyfiles bool) string {
	if inst.CopyNetwork {
		return ""
	}
	if keyfiles {
		return "copyNetwork is false: the network keyfiles configure the live system only, the installed node will use DHCP after the reboot"
	}
	for _, k := range kargs.Append {
		if strings.HasPrefix(strings.TrimSpace(k), "ip=") {
			return fmt.Sprintf("live kernel argument %s configures the live system only: set copyNetwork: true (or --copy-network) so that the installed node keeps it after the reboot", k)
		}
	}
	return ""
}
