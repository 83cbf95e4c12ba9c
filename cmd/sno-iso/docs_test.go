package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// writeDocsFor runs `sno-iso dev docs` into a new directory and returns it.
func writeDocsFor(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "docs")
	var stderr bytes.Buffer
	if code := run([]string{"sno-iso", "dev", "docs", dir}, nil, io.Discard, &stderr); code != 0 {
		t.Fatalf("dev docs: exit %d: %s", code, stderr.Bytes())
	}
	return dir
}

// visibleCommands lists the commands a user sees in --help, as paths ("pxe ignition wrap"),
// with the long names of their options.
func visibleCommands(parent string, commands []*cli.Command) map[string][]string {
	found := map[string][]string{}
	for _, cmd := range commands {
		if cmd.Hidden {
			continue
		}
		path := strings.TrimSpace(parent + " " + cmd.Name)
		for _, f := range cmd.Flags {
			if len(f.Names()[0]) > 1 {
				found[path] = append(found[path], f.Names()[0])
			}
		}
		if _, ok := found[path]; !ok {
			found[path] = nil
		}
		for sub, flags := range visibleCommands(path, cmd.Subcommands) {
			found[sub] = flags
		}
	}
	return found
}

// TestDocsMentionEveryCommand: the man page and each completion name every visible command
// and every option, each in its own spelling, and none names the hidden dev commands.
func TestDocsMentionEveryCommand(t *testing.T) {
	dir := writeDocsFor(t)
	commands := visibleCommands("", newApp(nil, io.Discard, io.Discard).Commands)
	if len(commands) < 20 {
		t.Fatalf("found only %d commands in the app: %v", len(commands), commands)
	}
	spell := map[string]func(option string) string{
		manPageFile:        func(o string) string { return "--" + o },
		bashCompletionFile: func(o string) string { return "--" + o },
		zshCompletionFile:  func(o string) string { return "--" + o },
		fishCompletionFile: func(o string) string { return "-l " + o },
	}
	for file, option := range spell {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for path, options := range commands {
			name := path[strings.LastIndex(path, " ")+1:]
			if !strings.Contains(text, name) {
				t.Errorf("%s does not mention the command %q", file, path)
			}
			for _, o := range options {
				if !strings.Contains(text, option(o)) {
					t.Errorf("%s does not mention %s of %q", file, option(o), path)
				}
			}
		}
		if strings.Contains(text, "pack-minimal-iso") {
			t.Errorf("%s names the hidden dev commands", file)
		}
	}
}

// completionCases are command lines up to the cursor and what completing them must offer;
// nil means file names, as in an ISO argument, and an empty list nothing (a URL, a duration).
var completionCases = []struct {
	line string
	want []string
}{
	{"sno-iso ", []string{"bmc", "build", "download", "ignition", "inspect", "kargs", "machineconfig", "minimal", "network", "pxe",
		"reset", "serve", "version", "wait"}},
	{"sno-iso ignition ", []string{"embed", "remove", "show"}},
	{"sno-iso pxe ignition ", []string{"unwrap", "wrap"}},
	{"sno-iso pxe ", []string{"build", "extract", "ignition"}},
	{"sno-iso build --ig", []string{"--ignition", "--ignition-ca"}},
	{"sno-iso ignition embed -i config.ign --f", []string{"--force"}},
	{"sno-iso kargs modify --ap", []string{"--append"}},
	{"sno-iso --v", []string{"--version"}},
	{"sno-iso inspect ", nil},
	{"sno-iso ignition show ", nil},
	// Values: the sets the code accepts, directories, and the nodes of --nodes.
	{"sno-iso download --arch ", []string{"aarch64", "ppc64le", "s390x", "x86_64"}},
	{"sno-iso build --iso rhcos-live.iso --arch a", []string{"aarch64"}},
	{"sno-iso download --format ", []string{"iso", "pxe"}},
	{"sno-iso bmc boot --node nodes/sno1 --boot-mode ", []string{"legacy", "uefi"}},
	{"sno-iso serve --log-format ", []string{"json", "text"}},
	{"sno-iso wait --for ", []string{"bootkube-done", "install-done", "installed-booted", "live-booted"}},
	{"sno-iso machineconfig --role ", []string{"master", "worker"}},
	{"sno-iso bmc status --node ", []string{"nodes"}},
	{"sno-iso serve --nodes ", []string{"nodes"}},
	{"sno-iso serve urls --nodes nodes --node ", []string{"sno1", "sno2"}},
	{"sno-iso build --ignition ", nil},
	{"sno-iso build --installation-disk ", nil},
	{"sno-iso bmc boot --timeout ", []string{}},
	{"sno-iso serve --base-url ", []string{}},
}

// dropInCompletionCases are the same for the coreos-installer link's own completion.
var dropInCompletionCases = []struct {
	line string
	want []string
}{
	{"coreos-installer ", []string{"dev", "download", "iso", "pxe"}},
	{"coreos-installer iso ", []string{"customize", "extract", "ignition", "kargs", "network", "reset"}},
	{"coreos-installer iso kargs modify --ap", []string{"--append"}},
	{"coreos-installer download -a ", []string{"aarch64", "ppc64le", "s390x", "x86_64"}},
	{"coreos-installer download --format ", []string{"4k.raw.xz", "iso", "pxe", "raw.xz"}},
	{"coreos-installer download -s ", []string{"next", "stable", "testing"}},
	{"coreos-installer iso extract pxe -o ", []string{"nodes"}},
	{"coreos-installer iso ignition show ", nil},
	{"coreos-installer iso kargs modify -a ", []string{}},
}

// completionDir is a working directory holding one file and a nodes directory with two
// nodes: file completion must offer both names, directory completion only nodes.
func completionDir(t *testing.T) (dir string, files []string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rhcos-live.iso"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"sno1", "sno2"} {
		if err := os.MkdirAll(filepath.Join(dir, "nodes", node), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, []string{"nodes", "rhcos-live.iso"}
}

// checkCompletions runs a shell on each case and compares the sorted lines it prints.
func checkCompletions(t *testing.T, shell string, script func(line string) string) {
	t.Helper()
	checkCompletionCases(t, shell, completionCases, script)
}

func checkCompletionCases(t *testing.T, shell string, cases []struct {
	line string
	want []string
}, script func(line string) string) {
	t.Helper()
	testenv.Tool(t, shell, shell)
	dir, files := completionDir(t)
	for _, c := range cases {
		cmd := exec.Command(shell, "-c", script(c.line))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s completing %q: %v\n%s", shell, c.line, err, out)
			continue
		}
		got := strings.Fields(string(out))
		for i, w := range got {
			got[i] = strings.TrimSuffix(w, "/") // fish marks directories
		}
		slices.Sort(got)
		want := c.want
		if want == nil {
			want = files
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s completes %q as %q, want %q", shell, c.line, got, want)
		}
	}
}

// shellWords quotes the words of line for bash and zsh, with an empty last word when the
// line ends in a space (the cursor is on a new word).
func shellWords(line string) (quoted string, count int) {
	words := strings.Fields(line)
	if strings.HasSuffix(line, " ") {
		words = append(words, "")
	}
	for i, w := range words {
		words[i] = "'" + w + "'"
	}
	return strings.Join(words, " "), len(words)
}

// bashScript completes line with the bash completion script for prog.
func bashScript(script, prog string) func(line string) string {
	return func(line string) string {
		words, n := shellWords(line)
		// Bash itself falls back to file names (complete -o default) when the function
		// offers nothing; the harness does the same after checking that it was asked to.
		// compopt works only inside completion: the stand-in notes that the function
		// turned the fallback off.
		return fmt.Sprintf(`source %q
complete -p %s | grep -q -- '-o default' || { echo "not registered with -o default"; exit 1; }
compopt() { [[ "$*" == "+o default" ]] && nodefault=1; }
COMP_WORDS=(%s); COMP_CWORD=%d
_%s
[ ${#COMPREPLY[@]} -gt 0 ] || [ -n "$nodefault" ] || COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
printf '%%s\n' "${COMPREPLY[@]}"`, script, prog, words, n-1, strings.ReplaceAll(prog, "-", "_"))
	}
}

func TestBashCompletion(t *testing.T) {
	dir := writeDocsFor(t)
	checkCompletions(t, "bash", bashScript(filepath.Join(dir, bashCompletionFile), "sno-iso"))
	checkCompletionCases(t, "bash", dropInCompletionCases, bashScript(filepath.Join(dir, dropInBashCompletionFile), dropInName))
}

// zshScript completes line with the zsh completion script.
func zshScript(script string) func(line string) string {
	return func(line string) string {
		words, n := shellWords(line)
		// compadd and _files exist only inside a completion widget: these stand-ins print
		// the candidates that match the word under the cursor, as zsh would offer them
		// (_files -/ directories only).
		return fmt.Sprintf(`compadd() {
	[[ $1 == -- ]] && shift; local w; for w in "$@"; do [[ $w == ${words[CURRENT]}* ]] && print -- $w; done; true
}
_files() { if [[ $1 == -/ ]]; then print -l -- *(N/); else print -l -- *(N); fi; }
words=(%s); CURRENT=%d
source %q`, words, n, script)
	}
}

func TestZshCompletion(t *testing.T) {
	dir := writeDocsFor(t)
	checkCompletions(t, "zsh", zshScript(filepath.Join(dir, zshCompletionFile)))
	checkCompletionCases(t, "zsh", dropInCompletionCases, zshScript(filepath.Join(dir, dropInZshCompletionFile)))
}

// fishScript completes line with the fish completion script.
func fishScript(script string) func(line string) string {
	return func(line string) string {
		// complete -C prints "candidate<TAB>description" lines; keep the candidates.
		return fmt.Sprintf(`source %s; complete -C %s | cut -f1`, fishQuote(script), fishQuote(line))
	}
}

func TestFishCompletion(t *testing.T) {
	dir := writeDocsFor(t)
	checkCompletions(t, "fish", fishScript(filepath.Join(dir, fishCompletionFile)))
	checkCompletionCases(t, "fish", dropInCompletionCases, fishScript(filepath.Join(dir, dropInFishCompletionFile)))
}

// TestDocsIndependentOfBuilder: the release's man page and completions are the same bytes
// whatever the builder's home and cache directory, and show neither.
func TestDocsIndependentOfBuilder(t *testing.T) {
	var written []map[string][]byte
	homes := []string{"/home/builder-one", "/srv/builder-two"}
	for _, home := range homes {
		t.Setenv("HOME", home)
		t.Setenv("XDG_CACHE_HOME", home+"/cache")
		dir := writeDocsFor(t)
		files := map[string][]byte{}
		for _, name := range []string{manPageFile, configManPageFile, bashCompletionFile, zshCompletionFile, fishCompletionFile,
			dropInBashCompletionFile, dropInZshCompletionFile, dropInFishCompletionFile} {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte(home)) {
				t.Errorf("%s names the builder's directory %s", name, home)
			}
			files[name] = data
		}
		written = append(written, files)
	}
	for name, data := range written[0] {
		if !bytes.Equal(data, written[1][name]) {
			t.Errorf("%s differs between builders", name)
		}
	}
	man := string(written[0][manPageFile])
	for _, want := range []string{machineDefaults["arch"], "~/Library/Caches on macOS"} {
		if !strings.Contains(man, want) {
			t.Errorf("the man page does not say %q", want)
		}
	}
}

// TestCompletedValuesAreTheAcceptedOnes: where a command refuses a value with the list of the
// ones it takes, completion offers exactly that list.
func TestCompletedValuesAreTheAcceptedOnes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"sno-iso", "download", "--format", "zzz"}, "format"},
		{[]string{"sno-iso", "bmc", "boot", "--bmc", "https://127.0.0.1:1", "--iso-url", "http://127.0.0.1:1/x.iso", "--boot-mode", "zzz"},
			"boot-mode"},
		{[]string{"sno-iso", "serve", "--iso", "x.iso", "--nodes", dir, "--log-format", "zzz"}, "log-format"},
		{[]string{"sno-iso", "wait", "--node", dir, "--for", "zzz"}, "for"},
		{[]string{"sno-iso", "machineconfig", "--role", "zzz", "x.ign"}, "role"},
		{[]string{dropInName, "download", "-s", "zzz"}, "stream"},
	} {
		var stderr bytes.Buffer
		if code := run(c.args, nil, io.Discard, &stderr); code == 0 {
			t.Errorf("%q succeeded", c.args)
			continue
		}
		msg := strings.TrimSpace(stderr.String())
		list := msg
		for _, lead := range []string{"must be ", "one of ", "give ", "stream name ("} {
			if _, after, ok := strings.Cut(msg, lead); ok {
				list = after
			}
		}
		list, _, _ = strings.Cut(list, ", got")
		list, _, _ = strings.Cut(list, ")")
		accepted := strings.FieldsFunc(strings.ReplaceAll(list, " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
		app := newApp(nil, io.Discard, io.Discard)
		if c.args[0] == dropInName {
			app = newDropInApp(nil, io.Discard, io.Discard)
		}
		var path []string
		for _, w := range c.args[1:] {
			if strings.HasPrefix(w, "-") {
				break
			}
			path = append(path, w)
		}
		cmd := commandNamed(app, strings.Join(append([]string{app.Name}, path...), " "))
		i := slices.IndexFunc(cmd.Flags, func(f cli.Flag) bool { return f.Names()[0] == c.flag })
		offered := strings.Fields(valueCompletion(app.Name, strings.Join(path, " "), cmd.Flags[i]))
		slices.Sort(accepted)
		slices.Sort(offered)
		if !slices.Equal(accepted, offered) {
			t.Errorf("%s --%s: completion offers %q, the command takes %q (%s)",
				strings.Join(c.args[:len(path)+1], " "), c.flag, offered, accepted, msg)
		}
	}
}
