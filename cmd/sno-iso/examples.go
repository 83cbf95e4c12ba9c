package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// example is one line of a command's EXAMPLES: what a user types, and what it does.
type example struct {
	line string
	does string
	// needs is what the line needs besides files in the working directory; the test of the
	// examples runs every line that needs nothing more.
	needs exampleNeed
}

// exampleNeed is what keeps an example from running offline against files.
type exampleNeed int

const (
	offline      exampleNeed = iota
	needsNetwork             // a download from the internet or a mirror
	needsBMC                 // a server's BMC
	needsNode                // a node booting the media (in the tests: QEMU)
	needsServer              // runs until stopped, serving the network
)

// examples are the EXAMPLES of every command, keyed by the command's help name ("sno-iso
// ignition embed", "coreos-installer iso customize"): --help, the man page and the docs read
// them here. Files are named as the tools that make them name them.
var examples = map[string][]example{
	"sno-iso": {
		{line: "sno-iso build --iso rhcos-live.x86_64.iso --ignition bootstrap-in-place-for-live-iso.ign --config sno.yaml -o sno.iso",
			does: "make the ISO that installs the node (to the disk that sno.yaml's coreOSInstallation names)"},
		{line: "sno-iso inspect sno.iso", does: "show what an ISO embeds"},
		{line: "sno-iso help sno.yaml", does: "list the keys of sno.yaml"},
	},
	"sno-iso build": {
		{line: "sno-iso build --iso rhcos-live.x86_64.iso --ignition bootstrap-in-place-for-live-iso.ign --config sno.yaml -o sno.iso",
			does: "embed the bootstrap-in-place config, installing to the disk that sno.yaml names"},
		{line: "sno-iso build --iso rhcos-live.x86_64.iso --ignition bootstrap-in-place-for-live-iso.ign " +
			"--installation-disk /dev/disk/by-id/wwn-0x5000c500a0b1c2d3 --network-nmstate nmstate.yaml -o sno.iso",
			does: "install to a disk given on the command line, with a static network from NMState"},
		{line: "sno-iso build --iso rhcos-live.x86_64.iso --ignition bootstrap-in-place-for-live-iso.ign " +
			"--agent-config agent-config.yaml --host master-0 -o sno.iso",
			does: "take the network and installation disk of a host of the agent-based installer's agent-config.yaml"},
		{line: "sno-iso build --iso rhcos-live.x86_64.iso --ignition bootstrap-in-place-for-live-iso.ign --config sno.yaml " +
			"--minimal -o sno-minimal.iso",
			does: "a minimal ISO whose live system fetches the root file system over HTTP"},
		{line: "sno-iso build --stream stream.json --ignition bootstrap-in-place-for-live-iso.ign --config sno.yaml -o sno.iso",
			does: "download the live ISO that `openshift-install coreos print-stream-json` names first", needs: needsNetwork},
		{line: "sno-iso build --iso s3://images/rhcos-live.x86_64.iso --s3-endpoint https://minio.example.com:9000 --s3-path-style " +
			"--ignition bootstrap-in-place-for-live-iso.ign --config sno.yaml -o sno.iso",
			does: "read the live ISO from an on-premises S3 store (credentials from AWS_* or ~/.aws)", needs: needsNetwork},
	},
	"sno-iso ignition": {
		{line: "sno-iso ignition show sno.iso", does: "print the Ignition config an ISO embeds"},
		{line: "sno-iso ignition embed -i config.ign -o live.iso rhcos-live.x86_64.iso", does: "embed any Ignition config"},
	},
	"sno-iso ignition embed": {
		{line: "sno-iso ignition embed -i config.ign -o live.iso rhcos-live.x86_64.iso", does: "write a copy that embeds config.ign"},
		{line: "sno-iso ignition embed -f -i config.ign sno.iso", does: "replace the config an ISO embeds, in place"},
	},
	"sno-iso ignition show": {
		{line: "sno-iso ignition show sno.iso", does: "print the embedded Ignition config"},
	},
	"sno-iso ignition remove": {
		{line: "sno-iso ignition remove -o pristine.iso sno.iso", does: "write a copy without the embedded config"},
	},
	"sno-iso kargs": {
		{line: "sno-iso kargs show sno.iso", does: "print the live kernel arguments"},
	},
	"sno-iso kargs show": {
		{line: "sno-iso kargs show sno.iso", does: "print the live kernel arguments"},
		{line: "sno-iso kargs show --default sno.iso", does: "print the arguments the ISO was built with"},
	},
	"sno-iso kargs modify": {
		{line: "sno-iso kargs modify --append console=ttyS0,115200n8 sno.iso", does: "add a serial console to the live system, in place"},
		{line: "sno-iso kargs modify --replace ignition.platform.id=metal=qemu -o qemu.iso sno.iso",
			does: "write a copy with one argument's value replaced"},
	},
	"sno-iso kargs reset": {
		{line: "sno-iso kargs reset sno.iso", does: "restore the default live kernel arguments, in place"},
	},
	"sno-iso network": {
		{line: "sno-iso network gc nmstate.yaml", does: "turn an NMState document into NetworkManager keyfiles"},
		{line: "sno-iso network embed --keyfile static-ip.nmconnection -o live.iso rhcos-live.x86_64.iso",
			does: "embed a keyfile for the live system"},
	},
	"sno-iso network embed": {
		{line: "sno-iso network embed --keyfile static-ip.nmconnection -o live.iso rhcos-live.x86_64.iso",
			does: "write a copy that embeds a NetworkManager keyfile"},
		{line: "sno-iso network embed -f --network-nmstate nmstate.yaml sno.iso",
			does: "replace the embedded network with the keyfiles of an NMState document, in place"},
	},
	"sno-iso network gc": {
		{line: "sno-iso network gc -C keyfiles nmstate.yaml", does: "write the keyfiles NetworkManager would get, to review them"},
		{line: "sno-iso network gc --host master-0 agent-config.yaml", does: "the keyfiles of one host of an agent-config.yaml"},
	},
	"sno-iso network extract": {
		{line: "sno-iso network extract -C keyfiles sno.iso", does: "copy the embedded keyfiles into ./keyfiles"},
	},
	"sno-iso network remove": {
		{line: "sno-iso network remove sno.iso", does: "remove the embedded keyfiles, in place"},
	},
	"sno-iso reset": {
		{line: "sno-iso reset -o pristine.iso sno.iso", does: "write a copy without any customization"},
	},
	"sno-iso inspect": {
		{line: "sno-iso inspect sno.iso", does: "show the embedded config, install-to-disk settings, kargs and network"},
		{line: "sno-iso inspect --json sno.iso", does: "the same as one JSON object, for scripts"},
	},
	"sno-iso minimal": {
		{line: "sno-iso minimal --rootfs-url http://192.0.2.10:8080/rootfs.img rhcos-live.x86_64.iso minimal.iso",
			does: "a minimal ISO that fetches its root file system from that URL"},
		{line: "sno-iso minimal --output-rootfs rootfs.img rhcos-live.x86_64.iso minimal.iso",
			does: "also write the root file system to publish"},
	},
	"sno-iso machineconfig": {
		{line: "sno-iso machineconfig --role master --base master.ign.orig -o 99-installer-ignition-master.yaml master.ign",
			does: "the MachineConfig that keeps the edits made to master.ign"},
	},
	"sno-iso pxe": {
		{line: "sno-iso pxe build --iso rhcos-live.x86_64.iso --ignition bootstrap-in-place-for-live-iso.ign --config sno.yaml -o pxe",
			does: "the node's PXE files in ./pxe"},
	},
	"sno-iso pxe extract": {
		{line: "sno-iso pxe extract -o pxe rhcos-live.x86_64.iso", does: "write the kernel, initramfs and rootfs into ./pxe"},
	},
	"sno-iso pxe ignition": {
		{line: "sno-iso pxe ignition wrap -i config.ign -o ignition.img", does: "wrap a config as an initrd"},
	},
	"sno-iso pxe ignition wrap": {
		{line: "sno-iso pxe ignition wrap -i config.ign -o ignition.img", does: "an initrd to load after the live initramfs"},
	},
	"sno-iso pxe ignition unwrap": {
		{line: "sno-iso pxe ignition unwrap ignition.img", does: "print the config an initrd wraps"},
	},
	"sno-iso pxe build": {
		{line: "sno-iso pxe build --iso rhcos-live.x86_64.iso --ignition bootstrap-in-place-for-live-iso.ign --config sno.yaml -o pxe",
			does: "kernel, initramfs with the config, rootfs and iPXE, PXELINUX and GRUB configurations in ./pxe"},
		{line: "sno-iso pxe build --iso rhcos-live.x86_64.iso --ignition bootstrap-in-place-for-live-iso.ign --config sno.yaml " +
			"--base-url http://192.0.2.10:8080/sno1 -o pxe",
			does: "configurations that fetch the files from the web server that will serve ./pxe"},
	},
	"sno-iso serve": {
		{line: "sno-iso serve --iso rhcos-live.x86_64.iso --nodes nodes --listen :8080",
			does: "serve every node of ./nodes at http://HOST:8080/TOKEN/NODE.iso", needs: needsServer},
		{line: "sno-iso serve --iso s3://images/rhcos-live.x86_64.iso --nodes nodes --listen :8080",
			does:  "read the live ISO from S3 (credentials from AWS_* or ~/.aws), copied once to $TMPDIR and served from there",
			needs: needsServer},
		{line: "sno-iso serve urls --nodes nodes --base-url http://192.0.2.10:8080", does: "print the nodes' URLs"},
	},
	"sno-iso serve urls": {
		{line: "sno-iso serve urls --nodes nodes --base-url http://192.0.2.10:8080", does: "print every node's URLs"},
		{line: "sno-iso serve urls --nodes nodes --node sno1", does: "print one node's paths"},
	},
	"sno-iso serve rotate-secret": {
		{line: "sno-iso serve rotate-secret --nodes nodes --grace 1h", does: "new URLs for all nodes; the old ones work for one more hour"},
	},
	"sno-iso download": {
		{line: "sno-iso download --stream stable", does: "the latest Fedora CoreOS live ISO, into the cache", needs: needsNetwork},
		{line: "sno-iso download --stream stream.json --arch aarch64 -C .",
			does: "the RHCOS ISO `openshift-install coreos print-stream-json` names, copied here", needs: needsNetwork},
		{line: "sno-iso download --url http://mirror.example.com/rhcos-live.x86_64.iso --sha256sum-url " +
			"http://mirror.example.com/sha256sum.txt", does: "from a mirror, checked against its sha256sum.txt", needs: needsNetwork},
		{line: "sno-iso download --stream stream.json --upload s3://images/rhcos/ --s3-endpoint https://minio.example.com:9000 " +
			"--s3-path-style", does: "download, check, and put the ISO into a bucket for sno-iso serve --iso s3://", needs: needsNetwork},
	},
	"sno-iso bmc": {
		{line: "sno-iso bmc boot --node nodes/sno1 --serve-url http://192.0.2.10:8080",
			does: "boot the node from the ISO that serve publishes for it", needs: needsBMC},
	},
	"sno-iso bmc boot": {
		{line: "sno-iso bmc boot --node nodes/sno1 --serve-url http://192.0.2.10:8080",
			does: "insert the node's served ISO and boot from it once (BMC from its sno.yaml)", needs: needsBMC},
		{line: "sno-iso bmc boot --bmc https://10.0.0.5 --iso-url http://192.0.2.10:8080/sno.iso --boot-mode uefi",
			does: "boot any ISO URL (account in SNO_ISO_BMC_USERNAME and SNO_ISO_BMC_PASSWORD)", needs: needsBMC},
	},
	"sno-iso bmc eject": {
		{line: "sno-iso bmc eject --node nodes/sno1", does: "eject the virtual media", needs: needsBMC},
	},
	"sno-iso bmc status": {
		{line: "sno-iso bmc status --node nodes/sno1 --json", does: "power, virtual media and boot override as JSON", needs: needsBMC},
	},
	"sno-iso wait": {
		{line: "sno-iso wait --node nodes/sno1 --for install-done", does: "follow the node's install until it is done", needs: needsNode},
	},
	"sno-iso version": {
		{line: "sno-iso version", does: "print the version, commit and Go release"},
	},

	"coreos-installer": {
		{line: "coreos-installer iso ignition embed -i config.ign rhcos-live.x86_64.iso", does: "as coreos-installer does, in place"},
		{line: "coreos-installer iso customize --live-ignition bootstrap-in-place-for-live-iso.ign --dest-device /dev/sda " +
			"-o sno.iso rhcos-live.x86_64.iso", does: "the single-node ISO that sno-iso build makes"},
	},
	"coreos-installer download": {
		{line: "coreos-installer download -s stable -f iso -C .", does: "the Fedora CoreOS live ISO, checked", needs: needsNetwork},
	},
	"coreos-installer iso": {
		{line: "coreos-installer iso ignition show sno.iso", does: "print the embedded config"},
	},
	"coreos-installer iso customize": {
		{line: "coreos-installer iso customize --live-ignition bootstrap-in-place-for-live-iso.ign --dest-device /dev/sda " +
			"-o sno.iso rhcos-live.x86_64.iso", does: "install the single node to /dev/sda, as sno-iso build does"},
		{line: "coreos-installer iso customize --live-ignition bootstrap-in-place-for-live-iso.ign --dest-device /dev/sda " +
			"--network-keyfile static-ip.nmconnection -o sno.iso rhcos-live.x86_64.iso", does: "with a static network"},
		{line: "coreos-installer iso customize -f --live-ignition bootstrap-in-place-for-live-iso.ign --dest-device /dev/sdb " +
			"-o sno-sdb.iso sno.iso", does: "start again from an ISO that is already customized (the input is left as it is)"},
	},
	"coreos-installer iso ignition": {
		{line: "coreos-installer iso ignition show sno.iso", does: "print the embedded config"},
	},
	"coreos-installer iso ignition embed": {
		{line: "coreos-installer iso ignition embed -i config.ign -o live.iso rhcos-live.x86_64.iso", does: "write a copy embedding config.ign"},
	},
	"coreos-installer iso ignition show": {
		{line: "coreos-installer iso ignition show sno.iso", does: "print the embedded config"},
	},
	"coreos-installer iso ignition remove": {
		{line: "coreos-installer iso ignition remove sno.iso", does: "remove the embedded config, in place"},
	},
	"coreos-installer iso network": {
		{line: "coreos-installer iso network embed -k static-ip.nmconnection rhcos-live.x86_64.iso", does: "embed a keyfile, in place"},
	},
	"coreos-installer iso network embed": {
		{line: "coreos-installer iso network embed -k static-ip.nmconnection -o live.iso rhcos-live.x86_64.iso",
			does: "write a copy that embeds a keyfile"},
		{line: "coreos-installer iso network embed -f -k static-ip.nmconnection sno.iso", does: "replace the embedded keyfiles, in place"},
	},
	"coreos-installer iso network extract": {
		{line: "coreos-installer iso network extract sno.iso", does: "print the embedded keyfiles"},
	},
	"coreos-installer iso network remove": {
		{line: "coreos-installer iso network remove sno.iso", does: "remove the embedded keyfiles, in place"},
	},
	"coreos-installer iso kargs": {
		{line: "coreos-installer iso kargs show sno.iso", does: "print the live kernel arguments"},
	},
	"coreos-installer iso kargs modify": {
		{line: "coreos-installer iso kargs modify -a console=ttyS0,115200n8 sno.iso", does: "add a serial console, in place"},
	},
	"coreos-installer iso kargs reset": {
		{line: "coreos-installer iso kargs reset sno.iso", does: "restore the default kernel arguments, in place"},
	},
	"coreos-installer iso kargs show": {
		{line: "coreos-installer iso kargs show -d sno.iso", does: "print the default kernel arguments"},
	},
	"coreos-installer iso extract": {
		{line: "coreos-installer iso extract pxe -o pxe rhcos-live.x86_64.iso", does: "the PXE files, into ./pxe"},
	},
	"coreos-installer iso extract pxe": {
		{line: "coreos-installer iso extract pxe -o pxe rhcos-live.x86_64.iso", does: "the kernel, initramfs and rootfs, into ./pxe"},
	},
	"coreos-installer iso extract minimal-iso": {
		{line: "coreos-installer iso extract minimal-iso --rootfs-url http://192.0.2.10:8080/rootfs.img " +
			"rhcos-live.x86_64.iso minimal.iso", does: "a minimal ISO fetching its rootfs from that URL"},
	},
	"coreos-installer iso reset": {
		{line: "coreos-installer iso reset -o pristine.iso sno.iso", does: "a copy without customizations"},
	},
	"coreos-installer pxe customize": {
		{line: "coreos-installer pxe customize --live-ignition bootstrap-in-place-for-live-iso.ign --dest-device /dev/sda " +
			"-o sno-initramfs.img rhcos-live-initramfs.x86_64.img", does: "the live initramfs that installs the single node to /dev/sda"},
	},
	"coreos-installer pxe": {
		{line: "coreos-installer pxe ignition wrap -i config.ign -o ignition.img", does: "wrap a config as an initrd"},
	},
	"coreos-installer pxe ignition": {
		{line: "coreos-installer pxe ignition wrap -i config.ign -o ignition.img", does: "wrap a config as an initrd"},
	},
	"coreos-installer pxe ignition wrap": {
		{line: "coreos-installer pxe ignition wrap -i config.ign -o ignition.img", does: "an initrd to load after the live initramfs"},
	},
	"coreos-installer pxe ignition unwrap": {
		{line: "coreos-installer pxe ignition unwrap ignition.img", does: "print the config an initrd wraps"},
	},
	"coreos-installer dev": {
		{line: "coreos-installer dev show iso --ignition rhcos-live.x86_64.iso", does: "where the Ignition embed area is"},
	},
	"coreos-installer dev show": {
		{line: "coreos-installer dev show iso --kargs rhcos-live.x86_64.iso", does: "where the kernel arguments areas are"},
	},
	"coreos-installer dev show iso": {
		{line: "coreos-installer dev show iso --ignition rhcos-live.x86_64.iso", does: "offset and length of the Ignition embed area"},
	},
}

// helpNames lists the help name of app and of every command a user sees, at any depth.
func helpNames(app *cli.App) []string {
	names := []string{app.Name}
	var walk func(parent string, commands []*cli.Command)
	walk = func(parent string, commands []*cli.Command) {
		for _, c := range commands {
			if c.Hidden {
				continue
			}
			name := parent + " " + c.Name
			names = append(names, name)
			walk(name, c.Subcommands)
		}
	}
	walk(app.Name, app.Commands)
	return names
}

// helpName is the name --help gives the command (or the program) that help describes.
func helpName(data any) string {
	switch d := data.(type) {
	case *cli.App:
		return d.Name
	case *cli.Command:
		return d.HelpName
	}
	return ""
}

// exampleSection is the EXAMPLES block of a help screen: each line's explanation as a shell
// comment above it, the line broken with backslashes where it would pass width.
func exampleSection(name string, width int) string {
	list := examples[name]
	if len(list) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nEXAMPLES:\n")
	indent := strings.Repeat(" ", helpIndent)
	for i, e := range list {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, line := range wrapWords(e.does, width-helpIndent-2) {
			b.WriteString(indent + "# " + line + "\n")
		}
		b.WriteString(indent + strings.Join(breakCommandLine(e.line, width-helpIndent-6), " \\\n"+indent+"    ") + "\n")
	}
	return b.String()
}

// breakCommandLine breaks a command line into lines of at most width bytes where it can,
// each break before an option, so that an option stays with its value.
func breakCommandLine(line string, width int) []string {
	words := strings.Fields(line)
	var units []string
	for i := 0; i < len(words); i++ {
		unit := words[i]
		if strings.HasPrefix(unit, "-") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			i++
			unit += " " + words[i]
		}
		units = append(units, unit)
	}
	var lines []string
	for _, u := range units {
		if n := len(lines); n > 0 && len(lines[n-1])+1+len(u) <= width {
			lines[n-1] += " " + u
		} else {
			lines = append(lines, u)
		}
	}
	return lines
}
