package serve

import (
	"io"
	"log/slog"
	"time"

	"github.com/sno-iso/sno-iso/origin"
	"github.com/sno-iso/sno-iso/progress"
)

// Config says what a Server serves.
type Config struct {
	// ISO is the pristine live ISO: a path, or an http(s) URL of an origin that answers
	// Range requests. It is parsed once, and again when the file or object changes; an
	// origin that does not answer at start leaves the server running and not ready (see New).
	ISO string
	// Origin tunes the reads of an ISO given by URL.
	Origin origin.Options
	// ISOCopyDir, when set, receives a copy of each version of an ISO given by URL, read from
	// its origin once in the background (an unlinked file: nothing stays behind when the process
	// ends): once complete and checked, the ISO is served from it, and the origin is only asked
	// whether the object changed. Empty serves every download from the origin.
	ISOCopyDir string
	// originWatchEvery is how often the origin of a version served from its copy is checked;
	// 0 means originCheckInterval. Tests shorten it.
	originWatchEvery time.Duration
	// NodesDir holds a directory per node, named after the node, laid out as
	// nodedir.Inputs reads it.
	NodesDir string
	// BaseURL is the http URL at which nodes reach this server, for the rootfs URL of
	// minimal ISOs and the URLs in boot.ipxe. Empty: boot.ipxe uses the request's Host,
	// and a minimal ISO needs the node's own rootfs URL.
	BaseURL string
	// MaxConcurrent bounds the responses in progress; more are refused with 503. A request
	// waiting for its node's preparation or a minimal ISO's build holds no place.
	MaxConcurrent int
	// NodeCacheBytes bounds the memory of the prepared nodes kept (as estimated from their
	// payloads); past it the least recently used are prepared again when asked for. 0 means
	// DefaultNodeCacheBytes.
	NodeCacheBytes int64
	// MaxConnections bounds the connections open at once, on each listener: past it the one
	// that has waited longest for a request is closed (the new one when every other is in the
	// middle of one). 0 means DefaultMaxConnections.
	MaxConnections int
	// MaxConnectionsPerClient bounds the connections open at once from one client address; 0
	// means no bound (behind a reverse proxy or load balancer every client has its address).
	// At either bound the oldest connection waiting for a request is closed, not the new one.
	MaxConnectionsPerClient int
	// PrepareTimeout bounds a node's preparation (reading and checking its files): past it,
	// the node's requests are answered 503 until the preparation ends. 0 means
	// DefaultPrepareTimeout.
	PrepareTimeout time.Duration
	// WriteTimeout is how long a client may take to accept each 512 KiB of a response
	// before it is cut off, freeing its place. 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// TempDir receives the minimal ISOs (one per rootfs URL, unlinked once open) and the
	// grown ISOs.
	TempDir string
	// GrowEmbedArea serves a node whose payload does not fit the ISO's Ignition area from
	// the ISO rebuilt with a larger one, made for that node on first request, as
	// node.MediaOptions.GrowEmbedArea does.
	GrowEmbedArea bool
	// Log receives one line per request and the nodes' warnings; nil discards them.
	Log io.Writer
	// Logger, when set, receives those lines instead, as slog records (JSON, for one).
	Logger *slog.Logger
	// SeparateAdmin keeps /healthz, /readyz and /metrics off the main handler: they are
	// served by Admin, on an address of their own.
	SeparateAdmin bool
	// Open publishes the nodes' media under plain, guessable URLs (/<node>.iso) instead of
	// capability URLs (/<token>/<node>.iso), for networks where every client may have them.
	Open bool
	// SecretFile holds the secret the capability tokens are derived from; empty means
	// capability.SecretPath(NodesDir), created on first start.
	SecretFile string
	// RotationGrace is how long the tokens of a replaced secret keep working when the new
	// file does not carry the old key itself (as capability.RotateSecretFile writes it).
	RotationGrace time.Duration
	// ReportStore keeps the nodes' progress reports; nil means a progress.FileStore in the
	// nodes directory's progress.DirName. An open server takes no reports.
	ReportStore progress.Store
	// ReportBaseURL is the http(s) URL at which nodes reach this server to report: their media
	// carry their report URL under it. Empty: the media carry none (a node built with
	// --report-url still reports).
	ReportBaseURL string
	// ReportCA is the PEM certificate the nodes verify an https ReportBaseURL with.
	ReportCA []byte
	// OnReport, when set, is told of each report recorded, with the server's log: the eject
	// of a node's virtual media once it reported progress.InstallDone, for one.
	OnReport func(node string, rec progress.Record, logf func(format string, args ...any))
}

// DefaultMaxConcurrent is the concurrency limit when Config.MaxConcurrent is 0: each
// request holds at most two descriptors (its connection and its view of the ISO).
const DefaultMaxConcurrent = 128

// DefaultNodeCacheBytes is Config.NodeCacheBytes when 0: some hundreds of nodes with
// 27 KB configs, well within a 256 MiB container.
const DefaultNodeCacheBytes = 32 << 20

// DefaultMaxConnections is Config.MaxConnections when 0: well above what the default
// MaxConcurrent responses and their kept-alive neighbours need, well below what memory
// and descriptors allow.
const DefaultMaxConnections = 1024

// DefaultPrepareTimeout is the time limit of a node's preparation when
// Config.PrepareTimeout is 0: reading a few small files and compressing them takes well under
// a second; longer means a file system that does not answer.
const DefaultPrepareTimeout = 30 * time.Second

// DefaultWriteTimeout is Config.WriteTimeout when 0.
const DefaultWriteTimeout = time.Minute
