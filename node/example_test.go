package node_test

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// A program that writes a node's ISO: the bootstrap-in-place Ignition from openshift-install
// embedded into the RHCOS live ISO, installing to a chosen disk.
func Example() {
	iso, err := isobuilder.Open("rhcos-live.x86_64.iso")
	if err != nil {
		log.Fatal(err)
	}
	defer iso.Close()
	n, _, err := node.Load(node.Inputs{
		IgnitionPath: "bootstrap-in-place-for-live-iso.ign",
		Overrides:    coreos.InstallationFlags{Disk: "/dev/disk/by-path/pci-0000:00:17.0-ata-1"},
	})
	if err != nil {
		log.Fatal(err)
	}
	media, err := n.Media(context.Background(), iso, node.MediaOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// A new file is the owner's only (0600): the ISO carries the cluster's private keys.
	if err := media.Write(context.Background(), isobuilder.Output{File: "sno.iso"}); err != nil {
		log.Fatal(err)
	}

	// What the written ISO will do.
	written, err := isobuilder.Open("sno.iso")
	if err != nil {
		log.Fatal(err)
	}
	defer written.Close()
	config, err := written.EmbeddedIgnition()
	if err != nil {
		log.Fatal(err)
	}
	install, err := coreos.InspectIgnition(config)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sno.iso installs to", install.Installation.Disk)
	// Output: sno.iso installs to /dev/disk/by-path/pci-0000:00:17.0-ata-1
}

// TestMain runs the tests in a directory holding Example's inputs: a CoreOS-built ISO
// fixture as rhcos-live.x86_64.iso and a generated bootstrap-in-place config. Without the
// fixtures Example is skipped, or the run fails under CI.
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := exampleInputs()
	if err != nil {
		if testenv.InCI() {
			fmt.Fprintln(os.Stderr, "CI requires Example to run, but:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "skipping Example:", err)
		flag.Set("test.skip", "^Example$")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// exampleInputs writes Example's inputs to a new directory and makes it the working
// directory; the tests use no relative paths.
func exampleInputs() (string, error) {
	iso, err := fixtures.Read("embed-areas-2023-07.x86_64.iso")
	if err != nil {
		return "", err
	}
	config, err := bipgen.Generate(bipgen.Options{Seed: 1})
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "node-example-")
	if err != nil {
		return "", err
	}
	for name, data := range map[string][]byte{"rhcos-live.x86_64.iso": iso, "bootstrap-in-place-for-live-iso.ign": config} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return dir, err
		}
	}
	return dir, os.Chdir(dir)
}
