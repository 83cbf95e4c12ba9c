package main

import (
	"bytes"
	"flag"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// helpOf runs `NAME... --help` in process and returns what it printed.
func helpOf(t *testing.T, name string) string {
	t.Helper()
	args := strings.Fields(name)
	var stdout, stderr bytes.Buffer
	if code := run(append(args, "--help"), nil, &stdout, &stderr); code != 0 {
		t.Fatalf("%s --help: exit %d: %s", name, code, stderr.Bytes())
	}
	return stdout.String()
}

// impliedEnvironment are the variables that a call of the Go library reads: the cache
// directory, the HTTP client's proxy and certificate lookups, the temporary directory and the
// AWS SDK's configuration.
var impliedEnvironment = []struct {
	call *regexp.Regexp
	vars []string
}{
	{regexp.MustCompile(`os\.UserCacheDir\(`), []string{"XDG_CACHE_HOME", "HOME"}},
	{regexp.MustCompile(`http\.ProxyFromEnvironment|http\.DefaultTransport|&http\.Client\{`),
		[]string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"}},
	{regexp.MustCompile(`os\.TempDir\(\)`), []string{"TMPDIR"}},
	{regexp.MustCompile(`"github.com/aws/aws-sdk-go-v2/config"`), []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_REGION", "AWS_ENDPOINT_URL_S3",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CA_BUNDLE"}},
}

var (
	envRead  = regexp.MustCompile(`os\.(?:Getenv|LookupEnv)\(([^)]+)\)`)
	constDef = regexp.MustCompile(`(?m)^\s*(\w+)\s*(?:string\s*)?=\s*("[A-Z][A-Z0-9_]*")`)
)

// environmentRead greps the module's program code (not tests, test helpers or scripts) for
// the environment variables it reads, directly or through the calls of impliedEnvironment,
// with a file that reads each.
func environmentRead(t *testing.T) map[string]string {
	t.Helper()
	root := repoRoot(t)
	read := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case strings.HasPrefix(d.Name(), "."), rel == "scripts", rel == "testdata", strings.HasSuffix(rel, "test"),
				strings.HasPrefix(rel, "internal/s3test"), rel == "internal/testenv", rel == "internal/fixtures":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range envRead.FindAllSubmatch(src, -1) {
			name, err := strconv.Unquote(string(m[1]))
			if err != nil {
				name = constantValue(t, filepath.Dir(path), string(m[1]))
			}
			read[name] = rel
		}
		for _, implied := range impliedEnvironment {
			if implied.call.Match(src) {
				for _, name := range implied.vars {
					read[name] = rel
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return read
}

// constantValue is the string that the constant ident of the package in dir holds.
func constantValue(t *testing.T, dir, ident string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range constDef.FindAllSubmatch(src, -1) {
			if string(m[1]) == ident {
				v, _ := strconv.Unquote(string(m[2]))
				return v
			}
		}
	}
	t.Fatalf("the environment variable read as %s in %s is not a string constant the test can find", ident, dir)
	return ""
}

// TestEnvironmentDocumented: every environment variable the code reads is in the table that
// --help and the man page show, and the ENVIRONMENT of each command that reads it lists it.
func TestEnvironmentDocumented(t *testing.T) {
	read := environmentRead(t)
	for _, want := range []string{"SNO_ISO_BMC_USERNAME", "XDG_CACHE_HOME", "HTTPS_PROXY", "SSL_CERT_FILE"} {
		if _, ok := read[want]; !ok {
			t.Fatalf("the grep of the source did not find %s: the test no longer finds what the code reads", want)
		}
	}
	apps := []*cli.App{newApp(nil, io.Discard, io.Discard), newDropInApp(nil, io.Discard, io.Discard)}
	for name, file := range read {
		i := slices.IndexFunc(environment, func(v envVar) bool { return v.name == name })
		if i < 0 {
			t.Errorf("%s reads %s, which the environment table (environment.go) does not document", file, name)
			continue
		}
		readers := 0
		for _, app := range apps {
			for _, cmdName := range helpNames(app)[1:] {
				cmd := commandNamed(app, cmdName)
				if !environment[i].readBy(cmd) {
					continue
				}
				readers++
				help := helpOf(t, cmdName)
				_, section, _ := strings.Cut(help, "\nENVIRONMENT:\n")
				if !regexp.MustCompile(`(?m)^   ` + name + ` `).MatchString(section) {
					t.Errorf("%s --help does not list %s under ENVIRONMENT:\n%s", cmdName, name, help)
				}
			}
		}
		if readers == 0 {
			t.Errorf("no command is documented as reading %s (read in %s)", name, file)
		}
	}
}

// TestHelpSnoYAML: `sno-iso help sno.yaml` and the man page sno.yaml.5 give every key of
// sno.yaml with its type, default and example.
func TestHelpSnoYAML(t *testing.T) {
	help := string(mustSno(t, nil, "help", "sno.yaml"))
	page, err := os.ReadFile(filepath.Join(writeDocsFor(t), configManPageFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range coreos.ConfigKeys {
		want := []string{"   " + k.Key + "\n", "type: " + k.Type + "; default: " + k.Default}
		if k.Example != "" {
			want = append(want, "example: "+keyExample(k))
		}
		flat := strings.Join(strings.Fields(help), " ")
		for _, w := range want {
			if !strings.Contains(help, w) && !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
				t.Errorf("help sno.yaml lacks %q", w)
			}
		}
		if !bytes.Contains(page, []byte(`\fB`+k.Key+`\fP`)) || !bytes.Contains(page, []byte("default: "+k.Default)) {
			t.Errorf("%s lacks %s or its default", configManPageFile, k.Key)
		}
	}
	example := "   " + strings.ReplaceAll(strings.TrimSuffix(coreos.ConfigExample, "\n"), "\n", "\n   ") + "\n"
	if !strings.HasSuffix(help, "EXAMPLE:\n"+example) {
		t.Errorf("help sno.yaml does not end with the example file:\n%s", help)
	}
	for i, line := range strings.Split(help, "\n") {
		if len(line) > helpWidth {
			t.Errorf("help sno.yaml line %d has %d columns: %q", i+1, len(line), line)
		}
	}
	if r := sno(t, nil, "help", "sno.yml"); r.code != 2 {
		t.Errorf("help sno.yml: exit %d, want the usage error of an unknown command", r.code)
	}
}

// TestManPageSections: sno-iso.1 has EXIT STATUS with the codes the program uses,
// ENVIRONMENT, FILES with the secret and node files, and every example of every command.
func TestManPageSections(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(writeDocsFor(t), manPageFile))
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	for _, want := range []string{".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES", ".SH EXAMPLES", ".SH SEE ALSO",
		`\fBSNO_ISO_BMC_USERNAME\fP`, "NODES/" + capability.SecretFileName, "NODES/NODE/sno.yaml", "sno.yaml\\fP(5)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the man page lacks %q", want)
		}
	}
	for _, e := range exitCodes {
		if !strings.Contains(text, ".TP\n\\fB"+strconv.Itoa(e.code)+"\\fP\n") {
			t.Errorf("EXIT STATUS lacks %d", e.code)
		}
	}
	for name, list := range examples {
		for _, e := range list {
			if !strings.Contains(text, ".EX\n"+roffCode(e.line)+"\n.EE") {
				t.Errorf("EXAMPLES lacks %s's %q", name, e.line)
			}
		}
	}
	// The codes are the ones the program exits with.
	if r := sno(t, nil, "bulid"); r.code != exitUsage {
		t.Errorf("an unknown command exits %d, want %d", r.code, exitUsage)
	}
	if r := sno(t, nil, "inspect", filepath.Join(t.TempDir(), "missing.iso")); r.code != exitFailed {
		t.Errorf("a missing ISO exits %d, want %d", r.code, exitFailed)
	}
}

var updateDocs = flag.Bool("update-docs", false, "write the generated pages of docs/")

// TestGeneratedDocs: docs/examples.md and docs/sno-yaml.md are what the examples table and
// coreos.ConfigKeys give (-update-docs writes them).
func TestGeneratedDocs(t *testing.T) {
	for name, text := range map[string]string{
		examplesPage: examplesMarkdown(newApp(nil, io.Discard, io.Discard), newDropInApp(nil, io.Discard, io.Discard)),
		configPage:   configMarkdown(),
	} {
		path := filepath.Join(repoRoot(t), "docs", name)
		if *updateDocs {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(path)
		if err != nil || string(have) != text {
			t.Errorf("docs/%s is not what the tables give (%v): run go test ./cmd/sno-iso -run TestGeneratedDocs -update-docs", name, err)
		}
	}
}

// TestManPagesRender: groff formats both man pages without a warning, each example comes out
// as a line a user can copy (plain ASCII dashes), and sno.yaml(5) names every key.
func TestManPagesRender(t *testing.T) {
	groff := testenv.Tool(t, "groff", "groff-base")
	dir := writeDocsFor(t)
	render := func(name string) string {
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", filepath.Join(dir, name))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("groff %s: %v\n%s", name, err, stderr.Bytes())
		}
		// Strip the overstrikes of bold and underlined text.
		return regexp.MustCompile(`.\x08`).ReplaceAllString(string(out), "")
	}
	page := render(manPageFile)
	for name, list := range examples {
		for _, e := range list {
			if !strings.Contains(page, " "+e.line+"\n") {
				t.Errorf("man sno-iso does not show %s's example as typed: %s", name, e.line)
			}
		}
	}
	config := render(configManPageFile)
	for _, k := range coreos.ConfigKeys {
		// A tag shorter than the indent shares its line with the text, as man lays out .TP.
		if !regexp.MustCompile(`(?m)^ +` + regexp.QuoteMeta(k.Key) + `( |$)`).MatchString(config) {
			t.Errorf("man sno.yaml does not show %s", k.Key)
		}
	}
}
