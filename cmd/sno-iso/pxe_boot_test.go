package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// TestPXEBoot boots what `pxe build` wrote the way a PXE loader does, the kernel and the
// customized initramfs straight into QEMU with the kernel arguments of boot.ipxe, and checks
// that the look-alike's /init finds the prepared config at /config.ign.
func TestPXEBoot(t *testing.T) {
	testenv.Long(t, "boot tests take minutes")
	requireBootTools(t)
	iso := lookalikeISO(t)
	requireLiveInitramfs(t, iso)

	in := t.TempDir()
	ign := bipConfig(t, in, 150000)
	dir := filepath.Join(t.TempDir(), "pxe")
	mustSno(t, nil, "pxe", "build", "--iso", iso, "--ignition", ign, "--installation-disk", "/dev/vda", "-o", dir)
	built := filepath.Join(in, "sno.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--installation-disk", "/dev/vda", "-o", built)
	prepared := mustSno(t, nil, "ignition", "show", built)

	kargs := ipxeKernelArgs(t, filepath.Join(dir, "boot.ipxe"))
	for _, want := range []string{"ignition.firstboot", "ignition.platform.id=metal", "console=ttyS0"} {
		if !strings.Contains(" "+kargs+" ", " "+want+" ") {
			t.Errorf("boot.ipxe passes %q, without %s", kargs, want)
		}
	}
	report := bootKernel(t, filepath.Join(dir, "vmlinuz"), filepath.Join(dir, "initrd.img"), kargs)
	for _, want := range []string{"boot=reached", "cmdline=" + kargs, "config.ign sha256=" + bytesSHA(prepared), "end"} {
		if !hasReportLine(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// requireLiveInitramfs fails when the look-alike's initramfs lacks the stamp that every
// RHCOS live initramfs carries and pxe build requires.
func requireLiveInitramfs(t *testing.T, isoPath string) {
	t.Helper()
	iso, err := isobuilder.Open(isoPath)
	if err != nil {
		t.Fatal(err)
	}
	defer iso.Close()
	f, err := iso.PXEFile("initrd.img")
	if err != nil {
		t.Fatal(err)
	}
	stamped := false
	if _, err := initrd.Read(iso.PXEFileReader(f), initrd.ReadOptions{Match: func(p string) bool {
		stamped = stamped || strings.TrimPrefix(p, "./") == isobuilder.LiveInitramfsStamp
		return false
	}}); err != nil {
		t.Fatalf("the look-alike's initrd.img: %v", err)
	}
	if !stamped {
		t.Fatalf("the look-alike's initrd.img has no %s, which RHCOS's has and pxe build requires; scripts/mkliveiso must add it", isobuilder.LiveInitramfsStamp)
	}
}

// ipxeKernelArgs returns the kernel arguments of the kernel line of an iPXE script.
func ipxeKernelArgs(t *testing.T, script string) string {
	t.Helper()
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if fields := strings.Fields(line); len(fields) > 2 && fields[0] == "kernel" {
			return strings.Join(fields[2:], " ")
		}
	}
	t.Fatalf("%s has no kernel line:\n%s", script, b)
	return ""
}

// bootKernel boots kernel and initramfs under QEMU, as a network boot loader hands them
// over, and returns the SNO-REPORT lines of the serial console.
func bootKernel(t *testing.T, kernel, initramfs, kargs string) []string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "serial.log")
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", "-accel", "tcg", "-m", "512", "-smp", "1", "-nic", "none",
		"-nographic", "-monitor", "none", "-serial", "file:"+logPath, "-no-reboot",
		"-kernel", kernel, "-initrd", initramfs, "-append", kargs)
	vmSlots <- struct{}{}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	<-vmSlots
	log, _ := os.ReadFile(logPath)
	t.Logf("QEMU ran %.1fs (%v)", time.Since(start).Seconds(), err)
	if err != nil {
		t.Fatalf("qemu-system-x86_64: %v\n%s\nserial console:\n%s", err, out, log)
	}
	var report []string
	sc := bufio.NewScanner(strings.NewReader(strings.ReplaceAll(string(log), "\r", "")))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if _, line, ok := strings.Cut(sc.Text(), "SNO-REPORT "); ok {
			report = append(report, line)
		}
	}
	if len(report) == 0 {
		t.Fatalf("no SNO-REPORT line on the serial console:\n%s", log)
	}
	t.Logf("report:\n  %s", strings.Join(report, "\n  "))
	return report
}

func hasReportLine(report []string, want string) bool {
	for _, line := range report {
		if line == want || strings.HasPrefix(line, want+" ") {
			return true
		}
	}
	return false
}
