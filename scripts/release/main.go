// Command release builds the sno-iso release into a directory: a static binary for every
// supported platform, the man page and the shell completions, and SHA256SUMS over them all.
// The same commit built by the same Go release gives the same bytes, wherever it is checked
// out: paths are trimmed, the build id is empty and no VCS state or timestamp is recorded.
//
//	go run ./scripts/release -targets linux/amd64,darwin/arm64,... [-o dist] [-version V] [-commit C]
//
// make release runs it for the Makefile's PLATFORMS, with the version and commit that make
// build stamps.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// build describes one release build of the module checked out in moduleDir.
type build struct {
	moduleDir       string
	version, commit string
}

// binaryName is the file name of the binary for target, which names version and platform.
func (b build) binaryName(target string) string {
	goos, goarch, _ := strings.Cut(target, "/")
	name := fmt.Sprintf("sno-iso-%s-%s-%s", b.version, goos, goarch)
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

// binary builds the static sno-iso binary for target into dir and returns its file name.
func (b build) binary(ctx context.Context, target, dir string) (string, error) {
	goos, goarch, ok := strings.Cut(target, "/")
	if !ok {
		return "", fmt.Errorf("target %q is not GOOS/GOARCH", target)
	}
	name := b.binaryName(target)
	ldflags := fmt.Sprintf("-s -w -buildid= -X main.buildVersion=%s -X main.buildCommit=%s", b.version, b.commit)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags,
		"-o", filepath.Join(dir, name), "./cmd/sno-iso")
	cmd.Dir = b.moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", target, err, out)
	}
	return name, nil
}

// docs writes the man pages and the completions into dir and returns their file names.
func (b build) docs(ctx context.Context, dir string) ([]string, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "go", "run", "-trimpath", "./cmd/sno-iso", "dev", "docs", absDir)
	cmd.Dir = b.moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("generating the man page and completions: %v\n%s", err, out)
	}
	return []string{"sno-iso.1", "sno.yaml.5", "sno-iso.bash", "_sno-iso", "sno-iso.fish",
		"coreos-installer.bash", "_coreos-installer", "coreos-installer.fish"}, nil
}

// writeChecksums writes SHA256SUMS in dir for names, in the format sha256sum -c reads.
func writeChecksums(dir string, names []string) error {
	names = slices.Sorted(slices.Values(names))
	var sums strings.Builder
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(sums.String()), 0o644)
}

// release writes every target's binary, the docs and SHA256SUMS into dir.
func (b build) release(ctx context.Context, targets []string, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var names []string
	for _, target := range targets {
		name, err := b.binary(ctx, target, dir)
		if err != nil {
			return err
		}
		names = append(names, name)
	}
	docs, err := b.docs(ctx, dir)
	if err != nil {
		return err
	}
	return writeChecksums(dir, append(names, docs...))
}

// gitOutput runs git in dir and returns its trimmed output.
func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v (pass -version and -commit outside a git checkout)", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

func main() {
	out := flag.String("o", "dist", "write the release into `DIR`")
	version := flag.String("version", "", "the `VERSION` to stamp and name files with (default: git describe --tags --always --dirty)")
	commit := flag.String("commit", "", "the `COMMIT` to stamp (default: git rev-parse HEAD)")
	targets := flag.String("targets", "", "comma-separated GOOS/GOARCH `TARGETS` (required)")
	flag.Parse()
	log.SetFlags(0)
	if *targets == "" {
		flag.Usage()
		os.Exit(2)
	}
	var err error
	if *version == "" {
		if *version, err = gitOutput(".", "describe", "--tags", "--always", "--dirty"); err != nil {
			log.Fatal(err)
		}
	}
	if *commit == "" {
		if *commit, err = gitOutput(".", "rev-parse", "HEAD"); err != nil {
			log.Fatal(err)
		}
	}
	b := build{moduleDir: ".", version: *version, commit: *commit}
	if err := b.release(context.Background(), strings.Split(*targets, ","), *out); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Wrote sno-iso %s for %s into %s with SHA256SUMS\n", *version, *targets, *out)
}
