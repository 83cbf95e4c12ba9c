package serve

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// metrics are a Server's Prometheus metrics, in a registry of its own so that several
// servers in one process (tests, a Go program) do not collide.
type metrics struct {
	registry            *prometheus.Registry
	requests            *prometheus.CounterVec
	sent                *prometheus.CounterVec
	duration            *prometheus.HistogramVec
	inFlight            prometheus.Gauge
	preparations        prometheus.Counter
	preparationFailures prometheus.Counter
	mediaMade           *prometheus.CounterVec
	originRequests      prometheus.Counter
	originErrors        prometheus.Counter
	originBytes         prometheus.Counter
	originCopyBytes     prometheus.Gauge
	originCheckOK       prometheus.Gauge
	nodeCacheHits       prometheus.Counter
	nodeCacheMisses     prometheus.Counter
	nodeCacheBytes      prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sno_iso_http_requests_total", Help: "HTTP requests answered, by route and status code.",
		}, []string{"route", "code"}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sno_iso_http_response_bytes_total", Help: "Response body bytes sent, by route.",
		}, []string{"route"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sno_iso_http_request_duration_seconds", Help: "Time from a request to the end of its response, by route.",
			// From a range read to a whole ISO over a slow BMC link.
			Buckets: []float64{.001, .005, .025, .1, .5, 2.5, 10, 60, 300, 1800},
		}, []string{"route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sno_iso_http_requests_in_flight", Help: "Requests being answered.",
		}),
		preparations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sno_iso_node_preparations_total", Help: "Preparations of a node's media from its files.",
		}),
		preparationFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sno_iso_node_preparation_failures_total", Help: "Preparations that failed on the node's files.",
		}),
		mediaMade: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sno_iso_node_media_made_total",
			Help: "Nodes' media made that take a build (made once per version of the node's files and the ISO), by kind: minimal, grown.",
		}, []string{"kind"}),
		originRequests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sno_iso_origin_requests_total", Help: "Requests to the origin of an ISO given by URL.",
		}),
		originErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sno_iso_origin_errors_total", Help: "Requests to the origin that failed.",
		}),
		originBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sno_iso_origin_bytes_total", Help: "Body bytes read from the origin.",
		}),
		originCopyBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sno_iso_origin_copy_bytes",
			Help: "Bytes of the ISO given by URL copied to local disk so far, for the version being copied or served from its copy.",
		}),
		originCheckOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sno_iso_origin_check_ok",
			Help: "1 when the origin of the ISO given by URL answered the last check or open with the version served, 0 when it failed.",
		}),
		nodeCacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sno_iso_node_cache_hits_total", Help: "Requests whose node was found prepared in the node cache.",
		}),
		nodeCacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sno_iso_node_cache_misses_total", Help: "Requests whose node had to be prepared (new, changed or dropped from the cache).",
		}),
		nodeCacheBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sno_iso_node_cache_bytes", Help: "Estimated bytes of the prepared nodes kept (bounded by --node-cache-size).",
		}),
	}
	m.registry.MustRegister(m.requests, m.sent, m.duration, m.inFlight, m.preparations, m.preparationFailures, m.mediaMade,
		m.originRequests, m.originErrors, m.originBytes, m.nodeCacheHits, m.nodeCacheMisses, m.nodeCacheBytes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// watchURLExpiry publishes the seconds left until the ISO's pre-signed URL expires at
// (negative once it has).
func (m *metrics) watchURLExpiry(at time.Time) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sno_iso_origin_url_expiry_seconds",
		Help: "Seconds until the pre-signed URL of the ISO expires (negative once it has); absent for a URL that does not expire.",
	}, func() float64 { return time.Until(at).Seconds() }))
}

// watchCopy publishes the progress of the ISO's copy to local disk, and whether the ISO is
// served from it (complete says).
func (m *metrics) watchCopy(complete func() bool) {
	m.registry.MustRegister(m.originCopyBytes, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sno_iso_origin_copy_complete",
		Help: "1 when the ISO given by URL is served from its complete local copy, 0 while it is served from its origin.",
	}, func() float64 {
		if complete() {
			return 1
		}
		return 0
	}))
}

// watchOrigin publishes whether the origin of the ISO answers (setOriginCheckOK).
func (m *metrics) watchOrigin() {
	m.registry.MustRegister(m.originCheckOK)
}

func (m *metrics) setOriginCheckOK(ok bool) {
	if ok {
		m.originCheckOK.Set(1)
	} else {
		m.originCheckOK.Set(0)
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// observeOrigin counts one request to the origin; it is origin.Options.Observe.
func (m *metrics) observeOrigin(n int64, err error) {
	m.originRequests.Inc()
	m.originBytes.Add(float64(n))
	if err != nil {
		m.originErrors.Inc()
	}
}

func (m *metrics) observeRequest(path string, status int, written int64, d time.Duration) {
	route := routeOf(path)
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.sent.WithLabelValues(route).Add(float64(written))
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

func (m *metrics) prepared(err error) {
	m.preparations.Inc()
	if err != nil {
		m.preparationFailures.Inc()
	}
}

// made counts a node's medium of kind made.
func (m *metrics) made(kind string) {
	m.mediaMade.WithLabelValues(kind).Inc()
}

// routeOf names what a path asks for by its last element, never by a node name or a
// token: the label's values stay few.
func routeOf(path string) string {
	last := path[strings.LastIndexByte(path, '/')+1:]
	switch {
	case path == "/":
		return "index"
	case path == "/"+isobuilder.PXERootfs:
		return "rootfs"
	case strings.HasSuffix(last, capability.MinimalSuffix+".iso"):
		return "minimal_iso"
	case strings.HasSuffix(last, ".iso"):
		return "iso"
	case last == isobuilder.PXEKernel || last == isobuilder.PXEInitramfs || last == isobuilder.PXERootfs || last == node.IPXEConfig:
		return "pxe_" + strings.TrimSuffix(strings.TrimSuffix(last, ".img"), ".ipxe")
	case path == HealthPath || path == ReadyPath || path == MetricsPath:
		return "admin"
	}
	return "other"
}

// nodeCacheUsed counts a use of the node cache and sets the bytes it holds.
func (m *metrics) nodeCacheUsed(hit bool, bytes int64) {
	if hit {
		m.nodeCacheHits.Inc()
	} else {
		m.nodeCacheMisses.Inc()
	}
	m.nodeCacheBytes.Set(float64(bytes))
}
