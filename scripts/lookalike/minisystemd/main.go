// Command minisystemd is the look-alike live ISO's stand-in for Ignition's files stage and
// for systemd, just enough to run the units a bootstrap-in-place config enables the way RHCOS
// runs them. It writes the config's files (data URLs, gzip or not) and units with their
// drop-ins into the root file system, then those of the configs its ignition.config.merge
// entries carry inline (reporting each such file), keeps the certificate authorities of
// ignition.security.tls in /run/lookalike/ignition-ca (reporting each), then starts, in this order, the units the config
// enables whose names start with "sno-iso-", bootkube.service and install-to-disk.service.
// Each runs as systemd runs a service: ExecStartPre, ExecStart, ExecStartPost, then
// ExecStopPost with SERVICE_RESULT, EXIT_CODE and EXIT_STATUS set, "-" prefixes and %n
// honoured, in its WorkingDirectory, its output on the console and in
// /run/lookalike/journal/UNIT (read by the look-alike's journalctl). A unit whose
// ConditionPathExists fails is skipped. Units run once: Restart= is not followed.
//
// What cannot run in the look-alike is stood in for, and only that: bootkube.service's
// ExecStart (it needs the release image) writes the marker bootkube.sh writes when done.
// install-to-disk.sh runs for real, with the look-alike's coreos-installer and shutdown.
//
// After the units, if install-to-disk.sh scheduled a reboot (shutdown -r +N), it waits N
// look-alike minutes (lookalike.minute=SECONDS on the kernel command line, default 60), then
// stops the started units that remain active (ExecStop, last started first), as systemd does
// at shutdown, and exits 0 so that /init reboots. Exit status 3 means "power off": no reboot
// was scheduled.
//
// Usage: minisystemd CONFIG.ign
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	unitDir     = "/etc/systemd/system"
	journalDir  = "/run/lookalike/journal"
	rebootFile  = "/run/lookalike/reboot-minutes"
	caDir       = "/run/lookalike/ignition-ca"
	bootkubeSvc = "bootkube.service"
	installSvc  = "install-to-disk.service"
	// bootkubeDone is what bootkube.sh writes when it has finished.
	bootkubeDone = "/opt/openshift/.bootkube.done"
	unitPath     = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// resource is an Ignition resource: the look-alike fetches data URLs only.
type resource struct {
	Source      *string `json:"source"`
	Compression *string `json:"compression"`
}

type config struct {
	Ignition struct {
		Config struct {
			Merge []resource `json:"merge"`
		} `json:"config"`
		Security struct {
			TLS struct {
				CertificateAuthorities []resource `json:"certificateAuthorities"`
			} `json:"tls"`
		} `json:"security"`
	} `json:"ignition"`
	Storage struct {
		Files []struct {
			Path     string   `json:"path"`
			Mode     *int     `json:"mode"`
			Contents resource `json:"contents"`
		} `json:"files"`
	} `json:"storage"`
	Systemd struct {
		Units []struct {
			Name     string  `json:"name"`
			Enabled  *bool   `json:"enabled"`
			Contents *string `json:"contents"`
			Dropins  []struct {
				Name     string  `json:"name"`
				Contents *string `json:"contents"`
			} `json:"dropins"`
		} `json:"units"`
	} `json:"systemd"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: minisystemd CONFIG.ign")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	var cfg config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		fail(fmt.Errorf("%s: %w", os.Args[1], err))
	}
	configs, err := withMerged(cfg, 0)
	if err != nil {
		fail(err)
	}
	var enabled []string
	for i, c := range configs {
		if err := trustCAs(c); err != nil {
			fail(err)
		}
		units, err := apply(c, i > 0)
		if err != nil {
			fail(err)
		}
		enabled = append(enabled, units...)
	}
	var order []string
	for _, name := range enabled {
		if strings.HasPrefix(name, "sno-iso-") {
			order = append(order, name)
		}
	}
	order = append(order, bootkubeSvc, installSvc)
	var active []*unit
	for _, name := range order {
		u, err := loadUnit(name)
		if err != nil {
			report("unit %s: %v", name, err)
			continue
		}
		if u.start() {
			active = append(active, u)
		}
	}
	minutes, err := os.ReadFile(rebootFile)
	if err != nil {
		report("no reboot scheduled")
		os.Exit(3)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(minutes)))
	minute := lookalikeMinute()
	report("reboot in %d look-alike minute(s) of %s", n, minute)
	time.Sleep(time.Duration(n) * minute)
	for i := len(active) - 1; i >= 0; i-- {
		active[i].stop()
	}
	report("rebooting")
}

func fail(err error) {
	report("error=%v", err)
	os.Exit(1)
}

// report prints a line scripts/boot collects.
func report(format string, args ...any) {
	fmt.Printf("SNO-REPORT minisystemd "+format+"\n", args...)
}

func lookalikeMinute() time.Duration {
	cmdline, _ := os.ReadFile("/proc/cmdline")
	for _, arg := range strings.Fields(string(cmdline)) {
		if v, ok := strings.CutPrefix(arg, "lookalike.minute="); ok {
			if s, err := strconv.Atoi(v); err == nil && s >= 0 {
				return time.Duration(s) * time.Second
			}
		}
	}
	return time.Minute
}

// withMerged returns cfg followed by the configs its ignition.config.merge entries name,
// each followed by its own, in order: Ignition merges a child over its parent, so applying
// them in this order lets a later file replace an earlier one at the same path.
func withMerged(cfg config, depth int) ([]config, error) {
	if depth > 10 {
		return nil, errors.New("ignition.config.merge nested more than 10 deep")
	}
	configs := []config{cfg}
	for i, r := range cfg.Ignition.Config.Merge {
		data, err := r.fetch()
		if err != nil {
			return nil, fmt.Errorf("ignition.config.merge[%d]: %w", i, err)
		}
		var child config
		if err := json.Unmarshal(data, &child); err != nil {
			return nil, fmt.Errorf("ignition.config.merge[%d]: %w", i, err)
		}
		more, err := withMerged(child, depth+1)
		if err != nil {
			return nil, err
		}
		configs = append(configs, more...)
	}
	return configs, nil
}

// trustCAs keeps the certificate authorities a config makes Ignition trust in
// /run/lookalike/ignition-ca, as Ignition adds them to its TLS roots, and reports each.
func trustCAs(cfg config) error {
	for _, r := range cfg.Ignition.Security.TLS.CertificateAuthorities {
		data, err := r.fetch()
		if err != nil {
			return fmt.Errorf("ignition.security.tls.certificateAuthorities: %w", err)
		}
		sum := sha256.Sum256(data)
		if err := writeFile(filepath.Join(caDir, hex.EncodeToString(sum[:])+".pem"), data, 0o644); err != nil {
			return err
		}
		report("trusts ignition-ca sha256=%x", sum)
	}
	return nil
}

// fetch returns the resource's contents: a data URL, decompressed.
func (r resource) fetch() ([]byte, error) {
	if r.Source == nil {
		return nil, errors.New("no source")
	}
	data, err := decodeSource(*r.Source)
	if err != nil {
		return nil, err
	}
	if r.Compression != nil && *r.Compression == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	}
	return data, nil
}

// apply writes the config's files and units, as Ignition's files stage does, and returns
// the units it enables. The files of a merged config are reported.
func apply(cfg config, merged bool) ([]string, error) {
	for _, f := range cfg.Storage.Files {
		if f.Contents.Source == nil {
			continue
		}
		data, err := f.Contents.fetch()
		if err != nil {
			report("file %s: %v (not written)", f.Path, err)
			continue
		}
		if merged {
			report("merged-config file %s sha256=%x", f.Path, sha256.Sum256(data))
		}
		mode := os.FileMode(0o644)
		if f.Mode != nil {
			mode = os.FileMode(*f.Mode)
		}
		if err := writeFile(f.Path, data, mode); err != nil {
			return nil, err
		}
	}
	var enabled []string
	for _, u := range cfg.Systemd.Units {
		if u.Contents != nil {
			if err := writeFile(filepath.Join(unitDir, u.Name), []byte(*u.Contents), 0o644); err != nil {
				return nil, err
			}
		}
		for _, d := range u.Dropins {
			if d.Contents != nil {
				if err := writeFile(filepath.Join(unitDir, u.Name+".d", d.Name), []byte(*d.Contents), 0o644); err != nil {
					return nil, err
				}
			}
		}
		if u.Enabled != nil && *u.Enabled {
			enabled = append(enabled, u.Name)
		}
	}
	return enabled, nil
}

func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

// decodeSource decodes a data URL (RFC 2397), the only source the look-alike can fetch.
func decodeSource(source string) ([]byte, error) {
	rest, ok := strings.CutPrefix(source, "data:")
	if !ok {
		return nil, errors.New("not a data URL")
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errors.New("data URL without a comma")
	}
	if strings.HasSuffix(meta, ";base64") {
		return base64.StdEncoding.DecodeString(data)
	}
	s, err := url.PathUnescape(data)
	return []byte(s), err
}

// unit is a service unit file with its drop-ins, as far as the look-alike reads it.
type unit struct {
	name string
	// values lists each directive's values in file then drop-in order; an empty value
	// resets the list, as in systemd.
	values map[string][]string
}

func loadUnit(name string) (*unit, error) {
	u := &unit{name: name, values: map[string][]string{}}
	if err := u.read(filepath.Join(unitDir, name)); err != nil {
		return nil, err
	}
	dropins, _ := filepath.Glob(filepath.Join(unitDir, name+".d", "*.conf"))
	sort.Strings(dropins)
	for _, d := range dropins {
		if err := u.read(d); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (u *unit) read(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") || strings.HasPrefix(line, "[") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if value == "" {
			delete(u.values, key)
			continue
		}
		u.values[key] = append(u.values[key], value)
	}
	return sc.Err()
}

func (u *unit) last(key string) string {
	v := u.values[key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// start runs the unit as a service start and reports whether it stays active.
func (u *unit) start() bool {
	for _, cond := range u.values["ConditionPathExists"] {
		path, negate := strings.CutPrefix(cond, "!")
		_, err := os.Stat(path)
		if (err == nil) == negate {
			report("unit %s skipped: ConditionPathExists=%s", u.name, cond)
			return false
		}
	}
	report("unit %s starting", u.name)
	ok := true
	exitCode, exitStatus := "exited", "0"
	for _, key := range []string{"ExecStartPre", "ExecStart", "ExecStartPost"} {
		for _, line := range u.values[key] {
			code, status, err := u.run(key, line, nil)
			if err != nil {
				ok, exitCode, exitStatus = false, code, status
				break
			}
		}
		if !ok {
			break
		}
	}
	result := "success"
	if !ok {
		result = "exit-code"
	}
	report("unit %s result=%s exit=%s/%s", u.name, result, exitCode, exitStatus)
	remain := u.last("Type") == "oneshot" && u.last("RemainAfterExit") == "yes" && ok
	if remain {
		return true
	}
	u.stopPost(result, exitCode, exitStatus)
	return false
}

// stop stops an active unit at shutdown: ExecStop, then ExecStopPost.
func (u *unit) stop() {
	for _, line := range u.values["ExecStop"] {
		u.run("ExecStop", line, nil)
	}
	u.stopPost("success", "exited", "0")
}

func (u *unit) stopPost(result, code, status string) {
	env := []string{"SERVICE_RESULT=" + result, "EXIT_CODE=" + code, "EXIT_STATUS=" + status}
	for _, line := range u.values["ExecStopPost"] {
		u.run("ExecStopPost", line, env)
	}
}

// run runs one Exec line; an error is a failure that counts (no "-" prefix).
func (u *unit) run(key, line string, env []string) (code, status string, err error) {
	ignore := false
	for len(line) > 0 && strings.ContainsRune("-@:+!", rune(line[0])) {
		ignore = ignore || line[0] == '-'
		line = line[1:]
	}
	args := splitCommand(strings.ReplaceAll(line, "%n", u.name))
	if len(args) == 0 {
		return "", "", nil
	}
	if u.name == bootkubeSvc && key == "ExecStart" {
		args = []string{"/bin/sh", "-c", "echo 'look-alike: bootkube.sh stands in: the control plane is rendered'; mkdir -p /opt/openshift && touch " + bootkubeDone}
	}
	journal, jerr := openJournal(u.name)
	if jerr != nil {
		return "exited", "1", jerr
	}
	defer journal.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append([]string{unitPath, "HOME=/root"}, env...)
	cmd.Dir = u.last("WorkingDirectory")
	if cmd.Dir != "" {
		os.MkdirAll(cmd.Dir, 0o755)
	}
	out := io.MultiWriter(journal, prefixWriter{u.name})
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "exited", "0", nil
	case errors.As(err, &exit):
		code, status = "exited", strconv.Itoa(exit.ExitCode())
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code, status = "killed", ws.Signal().String()
		}
	default:
		code, status = "exited", "203"
		fmt.Fprintf(out, "%s: %v\n", args[0], err)
	}
	if ignore {
		return code, status, nil
	}
	return code, status, fmt.Errorf("%s=%s: %s %s", key, line, code, status)
}

func openJournal(name string) (*os.File, error) {
	if err := os.MkdirAll(journalDir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(journalDir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}

// prefixWriter writes a unit's output on the console, as journald forwards it.
type prefixWriter struct{ unit string }

func (w prefixWriter) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line != "" {
			fmt.Printf("[%s] %s", w.unit, line)
			if !strings.HasSuffix(line, "\n") {
				fmt.Println()
			}
		}
	}
	return len(p), nil
}

// splitCommand splits an Exec line into words as systemd does for plain and quoted words.
func splitCommand(line string) []string {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
