package serve

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// logWriter records the status and body size of a response for the access log, and keeps
// the ResponseWriter's ReadFrom, through which file spans reach sendfile.
type logWriter struct {
	http.ResponseWriter
	status      int
	written     int64
	wroteHeader bool
	// writeTimeout bounds the first writes of every response; the body writer extends it
	// chunk by chunk. It also replaces the deadline an earlier response left on a kept-alive
	// connection.
	writeTimeout time.Duration
}

func (w *logWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
		if w.writeTimeout > 0 {
			http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.writeTimeout))
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *logWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

func (w *logWriter) ReadFrom(r io.Reader) (int64, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := io.Copy(w.ResponseWriter, r)
	w.written += n
	return n, err
}

// code is the status sent: 200 when the handler wrote nothing else.
func (w *logWriter) code() int {
	if !w.wroteHeader {
		return http.StatusOK
	}
	return w.status
}

// Unwrap lets http.ResponseController reach the connection, for write deadlines.
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequest writes the access log line: client, request, status, body bytes, duration,
// the Range asked for, and what went wrong.
func (s *Server) logRequest(r *http.Request, w *logWriter, d time.Duration, err error) {
	request := r.Method + " " + s.loggedURI(r) + " " + r.Proto
	line := fmt.Sprintf("%s %q %d %d %v", r.RemoteAddr, request, w.code(), w.written, d.Round(time.Microsecond))
	if rg := r.Header.Get("Range"); rg != "" {
		line += " range=" + fmt.Sprintf("%q", rg)
	}
	if err != nil {
		line += " error=" + fmt.Sprintf("%q", err.Error())
	}
	s.log.Print(line)
}
