package progress

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"
)

// Handler answers report URLs: POST records a report (204), GET returns the node's records
// (200, JSON). Every request with a token that is not the node's, or for a node that is not
// known, gets the same 404.
type Handler struct {
	// Keys returns the keys a token may be made with now: the server's secret, and the one
	// it replaced during a rotation's grace.
	Keys func() [][]byte
	// Known reports whether node is one the server serves.
	Known func(node string) bool
	Store Store
	// Recorded, when set, is told of each record added, after the answer: a log line,
	// metrics, the media's eject after InstallDone.
	Recorded func(node string, rec Record)
	// Problem, when set, is told why a report was not kept (a full or unwritable store).
	Problem func(node string, err error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Status is the answer to a GET of a report URL.
type Status struct {
	Node    string   `json:"node"`
	Records []Record `json:"records"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, node, ok := splitPath(r.URL.Path)
	// Both checks always: the answer's timing does not tell a known node from a bad token.
	accepted := Accepts(h.Keys(), node, token)
	known := ok && h.Known(node)
	if !accepted || !known {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, node)
	case http.MethodGet, http.MethodHead:
		records, err := h.Store.Records(node)
		if err != nil {
			http.Error(w, "cannot read the node's records", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Status{Node: node, Records: append([]Record{}, records...)})
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "a report URL takes POST (a report) and GET (the node's records)", http.StatusMethodNotAllowed)
	}
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request, node string) {
	if r.ContentLength > MaxBody {
		http.Error(w, ErrBodyTooLarge.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	report, err := DecodeReport(r.Body)
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	rec := Record{Report: report, Time: now().UTC(), From: remoteHost(r)}
	added, err := h.Store.Add(node, rec)
	if err != nil {
		if h.Problem != nil {
			h.Problem(node, err)
		}
		// Not a status the node's curl retries: a report it cannot keep stays unkept.
		http.Error(w, "the report could not be kept", http.StatusInsufficientStorage)
		return
	}
	w.WriteHeader(http.StatusNoContent)
	if added && h.Recorded != nil {
		h.Recorded(node, rec)
	}
}

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
