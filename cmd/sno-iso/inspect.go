package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/internal/safetext"
	"github.com/sno-iso/sno-iso/nmstate"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "describe a live ISO: volume, architecture, embed areas, what is embedded, features",
		ArgsUsage: "ISO",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print a JSON document instead of text"}},
		Action:    inspect,
	}
}

func inspect(c *cli.Context) error {
	iso, isoPath, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	r, err := node.Inspect(iso, isoPath)
	if err != nil {
		return err
	}
	if r.MinimalISO.Customized {
		r.MinimalISO.Reason += " (`sno-iso reset` undoes the customizations)"
	}
	if r.MinimalISO.Damaged {
		r.MinimalISO.Reason += " (`sno-iso reset` repairs it)"
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printInspection(c.App.Writer, r)
	return nil
}

// printInspection prints r for a person; what the ISO itself says (names, kernel arguments,
// the config's words) is escaped, since a crafted ISO could forge lines or drive the terminal.
func printInspection(w io.Writer, r *node.Report) {
	esc := safetext.Escape
	fmt.Fprintf(w, "ISO:           %s (%d bytes)\n", esc(r.Path), r.Size)
	fmt.Fprintf(w, "Volume ID:     %s\n", esc(r.VolumeID))
	if r.SystemID != "" {
		fmt.Fprintf(w, "System ID:     %s\n", esc(r.SystemID))
	}
	fmt.Fprintf(w, "Architecture:  %s\n", esc(r.Arch))
	a := r.Ignition
	fmt.Fprintf(w, "Ignition area: %s, bytes %d to %d (%d bytes, found through "+
		"%s)\n", esc(a.File), a.Offset, a.Offset+a.Length, a.Length, esc(a.Source))
	if a.LegacyHeader != "" {
		fmt.Fprintf(w, "               legacy coreiso+ header %s\n", esc(a.LegacyHeader))
	}
	if a.Problem != "" {
		fmt.Fprintf(w, "               DAMAGED: %s; `sno-iso reset` empties it\n", esc(a.Problem))
	} else if len(a.Members) == 0 {
		fmt.Fprintf(w, "               empty (pristine)\n")
	} else {
		fmt.Fprintf(w, "               %d of %d bytes used (%.1f%%)\n", a.BytesUsed, a.Length, 100*float64(a.BytesUsed)/float64(a.Length))
		for _, m := range a.Members {
			fmt.Fprintf(w, "               %s (%d bytes)\n", esc(m.Path), m.Size)
		}
	}
	if in := r.Installation; in != nil {
		fmt.Fprintf(w, "Installation:  to %s by coreos-installer %s\n", esc(in.Disk), esc(strings.Join(in.InstallerArgs, " ")))
		wipe := "no"
		if in.WipeDisk {
			wipe = "yes, holders released and signatures wiped first"
		}
		fmt.Fprintf(w, "               wipe disk: %s\n", wipe)
		for _, script := range in.PreInstall {
			fmt.Fprintf(w, "               pre-install: %s\n", esc(script))
		}
		for _, script := range in.PostInstall {
			fmt.Fprintf(w, "               post-install: %s\n", esc(script))
		}
		switch m := in.RebootDelayMinutes; {
		case m == nil:
		case *m == 0:
			fmt.Fprintf(w, "               reboot delay: none, reboots right after installing\n")
		default:
			fmt.Fprintf(w, "               reboot delay: %s after installing\n", shortDuration(time.Duration(*m)*time.Minute))
		}
		if len(in.MachineConfigs) > 0 {
			fmt.Fprintf(w, "               MachineConfigs handed to the Machine Config Operator:\n")
			for _, name := range in.MachineConfigs {
				fmt.Fprintf(w, "                 %s\n", esc(name))
			}
		}
	}
	printNetwork(w, r.Network)
	printHostname(w, r.Hostname)
	if k := r.Kargs; k != nil {
		offs := make([]string, len(k.Areas))
		for i, ar := range k.Areas {
			offs[i] = fmt.Sprintf("%s@%d", esc(ar.File), ar.Offset)
		}
		fmt.Fprintf(w, "Kernel args:   %d area(s) of %d bytes (%s): %s\n", len(k.Areas), k.Size, esc(k.Source), strings.Join(offs, ", "))
		fmt.Fprintf(w, "  default:     %s\n", esc(k.Default))
		if k.Problem != "" {
			fmt.Fprintf(w, "  current:     DAMAGED, the areas disagree (`sno-iso kargs reset` repairs them):\n")
			for _, ar := range k.Areas {
				fmt.Fprintf(w, "    %s@%d: %q\n", esc(ar.File), ar.Offset, ar.Kargs)
			}
		} else if k.Current == k.Default {
			fmt.Fprintf(w, "  current:     (default)\n")
		} else {
			fmt.Fprintf(w, "  current:     %s\n", esc(k.Current))
		}
	} else {
		fmt.Fprintf(w, "Kernel args:   no karg embed areas\n")
	}
	if f := r.Features; f != nil {
		fmt.Fprintf(w, "Features:      installer-config=%t live-initrd-network=%t\n", f.InstallerConfig, f.LiveInitrdNetwork)
	} else {
		fmt.Fprintf(w, "Features:      none declared (no coreos/features.json)\n")
	}
	switch {
	case r.MinimalISO.Method == "miniso.dat":
		fmt.Fprintf(w, "Minimal ISO:   can be extracted from coreos/miniso.dat, as coreos-installer does\n")
	case r.MinimalISO.Available:
		fmt.Fprintf(w, "Minimal ISO:   can be rebuilt (no coreos/miniso.dat)\n")
	default:
		fmt.Fprintf(w, "Minimal ISO:   cannot be extracted: %s\n", esc(r.MinimalISO.Reason))
	}
}

// printHostname says which name the live and the installed system take.
func printHostname(w io.Writer, h *node.HostnameReport) {
	switch {
	case h == nil:
	case h.Live == h.Installed:
		fmt.Fprintf(w, "Hostname:      %s (live and installed system)\n", h.Live)
	case h.Installed == "":
		fmt.Fprintf(w, "Hostname:      %s (the live system only: the installed system takes its name from DHCP or reverse DNS)\n", h.Live)
	case h.Live == "":
		fmt.Fprintf(w, "Hostname:      %s (the installed system only)\n", h.Installed)
	default:
		fmt.Fprintf(w, "Hostname:      %s on the live system, %s on the installed system\n", h.Live, h.Installed)
	}
}

// printNetwork prints one line per profile: what it binds to, and each family's method,
// addresses, gateways and DNS servers.
func printNetwork(w io.Writer, n *node.NetworkReport) {
	if n == nil {
		return
	}
	copied := "the live system only: not copied to the installed system"
	if n.CopiedToInstalledSystem {
		copied = "copied to the installed system"
	}
	fmt.Fprintf(w, "Network:       %d profile(s), %s\n", len(n.Profiles), copied)
	for _, p := range n.Profiles {
		line := []string{p.ID, p.Type}
		switch {
		case p.Interface != "":
			line = append(line, "on "+p.Interface)
		case p.MAC != "":
			line = append(line, "on the NIC with MAC "+p.MAC)
		}
		if p.Controller != "" {
			line = append(line, "port of "+p.Controller)
		}
		for _, f := range []struct {
			name string
			fam  *nmstate.Family
		}{{"ipv4", p.IPv4}, {"ipv6", p.IPv6}} {
			if f.fam == nil || f.fam.Method == "" {
				continue
			}
			part := f.name + " " + f.fam.Method
			if len(f.fam.Addresses) > 0 {
				part += " " + strings.Join(f.fam.Addresses, " ")
			}
			if len(f.fam.Gateways) > 0 {
				part += " gateway " + strings.Join(f.fam.Gateways, " ")
			}
			if len(f.fam.DNS) > 0 {
				part += " dns " + strings.Join(f.fam.DNS, " ")
			}
			line = append(line, part)
		}
		// Names and addresses come from the ISO's keyfiles: escaped, as in printInspection.
		fmt.Fprintf(w, "               %s (%s)\n", safetext.Escape(strings.Join(line, ", ")), safetext.Escape(p.File))
	}
}
