package node

// WarningKind says what a Warning is about, so that a caller can add its own advice (the
// command line names its flag beside the sno.yaml setting).
type WarningKind int

const (
	// IgnitionWarning is a warning of validating the bootstrap-in-place config.
	IgnitionWarning WarningKind = iota + 1
	// CustomizationWarning is a warning about a customization file.
	CustomizationWarning
	// KeyfilesNotCopied says that copyNetwork is false while keyfiles configure the live
	// system: the installed node will use DHCP.
	KeyfilesNotCopied
	// LiveIPNotCopied says that an ip= live kernel argument will not reach the installed
	// node; Setting is the copyNetwork setting that fixes it.
	LiveIPNotCopied
	// MinimalOverDHCP says that a minimal ISO relies on DHCP to fetch its root file system.
	MinimalOverDHCP
	// MinimalWithoutRootfsURL says that a minimal ISO has no URL to fetch its root file
	// system from: it cannot boot unaided. Setting is the sno.yaml setting that gives one.
	MinimalWithoutRootfsURL
	// DiskWarning is about the installation disk setting (an unstable kernel name such as
	// /dev/sda); Source is the file that set the disk, "" when Inputs.Overrides did.
	DiskWarning
	// AgentConfigWarning is about a setting of agent-config.yaml that sno-iso does not
	// apply (root device hints another setting overrides); Source is the file.
	AgentConfigWarning
)

// Warning is something worth telling the user once the media is known to be writable.
type Warning struct {
	Kind WarningKind
	Text string
	// Setting is the sno.yaml setting that Text advises or is about, exactly as Text spells
	// it, or "".
	Setting string
	// Source is the file the value the warning is about came from, when Text does not name
	// it: "" for a value of Inputs.Overrides.
	Source string
}

func (w Warning) String() string {
	if w.Source != "" {
		return w.Source + ": " + w.Text
	}
	return w.Text
}
