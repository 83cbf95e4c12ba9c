package progress

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	testKey  = []byte("0123456789abcdef0123456789abcdef")
	otherKey = []byte("fedcba9876543210fedcba9876543210")
)

func testServer(t *testing.T, store Store) (*httptest.Server, *[]string) {
	t.Helper()
	var recorded []string
	h := &Handler{
		Keys:     func() [][]byte { return [][]byte{testKey} },
		Known:    func(node string) bool { return node == "sno" || node == "other" },
		Store:    store,
		Recorded: func(node string, rec Record) { recorded = append(recorded, node+" "+string(rec.Phase)) },
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, &recorded
}

func post(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestPhaseCount(t *testing.T) {
	if phaseCount != len(Phases) {
		t.Fatalf("phaseCount is %d, there are %d phases: MaxFileSize is wrong", phaseCount, len(Phases))
	}
}

// A report token is the node's own, under the server's key and the report label: not the
// media capability (another label), not another node's, not another key's.
func TestTokenIsTheNodesOwn(t *testing.T) {
	tok := Token(testKey, "sno")
	if len(tok) != 22 {
		t.Fatalf("token %q: want 22 base64url characters", tok)
	}
	for _, c := range []struct {
		name        string
		keys        [][]byte
		node, token string
		want        bool
	}{
		{"own", [][]byte{testKey}, "sno", tok, true},
		{"previous key still listed", [][]byte{otherKey, testKey}, "sno", tok, true},
		{"another node's", [][]byte{testKey}, "other", tok, false},
		{"another key", [][]byte{otherKey}, "sno", tok, false},
		{"truncated", [][]byte{testKey}, "sno", tok[:21], false},
		{"empty", [][]byte{testKey}, "sno", "", false},
		{"no key", nil, "sno", tok, false},
	} {
		if got := Accepts(c.keys, c.node, c.token); got != c.want {
			t.Errorf("%s: Accepts = %v, want %v", c.name, got, c.want)
		}
	}
	if URL("https://h:8080/", testKey, "sno") != "https://h:8080/"+tok+"/sno/report" {
		t.Errorf("URL = %s", URL("https://h:8080/", testKey, "sno"))
	}
}

// Forged tokens, another node's token, unknown nodes and wrong shapes all get the same 404
// and record nothing.
func TestHandlerRefusesOthers(t *testing.T) {
	store := &MemoryStore{}
	srv, recorded := testServer(t, store)
	body := `{"phase":"live-booted"}`
	for name, path := range map[string]string{
		"forged":             "/AAAAAAAAAAAAAAAAAAAAAA/sno/report",
		"other node's token": "/" + Token(testKey, "other") + "/sno/report",
		"other key":          "/" + Token(otherKey, "sno") + "/sno/report",
		"media label":        "/" + mediaLikeToken("sno") + "/sno/report",
		"unknown node":       "/" + Token(testKey, "ghost") + "/ghost/report",
		"no token":           "/sno/report",
		"nested":             "/" + Token(testKey, "sno") + "/sno/x/report",
	} {
		if code := post(t, srv.URL+path, body); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", name, code)
		}
	}
	if len(*recorded) != 0 {
		t.Errorf("recorded %v", *recorded)
	}
	if code := post(t, URL(srv.URL, testKey, "sno"), body); code != http.StatusNoContent {
		t.Fatalf("own token: %d, want 204", code)
	}
	if recs, _ := store.Records("other"); len(recs) != 0 {
		t.Errorf("node other got %v", recs)
	}
}

// mediaLikeToken is a token made like the download capability (another label): it must
// not open the reports.
func mediaLikeToken(node string) string {
	return Token(testKey, "node "+node)[:22]
}

func TestHandlerRefusesBadReports(t *testing.T) {
	srv, recorded := testServer(t, &MemoryStore{})
	url := URL(srv.URL, testKey, "sno")
	for name, c := range map[string]struct {
		body string
		want int
	}{
		"unknown phase":   {`{"phase":"installed-everything"}`, 400},
		"no phase":        {`{"unit":"x"}`, 400},
		"not JSON":        {`phase=failed`, 400},
		"two values":      {`{"phase":"failed"}{"phase":"failed"}`, 400},
		"status a string": {`{"phase":"failed","status":"1"}`, 400},
		"unit with ESC":   {`{"phase":"failed","unit":"a\u001b[2Jb"}`, 400},
		"oversize":        {`{"phase":"failed","log":"` + strings.Repeat("x", MaxBody) + `"}`, 413},
	} {
		if code := post(t, url, c.body); code != c.want {
			t.Errorf("%s: %d, want %d", name, code, c.want)
		}
	}
	// Without Content-Length too: the body is cut where the limit is.
	req, _ := http.NewRequest(http.MethodPost, url, struct{ *strings.Reader }{strings.NewReader(`{"phase":"failed","log":"` + strings.Repeat("y", 2*MaxBody) + `"}`)})
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked oversize: %d, want 413", resp.StatusCode)
	}
	if len(*recorded) != 0 {
		t.Errorf("recorded %v", *recorded)
	}
	resp, err = http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodPut, url, nil)
	if resp, err = http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("PUT: %d", resp.StatusCode)
		}
	}
}

// A log keeps its end, without the control characters that would act on a terminal.
func TestDecodeReportLog(t *testing.T) {
	long := strings.Repeat("é", MaxLog) + "\x1b[31mlast line\r\n\tend"
	body, _ := json.Marshal(Report{Phase: Failed, Log: long})
	r, err := DecodeReport(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Log) > MaxLog || !strings.HasSuffix(r.Log, "[31mlast line\n\tend") || strings.ContainsAny(r.Log, "\x1b\r") {
		t.Errorf("log of %d bytes ends %q", len(r.Log), r.Log[len(r.Log)-30:])
	}
	if !strings.HasPrefix(r.Log, "é") {
		t.Errorf("log does not start on a whole character: %q", r.Log[:4])
	}
}

// Repeats are recorded once; a flood of distinct failures keeps memory and the file
// bounded.
func TestFloodIsBounded(t *testing.T) {
	for name, store := range map[string]Store{"memory": &MemoryStore{}, "file": &FileStore{Dir: t.TempDir()}} {
		t.Run(name, func(t *testing.T) {
			srv, recorded := testServer(t, store)
			url := URL(srv.URL, testKey, "sno")
			for i := 0; i < 5; i++ {
				if code := post(t, url, `{"phase":"bootkube-started"}`); code != 204 {
					t.Fatalf("repeat %d: %d", i, code)
				}
			}
			big := strings.Repeat("\"\\", MaxLog/2-8) // escapes to the largest line
			for i := 0; i < 40; i++ {
				body := fmt.Sprintf(`{"phase":"failed","unit":"install-to-disk.service","status":1,"log":%q}`, fmt.Sprint(i)+big)
				if code := post(t, url, body); code != 204 {
					t.Fatalf("failure %d: %d, want 204: a failure is never refused for space", i, code)
				}
			}
			recs, err := store.Records("sno")
			if err != nil {
				t.Fatal(err)
			}
			failures := countFailures(recs)
			if len(recs)-failures != 1 || failures > 2*maxFailures || failures == 0 {
				t.Errorf("%d records, %d failures", len(recs), failures)
			}
			if fs, ok := store.(*FileStore); ok {
				info, err := os.Stat(FilePath(fs.Dir, "sno"))
				if err != nil {
					t.Fatal(err)
				}
				if info.Size() > int64(MaxFileSize) || info.Mode().Perm() != 0o600 {
					t.Errorf("file of %d bytes (max %d), mode %v", info.Size(), MaxFileSize, info.Mode())
				}
			}
			if n := strings.Count(strings.Join(*recorded, ","), "bootkube-started"); n != 1 {
				t.Errorf("bootkube-started recorded %d times", n)
			}
		})
	}
}

// A unit that fails again and again, with another journal each time, does not crowd out the
// failure that came after it: both stores keep the last failures, and refuse none.
func TestLastFailuresAreKept(t *testing.T) {
	for name, store := range map[string]Store{"memory": &MemoryStore{}, "file": &FileStore{Dir: t.TempDir()}} {
		t.Run(name, func(t *testing.T) {
			if _, err := store.Add("sno", Record{Report: Report{Phase: LiveBooted}}); err != nil {
				t.Fatal(err)
			}
			status := 1
			for i := range 3 * maxFailures {
				rec := Record{Report: Report{Phase: Failed, Unit: "flappy.service", Status: &status, Log: fmt.Sprint("try ", i)}}
				if added, err := store.Add("sno", rec); !added || err != nil {
					t.Fatalf("failure %d: added %v, %v", i, added, err)
				}
			}
			real := Record{Report: Report{Phase: Failed, Unit: "install-to-disk.service", Status: &status, Log: "no such disk"}}
			if added, err := store.Add("sno", real); !added || err != nil {
				t.Fatalf("the last failure: added %v, %v", added, err)
			}
			recs, err := store.Records("sno")
			if err != nil {
				t.Fatal(err)
			}
			reached, failure := Latest(recs)
			if reached != LiveBooted || failure == nil || failure.Unit != "install-to-disk.service" {
				t.Fatalf("latest: %s, %+v; want live-booted and the install-to-disk failure", reached, failure)
			}
			if n := countFailures(recs); n > 2*maxFailures || n < maxFailures {
				t.Errorf("%d failures kept, want the last %d to %d", n, maxFailures, 2*maxFailures)
			}
			if recs[len(recs)-2].Log != fmt.Sprint("try ", 3*maxFailures-1) {
				t.Errorf("the failure before the last is %q, want the newest of flappy.service", recs[len(recs)-2].Log)
			}
		})
	}
}

// A FileStore neither reads nor writes through a symbolic link at a node's file, and makes
// its directory private.
func TestFileStoreRefusesLinks(t *testing.T) {
	nodes := t.TempDir()
	dir := filepath.Join(nodes, DirName)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	victim := filepath.Join(nodes, "victim.txt")
	if err := os.WriteFile(victim, []byte("victim line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../victim.txt", FilePath(dir, "sno")); err != nil {
		t.Fatal(err)
	}
	var logged []string
	s := &FileStore{Dir: dir, Log: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }}
	if _, err := s.Add("sno", Record{Report: Report{Phase: LiveBooted}}); !errors.Is(err, ErrLink) {
		t.Errorf("Add through a link: %v, want ErrLink", err)
	}
	if _, err := s.Records("sno"); !errors.Is(err, ErrLink) {
		t.Errorf("Records through a link: %v, want ErrLink", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "victim line\n" {
		t.Errorf("the link's target became %q", got)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 || len(logged) != 1 || !strings.Contains(logged[0], "0700") {
		t.Errorf("directory mode %v, logged %q; want 0700 and one line saying so", info.Mode().Perm(), logged)
	}
}

// A crash that cut the last line loses that record only.
func TestReadFileSkipsCutLine(t *testing.T) {
	dir := t.TempDir()
	s := &FileStore{Dir: dir}
	if _, err := s.Add("sno", Record{Report: Report{Phase: LiveBooted}, Time: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(FilePath(dir, "sno"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"phase":"bootkube-do`)
	f.Close()
	recs, err := ReadFile(filepath.Join(dir, "sno.jsonl"))
	if err != nil || len(recs) != 1 || recs[0].Phase != LiveBooted {
		t.Fatalf("%v %v", recs, err)
	}
}

// Wait follows the records to the target, stops at a failure with its record, and says how
// far the node got when time is up.
func TestWait(t *testing.T) {
	status := 1
	steps := [][]Record{
		nil,
		{{Report: Report{Phase: LiveBooted}}},
		{{Report: Report{Phase: LiveBooted}}, {Report: Report{Phase: BootkubeStarted}}, {Report: Report{Phase: BootkubeDone}}},
		{{Report: Report{Phase: LiveBooted}}, {Report: Report{Phase: BootkubeStarted}}, {Report: Report{Phase: BootkubeDone}},
			{Report: Report{Phase: Failed, Unit: "install-to-disk.service", Status: &status, Log: "boom"}}},
	}
	source := func() func(context.Context) ([]Record, error) {
		i := 0
		return func(context.Context) ([]Record, error) {
			r := steps[min(i, len(steps)-1)]
			i++
			return r, nil
		}
	}
	var seen []Phase
	rec, err := Wait(context.Background(), source(), BootkubeDone, time.Millisecond, func(r Record) { seen = append(seen, r.Phase) }, nil)
	if err != nil || rec.Phase != BootkubeDone || len(seen) != 3 {
		t.Fatalf("%v %v, seen %v", rec, err, seen)
	}
	_, err = Wait(context.Background(), source(), InstallDone, time.Millisecond, nil, nil)
	var failed *FailedError
	if !errors.As(err, &failed) || failed.Record.Log != "boom" || *failed.Record.Status != 1 {
		t.Fatalf("want the failure, got %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = Wait(ctx, func(context.Context) ([]Record, error) { return steps[1], nil }, InstallDone, time.Millisecond, nil, nil)
	var timeout *TimeoutError
	if !errors.As(err, &timeout) || timeout.Reached != LiveBooted {
		t.Fatalf("want a timeout at live-booted, got %v", err)
	}
	if !InstalledBooted.Reaches(InstallDone) || InstallDone.Reaches(InstalledBooted) || Failed.Reaches(LiveBooted) {
		t.Error("Reaches orders the phases wrongly")
	}
}
