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
	// SplitKarg says that a kernel argument of sno.yaml looks cut in two at its comma by a
	// YAML flow list ([console=ttyS0,115200n8]); Text names the file and line.
	SplitKarg
)

// Warning is something worth telling the user once the media is known to be writable.
type Warning struct {
	Kind WarningKind
	Text string
	// Setting is the sno.yaml setting that Text advises, exactly as Text spells it, or "".
	Setting string
}

func (w Warning) String() string { return w.Text }
