package coreos

import (
	"fmt"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/progress"
)

// The install-to-disk contract of openshift-install's bootstrap-in-place Ignition. The
// paths and marker files are the installer's: the assisted installer and users' debugging
// habits rely on them.
const (
	InstallToDiskUnitName   = "install-to-disk.service"
	InstallToDiskScriptPath = "/usr/local/bin/install-to-disk.sh"
	BootkubeUnitName        = "bootkube.service"

	// MasterIgnitionPath is written by bootstrap-in-place.sh once bootkube has rendered
	// the control plane; coreos-installer installs the disk with it.
	MasterIgnitionPath = "/opt/openshift/master.ign"

	bootkubeDoneMarker        = "/opt/openshift/.bootkube.done"
	coreosInstallerDoneMarker = "/opt/openshift/coreos-installer.done"
	installToDiskDoneMarker   = "/opt/openshift/.install-to-disk.done"

	installToDiskScriptMode = 0o555

	// InstallScriptFailedStatus is install-to-disk.sh's exit status when a pre- or
	// post-install script fails. The unit does not restart on it: like coreos-installer,
	// a failed install script ends the install (no retry, no reboot), where a restart would
	// run the scripts and write the disk again.
	InstallScriptFailedStatus = 90

	// ServiceRecordScriptPath is the installer's library that records the stages of the
	// bootstrap services, which `openshift-install gather bootstrap` collects.
	ServiceRecordScriptPath = "/usr/local/bin/bootstrap-service-record.sh"
)

// RenderInstallToDiskUnit returns install-to-disk.service. It is the installer's unit plus
// an [Install] section, without which enabling it through Ignition does nothing, and
// RestartPreventExitStatus, so that a failed install script ends the install: Restart=
// still retries other failures.
func RenderInstallToDiskUnit() string {
	return `[Unit]
Description=Install to disk
Requires=bootkube.service
Wants=bootkube.service
After=bootkube.service
ConditionPathExists=!` + installToDiskDoneMarker + `

[Service]
WorkingDirectory=/opt/openshift
ExecStart=` + InstallToDiskScriptPath + `
Restart=on-failure
RestartSec=5s
RestartPreventExitStatus=` + fmt.Sprint(InstallScriptFailedStatus) + `

[Install]
WantedBy=multi-user.target
`
}

// RenderInstallToDiskScript returns install-to-disk.sh for a validated installation. Like
// the installer's script it waits for bootkube to finish, runs coreos-installer once
// (a marker file makes a restarted unit skip it) and schedules the reboot. With
// serviceRecords (the config carries ServiceRecordScriptPath) it also records these three
// stages, as the installer's script does, for `openshift-install gather bootstrap`.
func RenderInstallToDiskScript(inst Installation, serviceRecords bool) string {
	return renderInstallToDiskScript(inst, serviceRecords, false)
}

// renderInstallToDiskScript is RenderInstallToDiskScript, with the progress reports of the
// install's start and end when report is set.
func renderInstallToDiskScript(inst Installation, serviceRecords, report bool) string {
	reportLine := func(string, progress.Phase) string { return "" }
	if report {
		reportLine = func(indent string, phase progress.Phase) string { return indent + progress.ScriptCall(phase) + "\n" }
	}
	disk := shellQuote(inst.Disk)
	// The library exits when a stage starts before the previous one ended: every start
	// below has its success before the next start.
	start, success := func(string, string) string { return "" }, func(string) string { return "" }
	if serviceRecords {
		start = func(indent, stage string) string { return indent + "record_service_stage_start \"" + stage + "\"\n" }
		success = func(indent string) string { return indent + "record_service_stage_success\n" }
	}
	var b strings.Builder
	b.WriteString(`#!/bin/bash
# install-to-disk.sh, written by sno-iso: once bootkube has finished on the live system,
# install this node to the target disk with the rendered master Ignition and reboot.
`)
	if serviceRecords {
		// -E lets the library's ERR trap record a failure inside functions too.
		fmt.Fprintf(&b, "set -euoE pipefail\n# shellcheck source=/dev/null\n. %s\n", ServiceRecordScriptPath)
	} else {
		b.WriteString("set -euo pipefail\n")
	}
	if inst.WipeDisk {
		b.WriteString(wipeFunction)
	}
	if len(inst.PreInstall)+len(inst.PostInstall) > 0 {
		b.WriteString(installScriptFunction)
	}
	fmt.Fprintf(&b, `
%[3]secho "Waiting for %[1]s"
until [ -f %[1]s ]; do
	sleep 5
done
%[4]s
if [ ! -f %[2]s ]; then
`, bootkubeDoneMarker, coreosInstallerDoneMarker, start("", "wait-for-bootkube"), success(""))
	b.WriteString(reportLine("\t", progress.InstallStarted))
	b.WriteString(start("\t", "coreos-installer"))
	for _, script := range inst.PreInstall {
		fmt.Fprintf(&b, "\t%s pre %s\n", installScriptRunner, shellQuote(script))
	}
	if inst.WipeDisk {
		fmt.Fprintf(&b, "\trelease_and_wipe %s\n", disk)
	}
	fmt.Fprintf(&b, "\techo \"Installing to %s\"\n\t%s\n", inst.Disk, installerCommand(inst))
	for _, script := range inst.PostInstall {
		fmt.Fprintf(&b, "\t%s post %s\n", installScriptRunner, shellQuote(script))
	}
	fmt.Fprintf(&b, `	touch %s
%sfi
%s
`, coreosInstallerDoneMarker, success("\t"), reportLine("", progress.InstallDone))
	minutes := int(inst.EffectiveRebootDelay() / time.Minute)
	fmt.Fprintf(&b, `%secho "Going to reboot in %d minute(s)"
shutdown -r +%d "Bootstrap completed, server is going to reboot."
touch %s
echo "Done"
%s`, start("", "reboot"), minutes, minutes, installToDiskDoneMarker, success(""))
	return b.String()
}

// installerCommand is the coreos-installer command line, every user value shell-quoted.
func installerCommand(inst Installation) string {
	cmd := []string{"coreos-installer", "install", "-i", MasterIgnitionPath}
	if inst.CopyNetwork {
		cmd = append(cmd, "--copy-network")
	}
	for _, karg := range inst.AppendKargs {
		cmd = append(cmd, "--append-karg", shellQuote(karg))
	}
	for _, karg := range inst.DeleteKargs {
		cmd = append(cmd, "--delete-karg", shellQuote(karg))
	}
	return strings.Join(append(cmd, shellQuote(inst.Disk)), " ")
}

// installScriptRunner is the name of the script's function that runs a pre- or post-install
// script, which inspect recognises.
const installScriptRunner = "run_install_script"

// installScriptFunction runs the user's pre- and post-install scripts (coreos-installer's
// --pre-install and --post-install). A failing script ends the install there, with a line
// in the unit's journal naming it, and InstallScriptFailedStatus, on which the unit does not
// restart; the unit's failure report (progress hooks) carries that journal line.
var installScriptFunction = fmt.Sprintf(`
# run_install_script KIND SCRIPT: run a pre- or post-install script; its failure ends the install
# with exit status %[1]d, on which install-to-disk.service does not restart.
run_install_script() {
	local status=0
	echo "Running $1-install script $2"
	"$2" || status=$?
	if [ "${status}" -ne 0 ]; then
		echo "The $1-install script $2 failed with exit status ${status}: the install stops here" >&2
		exit %[1]d
	fi
}
`, InstallScriptFailedStatus)

// wipeFunction frees the target disk of what a previous OS left on it. Holders are
// released topmost first (lsblk lists a stacked device after its parent), but only the
// target disk and its own partitions are wiped: an md mirror or an LVM volume group that
// spans other disks is stopped or deactivated, never written on those disks.
const wipeFunction = `
# release_and_wipe DISK: stop md arrays and remove device-mapper devices (LVM, crypt,
# multipath) built on DISK, then wipe the signatures of DISK and its partitions, so that
# coreos-installer does not fail with "found busy partitions".
release_and_wipe() {
	local target
	target=$(readlink -f "$1")
	echo "Releasing the holders of ${target} and wiping its signatures"
	lsblk --noheadings --raw --paths --output NAME,TYPE "${target}" | tac | awk '!seen[$1]++' |
		while read -r name type; do
			case "${type}" in
			raid* | md) mdadm --stop "${name}" || echo "Could not stop ${name}" ;;
			lvm | crypt | dm | mpath) dmsetup remove --retry "${name}" || echo "Could not remove ${name}" ;;
			esac
		done
	lsblk --noheadings --raw --paths --output NAME,TYPE,PKNAME "${target}" |
		awk -v disk="${target}" '$2 == "part" && $3 == disk { print $1 }' |
		while read -r part; do
			wipefs --all "${part}"
		done
	wipefs --all "${target}"
	udevadm settle
}
`
