package serve

import (
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sno-iso/sno-iso/node"
	"github.com/sno-iso/sno-iso/nodedir"
	"github.com/sno-iso/sno-iso/progress"
)

// reports is a server's side of the progress protocol: it takes the nodes' reports at their
// report URLs, keeps them, logs them and exports them as metrics.
type reports struct {
	handler *progress.Handler
	store   progress.Store
	// phase is sno_iso_node_phase: the time each node reported each phase.
	phase *prometheus.GaugeVec
	// problems spaces the log lines of reports not kept: a node, or anyone with its report
	// URL, can post them as fast as it likes.
	problems logThrottle
}

// problemLogInterval is the least time between two log lines of reports not kept.
const problemLogInterval = 10 * time.Second

// logThrottle lets one log line through per problemLogInterval and counts the others.
type logThrottle struct {
	mu      sync.Mutex
	next    time.Time
	skipped int
}

// allow reports whether a line may be logged at now and, if so, how many were not since the
// last one.
func (l *logThrottle) allow(now time.Time) (skipped int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.next) {
		l.skipped++
		return 0, false
	}
	skipped, l.skipped, l.next = l.skipped, 0, now.Add(problemLogInterval)
	return skipped, true
}

// skippedNote ends a throttled log line with the count of the lines it stands for.
func skippedNote(skipped int) string {
	if skipped == 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d more not logged)", skipped)
}

// newReports sets up the report URLs of a server with a secret; an open server takes none.
func (s *Server) newReports() {
	store := s.cfg.ReportStore
	if store == nil {
		store = &progress.FileStore{Dir: filepath.Join(s.cfg.NodesDir, progress.DirName), Log: s.log.Printf}
	}
	rp := &reports{store: store, phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "sno_iso_node_phase",
		Help: "When each node reported each phase of its install, in seconds since the epoch.",
	}, []string{"node", "phase"})}
	s.metrics.registry.MustRegister(rp.phase)
	rp.handler = &progress.Handler{
		Keys:  s.reportKeys,
		Known: s.listed,
		Store: store,
		Recorded: func(node string, rec progress.Record) {
			s.log.Printf("node %s reported %s from %s", node, rec, rec.From)
			rp.phase.WithLabelValues(node, string(rec.Phase)).Set(float64(rec.Time.Unix()))
			if s.cfg.OnReport != nil {
				s.cfg.OnReport(node, rec, s.log.Printf)
			}
		},
		Problem: func(node string, err error) {
			if skipped, ok := rp.problems.allow(time.Now()); ok {
				s.log.Printf("node %s: a report was not kept: %v%s", node, err, skippedNote(skipped))
			}
		},
	}
	s.reports = rp
}

// reportKeys are the keys a report token may be made with now.
func (s *Server) reportKeys() [][]byte {
	now := time.Now()
	secret, problem := s.secret.Current(now)
	if problem != nil {
		s.log.Printf("%v; still using the secret read before", problem)
	}
	keys := [][]byte{secret.Key}
	if secret.Previous != nil && now.Before(secret.PreviousUntil) {
		keys = append(keys, secret.Previous)
	}
	return keys
}

// prepareReporting is prepareDir with --report-url set to the node's report URL when the
// server takes reports and has a ReportBaseURL, as `sno-iso build --report-url` makes the
// media. The secret's file is then one more input: a rotation prepares the node again, with
// the new token.
func (s *Server) prepareReporting(dir string) (*node.Node, []string, error) {
	if s.reports == nil || s.cfg.ReportBaseURL == "" {
		return prepareDir(dir)
	}
	in := nodedir.Inputs(dir)
	secret, _ := s.secret.Current(time.Now())
	in.ReportURL = progress.URL(s.cfg.ReportBaseURL, secret.Key, filepath.Base(dir))
	in.ReportCA = s.cfg.ReportCA
	n, inputs, err := node.Load(in)
	return n, append(inputs, s.secret.Path()), err
}

// Reports returns what node reported, oldest first; none on an open server.
func (s *Server) Reports(node string) ([]progress.Record, error) {
	if s.reports == nil {
		return nil, nil
	}
	return s.reports.store.Records(node)
}

// serveReport answers a report URL.
func (s *Server) serveReport(w http.ResponseWriter, r *http.Request) {
	release, err := s.takeSlot(nodeClass)
	if err != nil {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	defer release()
	s.reports.handler.ServeHTTP(w, r)
}

// reportSummary is what the index shows of a node's reports: the furthest phase and when,
// and a failure after it.
func (s *Server) reportSummary(name string) string {
	recs, err := s.Reports(name)
	if err != nil || len(recs) == 0 {
		return ""
	}
	reached, failure := progress.Latest(recs)
	summary := ""
	for _, r := range recs {
		if r.Phase == reached {
			summary = fmt.Sprintf("%s at %s", reached, r.Time.UTC().Format(time.RFC3339))
		}
	}
	if failure != nil {
		summary += "; failed: " + failure.String()
	}
	return summary
}
