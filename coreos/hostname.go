package coreos

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// HostnamePath is the static hostname file: systemd sets the hostname from it at boot, and
// the kubelet registers the node under that name.
const HostnamePath = "/etc/hostname"

// maxHostnameLength is the kernel's limit on a hostname (__NEW_UTS_LEN): systemd ignores an
// /etc/hostname longer than this, which RFC 1123's 253 would allow, and the node would be
// named by DHCP or "localhost" again.
const maxHostnameLength = 64

// HostnameError says why a name cannot be the node's hostname.
type HostnameError struct {
	Name   string
	Reason string
}

func (e *HostnameError) Error() string {
	return fmt.Sprintf("hostname %q: %s", e.Name, e.Reason)
}

// ValidateHostname checks that name can be written to /etc/hostname and become the node's
// name: lowercase RFC 1123 labels (letters, digits and inner hyphens, at most 63 each)
// joined by dots, at most 64 characters in all, and not "localhost", which the kubelet
// would register as the node name whatever the host is.
func ValidateHostname(name string) error {
	fail := func(reason string) error { return &HostnameError{Name: name, Reason: reason} }
	switch {
	case name == "":
		return fail("empty")
	case len(name) > maxHostnameLength:
		return fail(fmt.Sprintf("%d characters: the kernel and systemd take at most %d, so the node would not get it",
			len(name), maxHostnameLength))
	case name == "localhost" || strings.HasPrefix(name, "localhost."):
		return fail("the placeholder name of a host that has none: give the node's own name")
	}
	for _, label := range strings.Split(name, ".") {
		switch {
		case label == "":
			return fail("an empty label: dots separate names such as sno1.example.com")
		case len(label) > 63:
			return fail(fmt.Sprintf("the label %q is longer than 63 characters (RFC 1123)", label))
		case label[0] == '-' || label[len(label)-1] == '-':
			return fail(fmt.Sprintf("the label %q starts or ends with a hyphen (RFC 1123)", label))
		}
		for _, r := range label {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			case r >= 'A' && r <= 'Z':
				return fail("uppercase letters: Kubernetes node names are lowercase; write it as " + strings.ToLower(name))
			default:
				return fail(fmt.Sprintf("%q is not a letter, digit, hyphen or dot (RFC 1123)", r))
			}
		}
	}
	return nil
}

// hostnameFile is the Ignition file entry (valid in every 3.x spec) that writes name to
// /etc/hostname, mode 0644.
func hostnameFile(name string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"path":      HostnamePath,
		"mode":      0o644,
		"overwrite": true,
		"contents":  map[string]any{"source": "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(name+"\n"))},
	})
}

// hostnameCustomization writes /etc/hostname on the installed node. It travels in the
// master MachineConfig as the other customizations do: bootstrap-in-place has no pointer
// config to edit, and the rendered master config is what install-to-disk writes to the disk
// (master.ign), so the installed system boots with the name and the Machine Config Operator
// keeps it.
func hostnameCustomization(name string) (*Customization, error) {
	file, err := hostnameFile(name)
	if err != nil {
		return nil, err
	}
	raw := fmt.Sprintf(`{"ignition":{"version":%q},"storage":{"files":[%s]}}`, mcoMinIgnitionVersion, file)
	return customizationFromIgnition("the hostname "+name, []byte(raw))
}

// setHostname writes /etc/hostname into the config, replacing any it had.
func (ig *Ignition) setHostname(name string) error {
	file, err := hostnameFile(name)
	if err != nil {
		return err
	}
	if err := ig.spec.setFileAndUnit(ig.config, file, nil); err != nil {
		return fmt.Errorf("setting %s in the Ignition %s config: %w", HostnamePath, ig.Version, err)
	}
	return nil
}
