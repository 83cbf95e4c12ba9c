package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// TestEveryCommandHasExamples: every command of sno-iso and of the coreos-installer drop-in
// shows examples in its --help, and the table has no entry for a command that does not exist
// (a renamed command would leave its examples behind).
func TestEveryCommandHasExamples(t *testing.T) {
	known := map[string]bool{}
	for _, app := range []*cli.App{newApp(nil, io.Discard, io.Discard), newDropInApp(nil, io.Discard, io.Discard)} {
		for _, name := range helpNames(app) {
			known[name] = true
			if len(examples[name]) == 0 {
				t.Errorf("%s has no examples: add them to examples in examples.go", name)
			}
			for _, e := range examples[name] {
				if !strings.HasPrefix(e.line, app.Name+" ") || e.does == "" {
					t.Errorf("%s: example %q does not start with %s or says nothing of what it does", name, e.line, app.Name)
				}
			}
		}
	}
	for name := range examples {
		if !known[name] {
			t.Errorf("examples has an entry for %q, which is no command", name)
		}
	}
	help := string(mustSno(t, nil, "pxe", "build", "--help"))
	if !strings.Contains(help, "EXAMPLES:\n   # "+examples["sno-iso pxe build"][0].does+"\n   sno-iso pxe build --iso") {
		t.Errorf("pxe build --help does not show its first example:\n%s", help)
	}
}

// exampleWorkspace is a directory holding the files the examples name, under those names: a
// live ISO, a bootstrap-in-place config, sno.yaml, the ISO build makes of them, a nodes
// directory and the network, Ignition and initrd files.
func exampleWorkspace(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), filepath.Join(dir, "rhcos-live.x86_64.iso"))
	bip := bipConfig(t, dir, 150000)
	sno := "coreOSInstallation:\n  installationDisk: /dev/sda\n"
	writeFile(t, filepath.Join(dir, "sno.yaml"), sno)
	writeFile(t, filepath.Join(dir, "nmstate.yaml"), nmstateDoc)
	writeFile(t, filepath.Join(dir, "agent-config.yaml"), agentConfig)
	writeFile(t, filepath.Join(dir, "static-ip.nmconnection"), "[connection]\nid=eno1\ntype=ethernet\ninterface-name=eno1\n\n"+
		"[ipv4]\nmethod=manual\naddress1=192.0.2.10/24,192.0.2.1\ndns=192.0.2.1;\n")
	if err := os.WriteFile(filepath.Join(dir, "rhcos-live-initramfs.x86_64.img"), stockLiveInitramfs(t), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "config.ign"), `{"ignition":{"version":"3.2.0"}}`)
	writeFile(t, filepath.Join(dir, "master.ign.orig"), pointerIgn)
	writeFile(t, filepath.Join(dir, "master.ign"), pointerWithFile)
	node := filepath.Join(dir, "nodes", "sno1")
	if err := os.MkdirAll(node, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, bip, filepath.Join(node, "bootstrap-in-place-for-live-iso.ign"))
	writeFile(t, filepath.Join(node, "sno.yaml"), sno)
	for _, args := range [][]string{
		{"build", "--iso", "rhcos-live.x86_64.iso", "--ignition", "bootstrap-in-place-for-live-iso.ign", "--config", "sno.yaml",
			"--network-keyfile", "static-ip.nmconnection", "-o", "sno.iso"},
		{"pxe", "ignition", "wrap", "-i", "config.ign", "-o", "ignition.img"},
		{"serve", "rotate-secret", "--nodes", "nodes"},
	} {
		if r := runBinary(t, bin, dir, nil, args...); r.code != 0 {
			t.Fatalf("preparing the examples' files: sno-iso %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	return dir
}

// copyTree copies the regular files and directories under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// outputOf is the file or directory that line writes with -o or --output, or "".
func outputOf(line string) string {
	words := strings.Fields(line)
	for i, w := range words[:len(words)-1] {
		if (w == "-o" || w == "--output") && words[i+1] != "-" {
			return words[i+1]
		}
	}
	return ""
}

// removeOutput removes from dir what line writes, which the workspace may hold as the input
// of other examples.
func removeOutput(t *testing.T, dir, line string) {
	t.Helper()
	if out := outputOf(line); out != "" {
		if err := os.RemoveAll(filepath.Join(dir, out)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExamplesRun runs every example line that needs no network, BMC, booting node or
// long-running server, as a shell runs it, in a copy of a directory holding the files it
// names, and expects it to succeed: what --help and the man page show works as shown.
func TestExamplesRun(t *testing.T) {
	testenv.Tool(t, "sh", "sh")
	bin := t.TempDir()
	if err := os.Symlink(snoISO(t), filepath.Join(bin, "sno-iso")); err != nil {
		testenv.Missing(t, "cannot make a symbolic link here: %v", err)
	}
	if err := os.Symlink(snoISO(t), filepath.Join(bin, dropInName)); err != nil {
		t.Fatal(err)
	}
	workspace := exampleWorkspace(t, snoISO(t))
	// pxe build needs a live initramfs, which the fixture has only as a placeholder; putting
	// one in breaks the digest that its coreos/miniso.dat records for minimal ISOs, so only
	// pxe build's examples get that ISO.
	pxeWorkspace := t.TempDir()
	copyTree(t, workspace, pxeWorkspace)
	copyFile(t, withInitramfs(t, stockLiveInitramfs(t)), filepath.Join(pxeWorkspace, "rhcos-live.x86_64.iso"))
	if err := os.WriteFile(filepath.Join(pxeWorkspace, "rhcos-live-initramfs.x86_64.img"), stockLiveInitramfs(t), 0o644); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for name, list := range examples {
		for _, e := range list {
			if e.needs != offline {
				t.Logf("not run (%s): %s", needsText[e.needs], e.line)
				continue
			}
			ran++
			dir := t.TempDir()
			if strings.Contains(e.line, " pxe build ") || strings.Contains(e.line, " pxe customize ") {
				copyTree(t, pxeWorkspace, dir)
			} else {
				copyTree(t, workspace, dir)
			}
			removeOutput(t, dir, e.line)
			home := t.TempDir()
			cmd := exec.Command("sh", "-c", e.line)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home,
				"XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "TMPDIR=" + home}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("example of %s failed: %s: %v\n%s", name, e.line, err, out)
				continue
			}
			if written := outputOf(e.line); written != "" {
				if _, err := os.Stat(filepath.Join(dir, written)); err != nil {
					t.Errorf("example of %s succeeded without writing %s: %s\n%s", name, written, e.line, out)
				}
			}
		}
	}
	if ran < 40 {
		t.Errorf("ran only %d examples", ran)
	}
}
