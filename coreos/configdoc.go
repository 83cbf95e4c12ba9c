package coreos

// KeyDoc documents one key of sno.yaml, for `sno-iso help sno.yaml` and its man page.
type KeyDoc struct {
	// Key is the key's path: coreOSInstallation.installationDisk, interfaces[].name.
	Key string
	// Type is what the value is, in words: string, list of paths, duration.
	Type string
	// Default is what leaving the key out means.
	Default string
	// Example is a value as written in sno.yaml (YAML).
	Example string
	// Meaning says what the key does.
	Meaning string
}

// ConfigKeys documents every key the sno.yaml parser accepts, in the order a file would
// have them. The package's tests check it against the parser's key lists and parse a file
// made of its examples.
var ConfigKeys = []KeyDoc{
	{installationKey, "mapping", "(required, or bootstrapInPlace)", "",
		"how the live system installs the node: the settings below"},
	{installationKey + ".installationDisk", "string: a device path", "(required)", "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3",
		"the disk to install to; a /dev/disk/by-id or by-path name survives a reordering of disks"},
	{installationKey + ".copyNetwork", "boolean", "true with network keyfiles, else false", "true",
		"copy the live system's NetworkManager keyfiles to the installed node"},
	{installationKey + ".appendKargs", "list of kernel arguments", "none", "[\"console=ttyS0,115200n8\"]",
		"kernel arguments to add on the installed node (quote one that holds a comma)"},
	{installationKey + ".deleteKargs", "list of kernel arguments", "none", "[nomodeset]",
		"kernel arguments to remove on the installed node"},
	{installationKey + ".wipeDisk", "boolean", "false", "true",
		"release LVM, md-RAID and device-mapper holders of the disk and wipe its signatures before installing"},
	{installationKey + ".rebootDelay", "duration in whole minutes, at most 24h", "1m", "5m",
		"how long the node waits after writing the disk before it reboots into it"},
	{installConfigSection, "mapping", "(or coreOSInstallation)", "",
		"install-config.yaml's name for coreOSInstallation, with the same keys; a file has one of the two"},
	{liveKargsKey, "mapping", "none", "", "edits of the live system's kernel arguments, applied as coreos-installer applies them"},
	{liveKargsKey + ".append", "list of kernel arguments", "none", "[\"console=ttyS0,115200n8\"]", "arguments to add"},
	{liveKargsKey + ".delete", "list of kernel arguments", "none", "[quiet]", "arguments to remove, before the appends"},
	{liveKargsKey + ".replace", "list of KEY=OLD=NEW", "none", "[ignition.platform.id=metal=qemu]",
		"arguments whose value to replace, after the appends"},
	{networkKey, "mapping", "none", "", "the live system's network, from files"},
	{networkKey + ".keyfiles", "list of paths", "none", "[static-ip.nmconnection]",
		"NetworkManager keyfiles, relative to sno.yaml"},
	{networkKey + ".nmstate", "list of paths", "none", "[nmstate.yaml]", "NMState documents, relative to sno.yaml"},
	{networkConfigKey, "NMState document", "none", "{interfaces: [{name: eno1, type: ethernet, state: up}]}",
		"the live system's network as an inline NMState document, as agent-config.yaml's hosts have it"},
	{interfacesKey, "list of mappings", "none", "[{name: eno1, macAddress: \"00:ef:44:21:e6:a5\"}]",
		"NIC names of networkConfig mapped to MAC addresses: their profiles match the NIC by MAC"},
	{interfacesKey + "[].name", "string", "(required)", "eno1", "the interface's name in networkConfig"},
	{interfacesKey + "[].macAddress", "string: a MAC address", "(required)", "\"00:ef:44:21:e6:a5\"", "the NIC's MAC address"},
	{hostnameKey, "string: a DNS name", "none: the name DHCP or reverse DNS gives", "sno1.example.com",
		"the node's name, in /etc/hostname of the live and the installed system"},
	{customizationsKey, "list of paths", "none", "[99-chrony.yaml]",
		"Ignition configs or MachineConfigs for the installed node, relative to sno.yaml, merged into 99-installer-ignition-master"},
	{outputKey, "mapping", "full ISO", "", "which media build makes"},
	{outputKey + ".kind", "full or minimal", "full", "minimal",
		"minimal: an ISO whose live system fetches its root file system over HTTP"},
	{outputKey + ".rootfsURL", "http(s) URL", "none: give coreos.live.rootfs_url at boot", "http://192.0.2.10:8080/rootfs.img",
		"with kind: minimal, where the live system fetches the root file system"},
	{bmcKey, "mapping", "none", "", "the node's BMC, for sno-iso bmc with --node"},
	{bmcKey + ".address", "URL", "(required)", "https://10.0.0.5",
		"the Redfish address: https://HOST, a System's path, or a Metal3 redfish-virtualmedia:// or idrac-virtualmedia:// address"},
	{bmcKey + ".credentialsFile", "path", "SNO_ISO_BMC_USERNAME and SNO_ISO_BMC_PASSWORD", "bmc-credentials.yaml",
		"YAML file with username: and password:, relative to sno.yaml"},
	{bmcKey + ".systemID", "string", "the BMC's only System", "System.Embedded.1",
		"the System when the BMC manages several: its ID, Name, UUID or path"},
	{bmcKey + ".insecure", "boolean", "false", "true", "do not verify the BMC's TLS certificate"},
	{bmcKey + ".caFile", "path", "the system's CAs", "bmc-ca.pem", "PEM CA that signed the BMC's certificate, relative to sno.yaml"},
	{bmcKey + ".ejectAfterInstall", "boolean", "true when the BMC's credentials are known", "false",
		"eject the media and clear the boot override once the node reports its disk written"},
}

// ConfigExample is a typical sno.yaml, shown after the keys.
const ConfigExample = `coreOSInstallation:
  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3
  appendKargs: ["console=ttyS0,115200n8"]
hostname: sno1.example.com
network:
  nmstate: [nmstate.yaml]
bmc:
  address: https://10.0.0.5
  credentialsFile: bmc-credentials.yaml
`
