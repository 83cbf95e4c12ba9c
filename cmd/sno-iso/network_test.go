package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// networkFixtures declare live-initrd-network (coreos-installer's iso-network.sh runs from
// 2021-12).
var networkFixtures = []string{
	"embed-areas-2021-12.iso",
	"embed-areas-2023-07.x86_64.iso",
	"embed-areas-2023-07.s390x.iso",
}

// keyfileDir writes iso-network.sh's two keyfiles, b before a, and returns their directory.
func keyfileDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.nmconnection"), "[connection]\nid=b\n")
	writeFile(t, filepath.Join(dir, "a.nmconnection"), "[connection]\nid=a\n")
	return dir
}

// sameTree fails unless dirs a and b hold the same file names with the same contents.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	names := dirEntries(t, a)
	if got := dirEntries(t, b); !slices.Equal(got, names) {
		t.Fatalf("%s has %v, %s has %v", a, names, b, got)
	}
	for _, n := range names {
		x, _ := os.ReadFile(filepath.Join(a, n))
		y, _ := os.ReadFile(filepath.Join(b, n))
		if string(x) != string(y) {
			t.Errorf("%s differs: %q vs %q", n, x, y)
		}
	}
}

// TestNetworkEmbedExtractRemove is iso-network.sh on every fixture that supports it.
func TestNetworkEmbedExtractRemove(t *testing.T) {
	for _, name := range networkFixtures {
		t.Run(name, func(t *testing.T) {
			iso := fixtures.File(t, name)
			pristine := fileSHA(t, iso)
			src := keyfileDir(t)
			keyArgs := []string{"network", "embed", "-k", filepath.Join(src, "b.nmconnection"), "-k", filepath.Join(src, "a.nmconnection")}

			embedded := sameSums(t, outputModes(t, iso, nil, keyArgs...))
			if embedded == pristine || fileSHA(t, iso) != pristine {
				t.Fatal("embed did nothing, or changed its input")
			}
			work := t.TempDir()
			n := filepath.Join(work, "net.iso")
			mustSno(t, nil, append(keyArgs, "-o", n, iso)...)
			if fileSHA(t, n) != embedded {
				t.Fatal("a second run gave different bytes")
			}

			out := filepath.Join(work, "extract")
			printed := string(mustSno(t, nil, "network", "extract", "-C", out, n))
			sameTree(t, src, out)
			if printed != filepath.Join(out, "a.nmconnection")+"\n"+filepath.Join(out, "b.nmconnection")+"\n" {
				t.Errorf("extract -C printed %q", printed)
			}
			wantFailure(t, sno(t, nil, "network", "extract", "-C", out, n), "exists")

			shown := string(mustSno(t, nil, "network", "extract", n))
			want := "########## a.nmconnection ##########\n[connection]\nid=a\n\n########## b.nmconnection ##########\n[connection]\nid=b\n"
			if shown != want {
				t.Errorf("extract printed %q, want %q", shown, want)
			}

			dir := t.TempDir()
			for _, args := range [][]string{{}, {"-o", "-"}, {"-o", filepath.Join(dir, "x.iso")}} {
				wantFailure(t, sno(t, nil, append(append(keyArgs[:4:4], args...), n)...), "already has embedded network settings", "-f")
			}
			if fileSHA(t, n) != embedded || len(dirEntries(t, dir)) != 0 {
				t.Fatal("a refused embed wrote something")
			}
			mustSno(t, nil, "network", "embed", "-f", "-k", filepath.Join(src, "b.nmconnection"), n)
			if shown := string(mustSno(t, nil, "network", "extract", n)); shown != "########## b.nmconnection ##########\n[connection]\nid=b\n" {
				t.Errorf("-f did not replace the keyfiles: %q", shown)
			}

			for _, s := range outputModes(t, n, nil, "network", "remove") {
				if s != pristine {
					t.Fatal("network remove did not restore the pristine bytes")
				}
			}
		})
	}
}

// TestNetworkAndIgnitionAreIndependent: each keeps the other, and the area is all zeros again
// once both are gone.
func TestNetworkAndIgnitionAreIndependent(t *testing.T) {
	for _, name := range networkFixtures {
		t.Run(name, func(t *testing.T) {
			iso := fixtures.File(t, name)
			pristine := fileSHA(t, iso)
			src := keyfileDir(t)
			key := filepath.Join(src, "a.nmconnection")

			mustSno(t, []byte(smallConfig), "ignition", "embed", iso)
			wantFailure(t, sno(t, nil, "network", "extract", iso), "no embedded network settings")
			mustSno(t, nil, "network", "embed", "-k", key, iso)
			if got := mustSno(t, nil, "ignition", "show", iso); string(got) != smallConfig {
				t.Fatalf("network embed lost the Ignition config: %q", got)
			}
			mustSno(t, nil, "network", "embed", "-f", "-k", key, iso)
			mustSno(t, nil, "network", "remove", iso)
			if got := mustSno(t, nil, "ignition", "show", iso); string(got) != smallConfig {
				t.Fatalf("network remove lost the Ignition config: %q", got)
			}
			mustSno(t, nil, "network", "embed", "-k", key, iso)
			mustSno(t, nil, "ignition", "remove", iso)
			if got := string(mustSno(t, nil, "network", "extract", iso)); !strings.Contains(got, "id=a") {
				t.Fatalf("ignition remove lost the keyfile: %q", got)
			}
			mustSno(t, nil, "network", "remove", iso)
			if fileSHA(t, iso) != pristine {
				t.Fatal("with both removed the area is not back to zeros")
			}
		})
	}
}

// TestNetworkWithoutHeaderMagic: the coreKarg header plays no part in network edits.
func TestNetworkWithoutHeaderMagic(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2021-12.iso")
	b, _ := os.ReadFile(iso)
	copy(b[32672:32680], make([]byte, 8))
	os.WriteFile(iso, b, 0o644)
	pristine := fileSHA(t, iso)
	mustSno(t, nil, "network", "embed", "-k", filepath.Join(keyfileDir(t), "a.nmconnection"), iso)
	if got := string(mustSno(t, nil, "network", "extract", iso)); !strings.Contains(got, "id=a") {
		t.Fatalf("extract printed %q", got)
	}
	mustSno(t, nil, "network", "remove", iso)
	if fileSHA(t, iso) != pristine {
		t.Fatal("remove did not restore the bytes")
	}
}

// TestNetworkUnsupported is unsupported.sh: ISOs without live-initrd-network refuse keyfiles
// the live system would ignore, saying why: these have no coreos/features.json at all.
func TestNetworkUnsupported(t *testing.T) {
	key := filepath.Join(keyfileDir(t), "a.nmconnection")
	for _, name := range []string{"embed-areas-2020-09.iso", "embed-areas-2021-01.iso"} {
		iso := fixtures.File(t, name)
		pristine := fileSHA(t, iso)
		out := filepath.Join(t.TempDir(), "out.iso")
		for _, args := range [][]string{{}, {"-o", "-"}, {"-o", out}} {
			r := sno(t, nil, append(append([]string{"network", "embed", "-k", key}, args...), iso)...)
			wantFailure(t, r, "does not support customizing network settings", "the ISO has no coreos/features.json: it predates network support")
			if strings.Contains(string(r.stderr), "lacks live-initrd-network") {
				t.Errorf("%s %v: %q blames a features.json the ISO does not have", name, args, r.stderr)
			}
			if len(r.stdout) != 0 {
				t.Errorf("%s %v: wrote to stdout", name, args)
			}
		}
		if fileSHA(t, iso) != pristine {
			t.Fatalf("%s changed", name)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s: an output was written", name)
		}
	}
}

// TestNetworkEmbedBadKeyfiles: every keyfile is checked before anything is written.
func TestNetworkEmbedBadKeyfiles(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine := fileSHA(t, iso)
	src := keyfileDir(t)
	other := t.TempDir()
	dup := writeFile(t, filepath.Join(other, "a.nmconnection"), "[connection]\nid=other\n")
	notKeyfile := writeFile(t, filepath.Join(other, "eth0.yaml"), "interfaces:\n- name: eth0\n")
	commented := writeFile(t, filepath.Join(other, "commented"), "# [connection]\n[ipv4]\n")
	binary := writeFile(t, filepath.Join(other, "binary"), "[connection]\n\xff\xfe")
	cases := []struct {
		name string
		keys []string
		want []string
	}{
		{"duplicate names", []string{filepath.Join(src, "a.nmconnection"), dup}, []string{`multiple input keyfiles named "a.nmconnection"`}},
		{"not a keyfile", []string{notKeyfile}, []string{"eth0.yaml", "no [connection] section"}},
		{"commented-out section", []string{commented}, []string{"no [connection] section"}},
		{"not UTF-8", []string{binary}, []string{"not UTF-8"}},
		{"missing file", []string{filepath.Join(other, "missing")}, []string{"missing", "no such file"}},
		{"a directory", []string{other}, []string{"not a regular file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"network", "embed"}
			for _, k := range c.keys {
				args = append(args, "-k", k)
			}
			wantFailure(t, sno(t, nil, append(args, iso)...), c.want...)
		})
	}
	wantFailure(t, sno(t, nil, "network", "embed", iso), "keyfile")
	if fileSHA(t, iso) != pristine {
		t.Fatal("the ISO changed")
	}
}

// TestBuildStaticNetwork: build puts live kargs into every karg area and keyfiles into the
// payload, and passes --copy-network so the installed node keeps them, unless told not to.
func TestBuildStaticNetwork(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	defaults := showKargs(t, iso, "-d")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 0)
	keyfile := "[connection]\nid=eno1\ntype=ethernet\ninterface-name=eno1\n[ipv4]\nmethod=manual\naddress1=192.0.2.10/24,192.0.2.1\n"
	writeFile(t, filepath.Join(dir, "eno1.nmconnection"), keyfile)
	const ip = "ip=192.0.2.10::192.0.2.1:255.255.255.0:sno:eno1:none"
	// sno.yaml names its keyfile relative to itself; build runs elsewhere.
	snoYAML := func(extra string) string {
		site := t.TempDir()
		os.Mkdir(filepath.Join(site, "keys"), 0o755)
		writeFile(t, filepath.Join(site, "keys", "eno1.nmconnection"), keyfile)
		return writeFile(t, filepath.Join(site, "sno.yaml"), `coreOSInstallation:
  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3
`+extra+`liveKargs:
  append: [`+ip+`]
  delete:
    - mitigations=auto,nosmt
  replace: [ignition.platform.id=metal=openstack]
network:
  keyfiles: [keys/eno1.nmconnection]
`)
	}
	const liveiso = "coreos.liveiso=fedora-coreos-38.20230718.dev.0"
	if defaults != "mitigations=auto,nosmt "+liveiso+" ignition.firstboot ignition.platform.id=metal" {
		t.Fatalf("unexpected fixture defaults %q", defaults)
	}
	fileKargs := liveiso + " ignition.firstboot ignition.platform.id=openstack " + ip
	cases := []struct {
		name        string
		args        []string
		kargs       string
		keyfile     bool
		copyNetwork bool
		warning     string
	}{
		{"sno.yaml", []string{"--config", snoYAML("")}, fileKargs, true, true, ""},
		{"sno.yaml with copyNetwork false", []string{"--config", snoYAML("  copyNetwork: false\n")}, fileKargs, true, false, "copyNetwork is false"},
		{"flags", []string{"--installation-disk", "/dev/vda", "--network-keyfile", filepath.Join(dir, "eno1.nmconnection"), "--live-karg-append", "rd.neednet=1"},
			defaults + " rd.neednet=1", true, true, ""},
		{"flags with --copy-network=false", []string{"--installation-disk", "/dev/vda", "--network-keyfile", filepath.Join(dir, "eno1.nmconnection"), "--copy-network=false"},
			defaults, true, false, "copyNetwork is false"},
		{"flag replaces the file's list", []string{"--config", snoYAML(""), "--live-karg-append", "rd.neednet=1", "--live-karg-delete", "ignition.firstboot"},
			"mitigations=auto,nosmt " + liveiso + " ignition.platform.id=openstack rd.neednet=1",
			true, true, ""},
		{"live ip= only", []string{"--installation-disk", "/dev/vda", "--live-karg-append", ip}, defaults + " " + ip, false, false, "keeps it after the reboot"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sno.iso")
			r := snoIn(t, t.TempDir(), nil, append([]string{"build", "--iso", iso, "--ignition", ign, "-o", out}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("build failed: %s", r.stderr)
			}
			if got := showKargs(t, out); got != c.kargs {
				t.Errorf("live kargs\n got %q\nwant %q", got, c.kargs)
			}
			info := inspectJSON(t, out)
			var members []string
			for _, m := range info.Ignition.Members {
				members = append(members, m.Path)
			}
			wantMembers := []string{"config.ign"}
			if c.keyfile {
				wantMembers = append(wantMembers, "etc/coreos-firstboot-network/eno1.nmconnection")
				if got := string(mustSno(t, nil, "network", "extract", out)); got != "########## eno1.nmconnection ##########\n"+keyfile {
					t.Errorf("embedded keyfile: %q", got)
				}
			}
			if !slices.Equal(members, wantMembers) {
				t.Errorf("payload %q, want %q", members, wantMembers)
			}
			if info.Installation == nil {
				t.Fatal("no installation in the built ISO")
			}
			if got := slices.Contains(info.Installation.InstallerArgs, "--copy-network"); got != c.copyNetwork {
				t.Errorf("--copy-network in %q: %t, want %t", info.Installation.InstallerArgs, got, c.copyNetwork)
			}
			stderr := string(r.stderr)
			if c.warning != "" && !strings.Contains(stderr, c.warning) {
				t.Errorf("stderr %q lacks the warning %q", stderr, c.warning)
			}
			if c.warning == "" && strings.Contains(stderr, "after the reboot") {
				t.Errorf("unexpected network warning: %q", stderr)
			}
		})
	}
}

// TestBuildStaticNetworkErrors: live settings the ISO cannot carry are refused before
// anything is written.
func TestBuildStaticNetworkErrors(t *testing.T) {
	x86 := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 0)
	key := filepath.Join(keyfileDir(t), "a.nmconnection")
	notKeyfile := writeFile(t, filepath.Join(dir, "eth0.nmconnection"), "[ipv4]\nmethod=auto\n")
	dup := writeFile(t, filepath.Join(t.TempDir(), "a.nmconnection"), "[connection]\nid=dup\n")
	cases := []struct {
		name string
		iso  string
		args []string
		want []string
	}{
		{"keyfile on 2021-01", fixtures.File(t, "embed-areas-2021-01.iso"), []string{"--network-keyfile", key}, []string{"does not support customizing network settings"}},
		{"live karg on 2020-09", fixtures.File(t, "embed-areas-2020-09.iso"), []string{"--live-karg-append", "ip=dhcp"}, []string{"does not support customizing live kernel arguments", "no karg embed areas"}},
		{"live kargs too long", x86, []string{"--live-karg-append", strings.Repeat("x", 1200)}, []string{"kargs too large for area", "1139"}},
		{"bad replace", x86, []string{"--live-karg-replace", "ip=dhcp"}, []string{"format should be: KEY=OLD=NEW"}},
		{"not a keyfile", x86, []string{"--network-keyfile", notKeyfile}, []string{"eth0.nmconnection", "[connection]"}},
		{"duplicate keyfile names", x86, []string{"--network-keyfile", key, "--network-keyfile", dup}, []string{"multiple input keyfiles"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pristine := fileSHA(t, c.iso)
			outDir := t.TempDir()
			args := append([]string{"build", "--iso", c.iso, "--ignition", ign, "--installation-disk", "/dev/vda", "-o", filepath.Join(outDir, "out.iso")}, c.args...)
			wantFailure(t, sno(t, nil, args...), c.want...)
			if ents := dirEntries(t, outDir); len(ents) != 0 {
				t.Fatalf("left behind %v", ents)
			}
			if fileSHA(t, c.iso) != pristine {
				t.Fatal("the input changed")
			}
		})
	}
}
