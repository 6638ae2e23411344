// Package httpapi serves the waiting room over HTTP: the JSON API that the
// page and the protected site call, the waiting-room page itself, server-sent
// events, health checks and Prometheus metrics.
//
// It holds no state of its own beyond counters: every answer comes from the
// queue engines (package queue), which keep everything in the store, so any
// number of instances can serve the same queues and a ticket issued by one is
// accepted by all.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"waitroom/queue"
)

// Queue is one waiting room served by the instance.
type Queue struct {
	Engine *queue.Engine
	// TargetURL is where an admitted user is sent, with ?pass=<pass> added.
	// Empty: the page shows the pass and stays.
	TargetURL string
	// JoinKey verifies user ids: a join with a user id must carry
	// expires and sig = hex(HMAC-SHA256(JoinKey, user + "\n" + expires)),
	// made by the protected site. Empty: Config.JoinKey; both empty: only
	// anonymous joins.
	JoinKey []byte
	// JoinRate is the joins per minute one client IP may make, shared by all
	// instances through the store (GCRA, burst of the same size). 0 takes
	// Config.JoinRate; negative turns the limit off for this queue.
	JoinRate int
}

// Config configures a Server. Zero fields take the defaults noted.
type Config struct {
	Queues []Queue
	// Store is pinged by /readyz.
	Store redis.UniversalClient
	// AdminToken guards PUT /v1/queues/{q}. Empty disables the admin API.
	AdminToken string
	Logger     *slog.Logger
	// Registry receives the metrics and is served on /metrics; default a new
	// registry with only this package's metrics.
	Registry *prometheus.Registry
	// StoreTimeout bounds the store work of one request (default 2s).
	StoreTimeout time.Duration
	// RetryAfter is sent with every 503 (default 1s).
	RetryAfter time.Duration
	// MaxBodyBytes limits request bodies (default 4 KiB).
	MaxBodyBytes int64
	// StreamLifetime ends an event stream after this long so clients
	// reconnect and spread over instances (default 5m).
	StreamLifetime time.Duration
	// MaxStreams caps the event streams open on this instance (default
	// 10000); MaxStreamsPerTicket those of one ticket (default 2).
	MaxStreams, MaxStreamsPerTicket int
	// JoinKey is the join key of the queues that have none of their own.
	JoinKey []byte
	// JoinRate is the default joins per minute per client IP (default 60;
	// negative: no limit).
	JoinRate int
	// TrustedProxies are the addresses whose X-Forwarded-For is believed:
	// the client is the rightmost address in it that is not a trusted proxy.
	// Empty: the client is the peer address and the header is ignored.
	TrustedProxies []netip.Prefix
	// AdminFailures is how many failed admin attempts one client IP may make
	// per minute before it gets 429 (default 10), kept in the store.
	AdminFailures int
	// Runtime, when set, lets the admin API create and delete queues at run
	// time; Run serves the queues of the store's registry.
	Runtime *Runtime
	// Events is how event streams learn that their queue moved: EventsPush
	// (default; the queue's round events over sharded pub/sub, a store read
	// only when needed) or EventsPoll (every stream read from the store on a
	// schedule; kept to measure the difference). See events.go.
	Events string
}

// Values of Config.Events.
const (
	EventsPush = "push"
	EventsPoll = "poll"
)

// Runtime serves queues created at run time (POST /v1/queues). Every
// instance with a Runtime reads the registry's version each Period and
// starts or stops the queues that came or went, so all instances serve a new
// queue within one period.
type Runtime struct {
	// NewEngine builds the engine of a registered queue (not started; Run
	// runs its admission loop).
	NewEngine func(name string, spec queue.Spec) (*queue.Engine, error)
	// Period between reads of the registry's version (default 200ms).
	Period time.Duration
	// OnEngine, if set, is called with each engine Run starts (tests).
	OnEngine func(*queue.Engine)
}

// Server is the HTTP layer of one instance. Create it with New.
type Server struct {
	cfg     Config
	log     *slog.Logger
	tab     atomic.Pointer[roomTable] // the queues served now; replaced whole when run-time queues change
	metrics *metrics
	handler http.Handler

	draining atomic.Bool   // set by Drain: readiness fails, streams end
	drainCh  chan struct{} // closed by Drain
	drainMu  sync.Once

	limiter *redis_rate.Limiter // join and admin-failure limits, in the store

	streamMu     sync.Mutex
	streamCount  int
	streamsOf    map[string]int // open streams per ticket id
	hubReads     atomic.Int64   // store reads made by the event hubs
	hubDelivered atomic.Int64   // statuses handed to streams by those reads

	routeTable []Route // what routes registered, for Routes

	runMu  sync.Mutex      // serialises reconcile
	runCtx context.Context // Run's, while it runs: run-time queues' loops derive from it
	runWG  sync.WaitGroup  // run-time queues' loops
}

// Route is one method and path pattern the server answers (net/http's
// ServeMux syntax: {q} is a path segment).
type Route struct{ Method, Path string }

// Routes lists every route the server registers, in order; openapi.yaml
// documents exactly these (openapi_test.go).
func (s *Server) Routes() []Route { return append([]Route(nil), s.routeTable...) }

// roomTable is the set of queues this instance serves, never changed once
// published (Run publishes a new one when run-time queues come or go).
type roomTable struct {
	rooms   map[string]*room
	names   []string // sorted
	version int64    // of the registry this table reflects
}

func (s *Server) table() *roomTable { return s.tab.Load() }

// lookup returns the room of queue name, or nil.
func (s *Server) lookup(name string) *room { return s.table().rooms[name] }

// room is one queue with what the HTTP layer keeps about it.
type room struct {
	eng      *queue.Engine
	runtime  bool               // created through the admin API (in the registry), not by the instance's flags
	stop     context.CancelFunc // ends the admission loop of a run-time queue
	target   *url.URL
	joinKey  []byte
	joinRate int // per minute per client IP; <= 0 no limit
	hub      *hub

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when this instance admits someone
	ttl     time.Duration // cached ticket TTL (see ticketTTL)
	ttlAt   time.Time
	// ttlReading: one caller is reading the TTL from the store; the others
	// use the old value meanwhile.
	ttlReading bool
}

// New builds the server. Queue names must be unique.
func New(cfg Config) (*Server, error) {
	if len(cfg.Queues) == 0 && cfg.Runtime == nil {
		return nil, errors.New("httpapi: no queues")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = 2 * time.Second
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Second
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 4 << 10
	}
	if cfg.StreamLifetime <= 0 {
		cfg.StreamLifetime = 5 * time.Minute
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 10000
	}
	if cfg.MaxStreamsPerTicket <= 0 {
		cfg.MaxStreamsPerTicket = 2
	}
	if cfg.JoinRate == 0 {
		cfg.JoinRate = 60
	}
	if cfg.AdminFailures <= 0 {
		cfg.AdminFailures = 10
	}
	switch cfg.Events {
	case "":
		cfg.Events = EventsPush
	case EventsPush, EventsPoll:
	default:
		return nil, fmt.Errorf("httpapi: events mode %q (want %s or %s)", cfg.Events, EventsPush, EventsPoll)
	}
	if cfg.Runtime != nil && cfg.Runtime.Period <= 0 {
		cfg.Runtime.Period = 200 * time.Millisecond
	}
	s := &Server{cfg: cfg, log: cfg.Logger, drainCh: make(chan struct{}),
		streamsOf: map[string]int{}}
	if cfg.Store != nil {
		s.limiter = redis_rate.NewLimiter(cfg.Store)
	}
	tab := &roomTable{rooms: map[string]*room{}}
	for _, q := range cfg.Queues {
		name := q.Engine.Name()
		if _, dup := tab.rooms[name]; dup {
			return nil, fmt.Errorf("httpapi: queue %q configured twice", name)
		}
		rm, err := s.newRoom(q)
		if err != nil {
			return nil, err
		}
		tab.rooms[name] = rm
		tab.names = append(tab.names, name)
	}
	sort.Strings(tab.names)
	s.tab.Store(tab)
	m, err := newMetrics(cfg.Registry, s)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	s.handler = s.routes()
	return s, nil
}

func (s *Server) newRoom(q Queue) (*room, error) {
	name := q.Engine.Name()
	rm := &room{eng: q.Engine, changed: make(chan struct{}), joinKey: q.JoinKey, joinRate: q.JoinRate}
	if len(rm.joinKey) == 0 {
		rm.joinKey = s.cfg.JoinKey
	}
	if rm.joinRate == 0 {
		rm.joinRate = s.cfg.JoinRate
	}
	rm.hub = &hub{rm: rm, s: s, byID: map[string][]*sub{}, push: s.cfg.Events == EventsPush,
		wake: make(chan struct{}, 1)}
	if q.TargetURL != "" {
		u, err := parseTarget(q.TargetURL)
		if err != nil {
			return nil, fmt.Errorf("httpapi: queue %q: %v", name, err)
		}
		rm.target = u
	}
	return rm, nil
}

func parseTarget(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("target url %q is not an absolute http(s) URL", s)
	}
	return u, nil
}

// ServeHTTP serves every route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Notify tells the event streams of queue q on this instance that the queue
// moved (wire it to the engine's OnAdmit hook), so they answer at once
// instead of at their next poll.
func (s *Server) Notify(q string) {
	rm := s.lookup(q)
	if rm == nil {
		return
	}
	rm.mu.Lock()
	close(rm.changed)
	rm.changed = make(chan struct{})
	rm.mu.Unlock()
}

func (rm *room) changes() <-chan struct{} {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.changed
}

// Drain starts a graceful shutdown: /readyz fails so load balancers stop
// sending traffic, and open event streams end (their clients reconnect,
// to another instance). Requests in flight finish normally.
func (s *Server) Drain() {
	s.drainMu.Do(func() {
		s.draining.Store(true)
		close(s.drainCh)
	})
}

// routes is the whole HTTP surface. Every path also has a method-less
// pattern, so a wrong method gets a JSON 405 instead of the mux's text one.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(method, path string, h http.HandlerFunc) {
		mux.HandleFunc(method+" "+path, h)
		s.routeTable = append(s.routeTable, Route{method, path})
		allow := method
		if method == "GET" {
			allow = "GET, HEAD"
		}
		mux.HandleFunc(path, methodNotAllowed(allow))
	}
	api("POST", "/v1/queues/{q}/join", s.join)
	api("GET", "/v1/queues/{q}/status", s.status)
	api("POST", "/v1/queues/{q}/enter", s.enter)
	api("POST", "/v1/queues/{q}/heartbeat", s.heartbeat)
	api("POST", "/v1/queues/{q}/release", s.release)
	api("GET", "/v1/queues/{q}/events", s.events)
	api("GET", "/v1/queues/{q}/challenge", s.challenge)
	api("GET", "/v1/queues/{q}/history", s.history)
	mux.HandleFunc("GET /v1/queues/{q}/codes", s.adminOnly(s.listCodes))
	mux.HandleFunc("POST /v1/queues/{q}/codes", s.adminOnly(s.issueCodes))
	s.routeTable = append(s.routeTable, Route{"GET", "/v1/queues/{q}/codes"}, Route{"POST", "/v1/queues/{q}/codes"})
	mux.HandleFunc("/v1/queues/{q}/codes", methodNotAllowed("GET, HEAD, POST"))
	mux.HandleFunc("GET /v1/queues", s.list)
	mux.HandleFunc("POST /v1/queues", s.adminOnly(s.create))
	s.routeTable = append(s.routeTable, Route{"GET", "/v1/queues"}, Route{"POST", "/v1/queues"})
	mux.HandleFunc("/v1/queues", methodNotAllowed("GET, HEAD, POST"))
	mux.HandleFunc("GET /v1/queues/{q}", s.info)
	mux.HandleFunc("PUT /v1/queues/{q}", s.adminOnly(s.update))
	mux.HandleFunc("DELETE /v1/queues/{q}", s.adminOnly(s.remove))
	s.routeTable = append(s.routeTable, Route{"GET", "/v1/queues/{q}"}, Route{"PUT", "/v1/queues/{q}"},
		Route{"DELETE", "/v1/queues/{q}"})
	mux.HandleFunc("/v1/queues/{q}", methodNotAllowed("GET, HEAD, PUT, DELETE"))
	api("GET", "/healthz", s.healthz)
	api("GET", "/readyz", s.readyz)
	api("GET", "/metrics", s.metrics.handler(s.cfg.Registry).ServeHTTP)
	api("GET", "/openapi.yaml", serveOpenAPI)
	api("GET", "/q/{q}", s.page)
	api("GET", "/q/{q}/theme.css", s.theme)
	api("GET", "/admin", s.adminPage)
	api("GET", "/assets/{file}", s.asset)
	mux.HandleFunc("GET /{$}", s.index)
	s.routeTable = append(s.routeTable, Route{"GET", "/"})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such route: %s", r.URL.Path)
	})
	return s.metrics.instrument(mux)
}

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, "method %s not allowed (allowed: %s)", r.Method, allow)
	}
}

// room finds the request's queue; it writes the 404 itself.
func (s *Server) room(w http.ResponseWriter, r *http.Request) (*room, bool) {
	name := r.PathValue("q")
	rm := s.lookup(name)
	if rm == nil {
		writeError(w, http.StatusNotFound, "unknown queue %q", name)
		return nil, false
	}
	return rm, true
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the store answers PING and the admission rounds
// succeed, and 503 while the store is unreachable, while the rounds of a queue
// keep failing (the store refuses them) or the instance is shutting down.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	if s.cfg.Store != nil {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		if err := s.cfg.Store.Ping(ctx).Err(); err != nil {
			s.metrics.storeErrors.WithLabelValues("ping").Inc()
			w.Header().Set("Retry-After", fmt.Sprint(s.retryAfterSeconds()))
			writeError(w, http.StatusServiceUnavailable, "store unreachable")
			return
		}
	}
	tab := s.table()
	for _, name := range tab.names {
		if err := tab.rooms[name].eng.Failing(); err != nil {
			w.Header().Set("Retry-After", fmt.Sprint(s.retryAfterSeconds()))
			writeError(w, http.StatusServiceUnavailable, "admission rounds of queue %s keep failing: %v", name, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
