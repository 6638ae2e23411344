package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"waitroom/queue"
)

// Metrics, all prefixed queue_:
//
//	queue_http_request_duration_seconds{route,method,code}  histogram per route
//	queue_store_errors_total{op}            store failures seen by the HTTP layer
//	queue_event_streams                     open event streams on this instance
//	queue_event_store_reads_total           store reads made for them (shared per queue and tick)
//	queue_event_statuses_delivered_total    statuses those reads delivered
//	queue_wait_short_total                  writes whose WAIT saw fewer replicas than --wait-replicas (durable.go)
//	queue_joins_total{queue} ...            engine events on this instance (see engineCollector)
//	queue_wait_seconds{queue}               histogram: join (pre-queue: the draw) to admission, this instance's admissions
//	queue_active_sessions{queue}            admitted users now (read from the store at scrape)
//	queue_waiting_tickets{queue}            users waiting now (read from the store at scrape)
//	queue_state{queue,state}                1 for the queue's state now (open, paused, scheduled, closed), else 0
//
// The values read from the store (active, waiting, pre-queue, state, slot,
// rate, draws, bypass uses) are the same on every instance: aggregate them
// with max, not sum. The others count what this instance did: sum them.
type metrics struct {
	requests    *prometheus.HistogramVec
	storeErrors *prometheus.CounterVec
	streams     prometheus.Gauge
}

func newMetrics(reg *prometheus.Registry, s *Server) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "queue_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route (event streams: the stream's life).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 60, 300},
		}, []string{"route", "method", "code"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queue_store_errors_total",
			Help: "Store operations that failed while serving HTTP requests, by operation.",
		}, []string{"op"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "queue_event_streams",
			Help: "Server-sent event streams open on this instance.",
		}),
	}
	for _, op := range []string{"join", "status", "enter", "heartbeat", "release", "stats", "settings", "ping", "metrics", "codes", "hold"} {
		m.storeErrors.WithLabelValues(op) // export every series from the start, at 0
	}
	hubReads := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "queue_event_store_reads_total",
		Help: "Store reads made for event streams (one per queue per tick, whatever the number of streams).",
	}, func() float64 { return float64(s.hubReads.Load()) })
	hubDelivered := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "queue_event_statuses_delivered_total",
		Help: "Statuses those reads handed to event streams.",
	}, func() float64 { return float64(s.hubDelivered.Load()) })
	waitShort := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "queue_wait_short_total",
		Help: "Store writes whose WAIT saw fewer replicas than asked (--wait-replicas): lost if the master dies before its replicas get them.",
	}, func() float64 { return float64(queue.WaitShort()) })
	for _, c := range []prometheus.Collector{m.requests, m.storeErrors, m.streams, hubReads, hubDelivered, waitShort, &engineCollector{s: s}} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// instrument times every request by the mux pattern that served it.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			route := r.Pattern // set by the mux
			if _, path, ok := strings.Cut(route, " "); ok {
				route = path
			}
			if route == "" {
				route = "unmatched"
			}
			m.requests.WithLabelValues(route, methodLabel(r.Method), strconv.Itoa(sw.code)).
				Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(sw, r)
	})
}

func methodLabel(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS":
		return m
	}
	return "other"
}

// statusWriter remembers the status code; Unwrap lets http.ResponseController
// reach the real writer (Flush for event streams).
type statusWriter struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// engineCollector reads the engines' counters at scrape time, and the queue
// lengths from the store.
type engineCollector struct{ s *Server }

var (
	descJoins       = engineDesc("queue_joins_total", "Tickets issued by this instance.")
	descAdmissions  = engineDesc("queue_admissions_total", "Users admitted by this instance's admission rounds.")
	descReleases    = engineDesc("queue_releases_total", "Admitted users who released their place through this instance.")
	descEnters      = engineDesc("queue_enters_total", "Passes consumed through this instance.")
	descReclaims    = engineDesc("queue_reclaims_total", "Expired sessions reclaimed by this instance's rounds.")
	descDropped     = engineDesc("queue_dropped_tickets_total", "Waiting tickets ended by this instance's rounds because their holder stopped polling.")
	descRollbacks   = engineDesc("queue_rollbacks_total", "Optimistic reservations undone because the slot was full.")
	descLostLeases  = engineDesc("queue_lost_leases_total", "Leader rounds that found the lease taken by another instance after admitting.")
	descRounds      = engineDesc("queue_admit_rounds_total", "Admission rounds run by this instance.")
	descRoundErrors = engineDesc("queue_admit_round_errors_total", "Admission rounds that failed with a store error.")
	descActive      = engineDesc("queue_active_sessions", "Users admitted and not yet gone (read from the store).")
	descWaiting     = engineDesc("queue_waiting_tickets", "Users waiting (read from the store).")
	descSlot        = engineDesc("queue_slot", "The queue's cap of active sessions.")
	descAdmitRate   = engineDesc("queue_admit_rate_per_second", "Admissions per second over the last minute, all instances.")
	descPreQueue    = engineDesc("queue_pre_queue_tickets", "Users in the pre-queue of a scheduled opening, not drawn yet (read from the store).")
	descDraws       = engineDesc("queue_draws_total", "Pre-queue draws so far, all instances (read from the store).")
	descBypassUses  = engineDesc("queue_bypass_uses_total", "Joins with a bypass code so far, all instances (read from the store).")
	descWait        = engineDesc("queue_wait_seconds", "Wait from join (for a pre-queue ticket, from the draw) to admission, of the users this instance admitted.")
	descState       = prometheus.NewDesc("queue_state", "1 for the queue's state now (open, paused, scheduled or closed), 0 for the others (read from the store).",
		[]string{"queue", "state"}, nil)
	queueStates      = []queue.QueueState{queue.QueueOpen, queue.QueuePaused, queue.QueueScheduled, queue.QueueClosed}
	scrapeStoreLimit = time.Second
)

func engineDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{"queue"}, nil)
}

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJoins, descAdmissions, descReleases, descEnters,
		descReclaims, descDropped, descRollbacks, descLostLeases, descRounds, descRoundErrors,
		descActive, descWaiting, descSlot, descAdmitRate, descPreQueue, descDraws, descBypassUses, descWait, descState} {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	tab := c.s.table()
	for _, name := range tab.names {
		eng := tab.rooms[name].eng
		k := eng.Counters()
		counter := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), name)
		}
		counter(descJoins, k.Joins)
		counter(descAdmissions, k.Admitted)
		counter(descReleases, k.Releases)
		counter(descEnters, k.Enters)
		counter(descReclaims, k.Reclaimed)
		counter(descDropped, k.Dropped)
		counter(descRollbacks, k.Rollbacks)
		counter(descLostLeases, k.LostLeases)
		counter(descRounds, k.Rounds)
		counter(descRoundErrors, k.Errors)
		w := eng.Waits()
		ch <- prometheus.MustNewConstHistogram(descWait, w.Count, w.Sum, w.Buckets, name)

		ctx, cancel := context.WithTimeout(context.Background(), scrapeStoreLimit)
		st, err := eng.Stats(ctx)
		cancel()
		if err != nil {
			c.s.metrics.storeErrors.WithLabelValues("metrics").Inc()
			continue // no gauges rather than wrong ones
		}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
		}
		gauge(descActive, float64(st.Active))
		gauge(descWaiting, float64(st.Waiting))
		gauge(descSlot, float64(st.Settings.Slot))
		gauge(descAdmitRate, st.AdmitRate)
		gauge(descPreQueue, float64(st.PreQueue))
		counter(descDraws, uint64(max(st.Draws, 0)))
		counter(descBypassUses, uint64(max(st.BypassUses, 0)))
		for _, qs := range queueStates {
			v := 0.0
			if st.State == qs {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, v, name, string(qs))
		}
	}
}
