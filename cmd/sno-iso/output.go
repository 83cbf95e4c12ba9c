package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cheggaaa/pb/v3"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

// progressThreshold is the copy size from which a progress bar is worth showing.
const progressThreshold = 64 << 20

func outputFlag() cli.Flag {
	return &cli.StringFlag{
		Name: "output", Aliases: []string{"o"}, Usage: "write the result to `FILE` (- for standard output) instead of editing ISO in place",
	}
}

func forceFlag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: usage}
}

// isoArg returns the single ISO argument of a command.
func isoArg(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", usagef("%s takes exactly one ISO argument, got %d (see --help)", c.Command.HelpName, c.NArg())
	}
	return c.Args().First(), nil
}

// openISOArg opens the single ISO argument of a command (locked when it edits it in place);
// the caller closes it.
func openISOArg(c *cli.Context) (*isobuilder.LiveISO, string, error) {
	path, err := isoArg(c)
	if err != nil {
		return nil, "", err
	}
	iso, err := openISO(c, path)
	return iso, path, err
}

// editISO opens the ISO, lets edit make the edited image, and writes it as the command line
// asks, with the command line's advice on the library's errors. Nothing is written when edit
// fails.
func editISO(c *cli.Context, isoPath string, edit func(*isobuilder.LiveISO) (*isobuilder.Image, error)) error {
	if err := refuseDeviceOutput(c.String("output"), "-o -"); err != nil {
		return err
	}
	iso, err := openISO(c, isoPath)
	if err != nil {
		return err
	}
	defer iso.Close()
	img, err := edit(iso)
	var tooLarge *isobuilder.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("%w; make the config smaller (fetch large files from a URL with a verification hash), or boot over PXE, "+
			"where the initramfs has no such limit", err)
	case errors.Is(err, isobuilder.ErrNoNetworkSupport):
		return networkSupportError(isoPath, err)
	case errors.Is(err, isobuilder.ErrNoKargs):
		return fmt.Errorf("%s: %w", isoPath, err)
	case err != nil:
		return err
	}
	return writeResult(c, img, isoPath, c.String("output"), commandInputs(c, isoPath))
}

// writeResult materialises img at out: isoPath edited in place when out is empty, standard
// output for "-", else a new file (replacing an existing one only with --force, and never
// one of inputs).
func writeResult(c *cli.Context, img *isobuilder.Image, isoPath, out string, inputs []string) error {
	o, done, err := outputFor(c, img.Size(), isoPath, out, inputs)
	if err != nil {
		return err
	}
	err = o.Write(c.Context, img)
	done()
	if err != nil {
		return existsAdvice(c, err)
	}
	if out == "" {
		out = isoPath
	}
	sayWrote(c, out, "")
	return nil
}

// outputFor maps the command line's output to the library's: out "" is isoPath in place, "-"
// standard output (refused on a terminal, or when an input comes from standard input), else a
// new file. A progress bar of size bytes shows for long copies; done finishes it.
func outputFor(c *cli.Context, size int64, isoPath, out string, inputs []string) (o isobuilder.Output, done func(), err error) {
	done = func() {}
	switch out {
	case "":
		return isobuilder.Output{InPlace: isoPath}, done, nil
	case "-":
		if err := refuseTerminalStdout(c, "use -o FILE"); err != nil {
			return o, done, err
		}
		if err := refuseStdoutInput(c, inputs); err != nil {
			return o, done, err
		}
		o.Stream = c.App.Writer
	default:
		// coreos-installer's -f replaces what is embedded, never an output file.
		o.File, o.Force, o.Keep = out, c.Bool("force") && !isDropIn(c), inputs
	}
	opts, done := progress(c, size)
	o.Progress = opts.Progress
	return o, done, nil
}

// refuseTerminalStdout refuses to write binary data to standard output when it is a
// terminal, in coreos-installer's words, which scripts grep for; instead says what to do.
func refuseTerminalStdout(c *cli.Context, instead string) error {
	if stdout, ok := c.App.Writer.(*os.File); ok && isTerminal(stdout) {
		return fmt.Errorf("Refusing to write binary data to terminal (standard output); redirect it or %s", instead)
	}
	return nil
}

// progress returns write options with a progress bar on a terminal stderr for long copies,
// and a function that finishes the bar.
func progress(c *cli.Context, total int64) (isobuilder.WriteOptions, func()) {
	stderr, ok := c.App.ErrWriter.(*os.File)
	if !ok || total < progressThreshold || !isTerminal(stderr) {
		return isobuilder.WriteOptions{}, func() {}
	}
	bar := pb.New64(total).Set(pb.Bytes, true).SetWriter(stderr).Start()
	return isobuilder.WriteOptions{Progress: func(n int64) { bar.SetCurrent(n) }}, func() { bar.Finish() }
}

// refuseDeviceOutput refuses an output that is a device (a USB stick, /dev/null): a file
// output is written beside itself and renamed into place, which a device cannot be. Streamed,
// it can: stream is how the command names standard output as its output.
func refuseDeviceOutput(out, stream string) error {
	if out == "" || out == "-" {
		return nil
	}
	info, err := os.Stat(out)
	if err == nil && info.Mode()&fs.ModeDevice != 0 {
		return usagef("%s is a device, not a file: write the image to it as a stream, with %s > %s", out, stream, out)
	}
	// A mistyped device name would otherwise become a file of the image's size in /dev,
	// which is memory (devtmpfs), reported as written.
	if errors.Is(err, fs.ErrNotExist) && inDevDir(out) {
		return usagef("%s does not exist, and sno-iso does not create files in /dev: "+
			"check the device's name (lsblk lists them) and write the image to it as a stream, with %s > /dev/DEVICE", out, stream)
	}
	return nil
}

// inDevDir reports whether path lies under /dev, where the system keeps its devices, and not
// in /dev/shm, a tmpfs for files.
func inDevDir(path string) bool {
	abs, err := filepath.Abs(path)
	abs = filepath.ToSlash(abs)
	return err == nil && strings.HasPrefix(abs, "/dev/") && !strings.HasPrefix(abs, "/dev/shm/")
}
