package node_test

import (
	"context"
	"log"

	"github.com/sno-iso/sno-iso/coreos"
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
}
