package serve

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/progress"
)

// A node reports at its own report URL, over the same server as its media: the report is kept
// in the nodes directory's progress file, logged without the token, shown on the index
// and exported as sno_iso_node_phase; another node's token and the media token are refused,
// and OnReport hears of it.
func TestServeRecordsReports(t *testing.T) {
	var heard []string
	h := newHarness(t, "", map[string]string{"a": configA, "b": configB}, func(c *testSetup) {
		c.OnReport = func(node string, rec progress.Record, _ func(string, ...any)) {
			heard = append(heard, node+" "+string(rec.Phase))
		}
	})
	key := h.srv.publishedSecret().Key
	post := func(path, body string) int {
		t.Helper()
		resp, err := http.Post(h.url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	own := strings.TrimPrefix(progress.URL(h.url, key, "a"), h.url)
	if code := post(own, `{"phase":"install-done"}`); code != http.StatusNoContent {
		t.Fatalf("own report: %d", code)
	}
	for name, path := range map[string]string{
		"b's token":       "/" + progress.Token(key, "b") + "/a/report",
		"the media token": h.path("/a/report"),
		"no such node":    "/" + progress.Token(key, "zz") + "/zz/report",
		"forged":          "/AAAAAAAAAAAAAAAAAAAAAA/a/report",
	} {
		if code := post(path, `{"phase":"failed"}`); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", name, code)
		}
	}
	recs, err := progress.ReadFile(progress.FilePath(filepath.Join(h.nodes, progress.DirName), "a"))
	if err != nil || len(recs) != 1 || recs[0].Phase != progress.InstallDone || recs[0].From != "127.0.0.1" {
		t.Fatalf("progress file: %v %v", recs, err)
	}
	if _, err := os.Stat(progress.FilePath(filepath.Join(h.nodes, progress.DirName), "b")); err == nil {
		t.Error("node b got a progress file")
	}
	if strings.Join(heard, ",") != "a install-done" {
		t.Errorf("OnReport heard %v", heard)
	}
	if log := h.log.String(); !strings.Contains(log, "node a reported") || strings.Contains(log, progress.Token(key, "a")) {
		t.Errorf("the log lacks the report or shows the token:\n%s", log)
	}
	_, page := h.do("GET", "/")
	if !strings.Contains(string(page), "install-done at ") {
		t.Errorf("the index does not show the report:\n%s", page)
	}
	_, metrics := h.do("GET", MetricsPath)
	if !strings.Contains(string(metrics), `sno_iso_node_phase{node="a",phase="install-done"}`) {
		t.Errorf("no sno_iso_node_phase metric")
	}
	// The node list ignores the progress directory.
	if h.srv.listing().has(progress.DirName) {
		t.Error("the progress directory is listed as a node")
	}
}

// An open server takes no reports: there is no secret to make their tokens from.
func TestOpenServerTakesNoReports(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.Open = true })
	resp, err := http.Post(h.url+"/x/a/report", "application/json", strings.NewReader(`{"phase":"live-booted"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST on an open server: %d", resp.StatusCode)
	}
}

// brokenStore refuses every report, as a store on a full or read-only disk does.
type brokenStore struct{}

func (brokenStore) Add(string, progress.Record) (bool, error) {
	return false, errors.New("no space left on device")
}
func (brokenStore) Records(string) ([]progress.Record, error) { return nil, nil }

// Reports that cannot be kept are logged, but not one line each: whoever holds a report URL
// may post as fast as it likes.
func TestReportsNotKeptAreLoggedSparingly(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.ReportStore = brokenStore{} })
	url := progress.URL(h.url, h.srv.publishedSecret().Key, "a")
	for i := range 50 {
		resp, err := http.Post(url, "application/json", strings.NewReader(fmt.Sprintf(`{"phase":"failed","log":"try %d"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusInsufficientStorage {
			t.Fatalf("report %d: %d, want 507", i, resp.StatusCode)
		}
	}
	if n := strings.Count(h.log.String(), "a report was not kept"); n != 1 {
		t.Errorf("%d log lines for 50 reports not kept in a row, want 1:\n%s", n, h.log.String())
	}
}
