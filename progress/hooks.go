package progress

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// Where the hooks live on the node.
const (
	// ReporterPath is the script every hook runs: `sno-iso-report PHASE`.
	ReporterPath = "/usr/local/bin/sno-iso-report"
	// URLPath holds the node's report URL; it carries the report token, so only root reads it.
	URLPath = "/etc/sno-iso/report-url"
	// CAPath holds the certificate an https report URL's server is verified with, when given.
	CAPath = "/etc/sno-iso/report-ca.pem"
	// LiveUnit reports LiveBooted once the live system is on the network, and Rebooting when
	// it shuts down for the reboot into the installed system.
	LiveUnit = "sno-iso-report-live.service"
	// InstalledUnit reports InstalledBooted from the installed system, once.
	InstalledUnit = "sno-iso-report-installed.service"
	// DropinName is the drop-in the hooks add to the bootstrap units.
	DropinName = "10-sno-iso-report.conf"

	installedMarker = "/var/lib/sno-iso/installed-booted.reported"
)

// Report hooks send at most this much: curl gives up a try after maxTime seconds and tries
// retries more times, so a server that is away delays a unit by well under a minute.
const (
	connectTimeout = 3
	maxTime        = 8
	retries        = 2
	logLines       = 400
)

// Hooks makes the files and units that report a node's phases to URL.
type Hooks struct {
	URL string
	// CA, when set, is the PEM certificate that verifies the server of an https URL: a
	// self-signed server certificate, or the root of its chain.
	CA []byte
}

// File is a file the hooks need on the node.
type File struct {
	Path string
	Mode int
	Data []byte
}

// Unit is a systemd unit the hooks add (Contents set) or extend (Dropins only).
type Unit struct {
	Name     string
	Enabled  bool
	Contents string
	Dropins  []Dropin
}

// Dropin is a drop-in of a unit.
type Dropin struct {
	Name, Contents string
}

// The units of the bootstrap-in-place flow the hooks extend.
const (
	bootkubeUnit      = "bootkube.service"
	installToDiskUnit = "install-to-disk.service"
)

// Live returns what the live system needs: the reporter and its URL, the unit reporting
// LiveBooted and Rebooting, and drop-ins that report the start and end of bootkube.service and
// the failure of install-to-disk.service (whose script reports InstallStarted and InstallDone
// through ScriptCall). Drop-ins leave the installer's units as they are.
func (h Hooks) Live() ([]File, []Unit) {
	return h.files(), []Unit{
		{Name: LiveUnit, Enabled: true, Contents: `[Unit]
Description=Report to sno-iso that the live system is up, and when it reboots
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=-` + ReporterPath + ` ` + string(LiveBooted) + `
ExecStop=-` + ReporterPath + ` ` + string(Rebooting) + `

[Install]
WantedBy=multi-user.target
`},
		{Name: bootkubeUnit, Dropins: []Dropin{{Name: DropinName, Contents: `[Service]
ExecStartPre=-` + ReporterPath + ` ` + string(BootkubeStarted) + `
ExecStopPost=-` + ReporterPath + ` --stopped %n ` + string(BootkubeDone) + `
`}}},
		{Name: installToDiskUnit, Dropins: []Dropin{{Name: DropinName, Contents: `[Service]
ExecStopPost=-` + ReporterPath + ` --stopped %n
`}}},
	}
}

// Installed returns what the installed system needs to report InstalledBooted once: it
// reaches the node through a MachineConfig.
func (h Hooks) Installed() ([]File, []Unit) {
	return h.files(), []Unit{{Name: InstalledUnit, Enabled: true, Contents: `[Unit]
Description=Report to sno-iso that the installed system booted
Wants=network-online.target
After=network-online.target
ConditionPathExists=!` + installedMarker + `

[Service]
Type=oneshot
ExecStart=-` + ReporterPath + ` --once ` + installedMarker + ` ` + string(InstalledBooted) + `

[Install]
WantedBy=multi-user.target
`}}
}

// ScriptCall is the line a shell script runs to report phase: it never fails the script.
func ScriptCall(phase Phase) string {
	return ReporterPath + " " + string(phase) + " || true"
}

func (h Hooks) files() []File {
	files := []File{
		{Path: ReporterPath, Mode: 0o755, Data: []byte(reporterScript)},
		{Path: URLPath, Mode: 0o600, Data: []byte(h.URL + "\n")},
	}
	if len(h.CA) > 0 {
		files = append(files, File{Path: CAPath, Mode: 0o644, Data: h.CA})
	}
	return files
}

// reporterScript sends one report with curl and always exits 0: a report that cannot be sent
// is given up, never a reason for a unit to fail. It is POSIX sh with tr, sed, awk and tail.
var reporterScript = fmt.Sprintf(`#!/bin/sh
# sno-iso-report, written by sno-iso: reports this node's install phase to sno-iso serve.
#   sno-iso-report PHASE
#   sno-iso-report --once MARKER PHASE    report once: MARKER is created when it was sent
#   sno-iso-report --stopped UNIT [PHASE] from ExecStopPost: PHASE if UNIT ended well,
#                                         else "failed" with its exit status and journal
# The protocol is in sno-iso's docs/progress.md.
url=$(cat %[1]s 2>/dev/null) || exit 0
cacert=
[ ! -f %[7]s ] || cacert=%[7]s
marker='' unit='' status='' phase=''
case ${1:-} in
--once) marker=$2; phase=$3 ;;
--stopped)
	unit=$2 phase=${3:-}
	if [ "${SERVICE_RESULT:-success}" = success ]; then
		# Stopped by systemd (at shutdown) is no news; ended by itself is.
		[ "${EXIT_CODE:-exited}" = exited ] && [ -n "$phase" ] || exit 0
		unit=
	else
		phase=failed
		case ${EXIT_STATUS:-} in
		'' | *[!0-9]*) ;;
		*) status=$EXIT_STATUS ;;
		esac
	fi ;;
*) phase=${1:-} ;;
esac
[ -n "$phase" ] || exit 0

tmp=$(mktemp) || exit 0
trap 'rm -f "$tmp"' EXIT
{
	printf '{"phase":"%%s"' "$phase"
	[ -z "$unit" ] || printf ',"unit":"%%s"' "$unit"
	[ -z "$status" ] || printf ',"status":%%s' "$status"
	if [ -n "$unit" ]; then
		printf ',"log":'
		{
			echo "$unit: result ${SERVICE_RESULT:-} (${EXIT_CODE:-} ${EXIT_STATUS:-})"
			journalctl --unit "$unit" --boot --lines %[2]d --no-pager --output cat 2>&1
		} | tail -c %[3]d | tr -d '\000-\010\013-\037' |
			sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/	/\\t/g' |
			awk 'BEGIN { ORS = ""; print "\"" } NR > 1 { print "\\n" } { print } END { print "\"" }'
	fi
	printf '}'
} >"$tmp"

if curl --silent --show-error --fail --connect-timeout %[4]d --max-time %[5]d \
	--retry %[6]d --retry-delay 1 --retry-connrefused \
	${cacert:+--cacert "$cacert"} --header 'Content-Type: application/json' --data-binary "@$tmp" --output /dev/null "$url"; then
	[ -z "$marker" ] || { mkdir -p "$(dirname "$marker")" && : >"$marker"; }
else
	echo "sno-iso-report: could not report $phase; going on without" >&2
fi
exit 0
`, URLPath, logLines, MaxLog, connectTimeout, maxTime, retries, CAPath)

// TrustAnchor is the certificate of a PEM chain (a server's --tls-cert file) that verifies
// it: the last one, the root of the chain or a self-signed certificate itself.
func TrustAnchor(chain []byte) ([]byte, error) {
	var last *pem.Block
	for rest := chain; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			last = b
		}
	}
	if last == nil {
		return nil, errors.New("no PEM certificate")
	}
	if _, err := x509.ParseCertificate(last.Bytes); err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(last), nil
}
