package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

const testVersion = "v0.0.0-image-test"

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// staticBinary builds sno-iso for linux/GOARCH as make release does, stamped testVersion,
// once per test run.
func staticBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("runs the image's Linux binary")
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "mkimage-test-"); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "sno-iso")
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
			"-ldflags", "-s -w -buildid= -X main.buildVersion="+testVersion+" -X main.buildCommit=feedface",
			"-o", builtBin, "./cmd/sno-iso")
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// writeTestImage writes the image of bin for this machine's platform and returns its path.
func writeTestImage(t *testing.T, bin string) string {
	t.Helper()
	idx, err := index([]string{"linux/" + runtime.GOARCH + "=" + bin}, metadata{version: testVersion, revision: "feedface"})
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "sno-iso.oci.tar")
	if err := writeArchive(archive, imageName(testVersion), idx); err != nil {
		t.Fatal(err)
	}
	return archive
}

// TestImageConfig reads the archive with skopeo, as podman would: the platform, the
// entrypoint, the non-root user, the working directory and the labels.
func TestImageConfig(t *testing.T) {
	testenv.Tool(t, "skopeo", "skopeo")
	archive := writeTestImage(t, staticBinary(t))
	out, err := exec.Command("skopeo", "inspect", "--config", "oci-archive:"+archive).Output()
	if err != nil {
		t.Fatalf("skopeo inspect --config: %v", err)
	}
	var cfg struct {
		OS, Architecture string
		Config           struct {
			Entrypoint []string
			User       string
			WorkingDir string
			Labels     map[string]string
		}
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"sno-iso"}) {
		t.Errorf("entrypoint %q, want [sno-iso]", cfg.Config.Entrypoint)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cfg.Config.User)
	}
	if cfg.Config.WorkingDir != "/work" {
		t.Errorf("working directory %q, want /work", cfg.Config.WorkingDir)
	}
	for label, want := range map[string]string{
		"org.opencontainers.image.title":    "sno-iso",
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.revision": "feedface",
		"org.opencontainers.image.licenses": "Apache-2.0",
	} {
		if got := cfg.Config.Labels[label]; got != want {
			t.Errorf("label %s = %q, want %q", label, got, want)
		}
	}
}

// unpackImage unpacks the image of bin with umoci into a runtime bundle, as a container
// runtime would see it, and returns the bundle's directory.
func unpackImage(t *testing.T, bin string) string {
	t.Helper()
	testenv.Tool(t, "umoci", "umoci")
	archive := writeTestImage(t, bin)
	layoutDir := filepath.Join(t.TempDir(), "layout")
	if err := os.Mkdir(layoutDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xf", archive, "-C", layoutDir).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf: %v\n%s", err, out)
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	args := []string{"unpack", "--image", layoutDir + ":" + imageName(testVersion), bundle}
	if os.Geteuid() != 0 {
		args = append([]string{"unpack", "--rootless"}, args[1:]...)
	}
	if out, err := exec.Command("umoci", args...).CombinedOutput(); err != nil {
		t.Fatalf("umoci %v: %v\n%s", args, err, out)
	}
	return bundle
}

// runtimeProcess is the process a runtime would start from the bundle's config.json.
type runtimeProcess struct {
	Args []string
	Env  []string
	Cwd  string
	User struct{ UID, GID uint32 }
}

func readRuntimeProcess(t *testing.T, bundle string) runtimeProcess {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct{ Process runtimeProcess }
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	return spec.Process
}

// TestImageUnpacks: the layer holds the very binary, which runs and names its version, and
// the process is sno-iso as user 65532 in /work.
func TestImageUnpacks(t *testing.T) {
	bin := staticBinary(t)
	bundle := unpackImage(t, bin)

	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	unpacked := filepath.Join(bundle, "rootfs", "usr", "bin", "sno-iso")
	got, err := os.ReadFile(unpacked)
	if err != nil {
		t.Fatalf("the layer has no /usr/bin/sno-iso: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("/usr/bin/sno-iso in the layer is not the binary given")
	}
	out, err := exec.Command(unpacked, "--version").Output()
	if err != nil || !bytes.HasPrefix(out, []byte("sno-iso version "+testVersion+" ")) {
		t.Fatalf("/usr/bin/sno-iso --version: %q, %v", out, err)
	}

	p := readRuntimeProcess(t, bundle)
	if !slices.Equal(p.Args, []string{"sno-iso"}) || p.Cwd != "/work" || p.User.UID != 65532 || p.User.GID != 65532 {
		t.Errorf("the runtime would run %q in %s as %d:%d, want [sno-iso] in /work as 65532:65532", p.Args, p.Cwd, p.User.UID, p.User.GID)
	}
}

// TestImageIsReproducible: the same binary gives the same archive, byte for byte.
func TestImageIsReproducible(t *testing.T) {
	bin := staticBinary(t)
	first, err := os.ReadFile(writeTestImage(t, bin))
	if err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(writeTestImage(t, bin))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatal("two archives of the same binary differ")
	}
}

// TestImageRefusesWrongBinaries: a binary of another architecture, or one that needs a
// dynamic loader, would not run from the image; mkimage says so instead of writing it.
func TestImageRefusesWrongBinaries(t *testing.T) {
	bin := staticBinary(t)
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	if other == "" {
		t.Skipf("no image architecture other than %s to try", runtime.GOARCH)
	}
	_, err := index([]string{"linux/" + other + "=" + bin}, metadata{version: testVersion})
	if err == nil || !strings.Contains(err.Error(), "not "+other) {
		t.Errorf("the %s binary as linux/%s: %v", runtime.GOARCH, other, err)
	}

	// The system's ls is a dynamically linked program of this architecture.
	dynamic := testenv.Tool(t, "ls", "coreutils")
	_, err = index([]string{"linux/" + runtime.GOARCH + "=" + dynamic}, metadata{version: testVersion})
	if err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("a dynamically linked binary: %v", err)
	}
}
