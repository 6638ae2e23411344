// Command queue is one instance of the waiting room: the admission loops of
// its queues plus the HTTP API and page. Run any number of instances against
// one store; they share everything through it.
//
//	queue --listen :8081 --redis-url redis://127.0.0.1:6379/0 --queue tickets --slot 100 \
//	      --secret "$SECRET" --admin-token "$TOKEN" --target-url http://127.0.0.1:9000/checkout
//
// Every flag also comes from the environment (QUEUE_REDIS_URL, ...).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"waitroom/cmd/internal/envflag"
	"waitroom/queue"
	"waitroom/queue/httpapi"
)

// devSecret is used by --dev when no secret is given, so the instances that
// `make run` starts agree on signatures. Never use it in production.
const devSecret = "waitroom-dev-secret-do-not-use-in-production"

const minSecretLen = 32

type globals struct {
	listen, redisURL, secret, adminToken, targetURL, instanceID string
	logLevel, logFormat, joinKey, trustedProxies, events        string
	redisCluster, dev, markRounds                               bool
	slot, joinRate, maxStreams, maxStreamsPerTicket             int
	session, ticketTTL, maxSession, period, shutdownTimeout     time.Duration
	strategy                                                    queue.Strategy
	queues                                                      queueList
	proxies                                                     []netip.Prefix
	ha                                                          sentinelFlags // sentinel.go
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	var g globals
	fs := flag.NewFlagSet("queue", flag.ContinueOnError)
	fs.StringVar(&g.listen, "listen", ":8081", "HTTP listen address")
	fs.StringVar(&g.redisURL, "redis-url", "redis://127.0.0.1:6379/0", "the store: MyRedis or Redis (redis://[:password@]host:port/db, rediss:// for TLS)")
	fs.BoolVar(&g.redisCluster, "redis-cluster", false, "the store is a Redis Cluster (seed nodes as redis://host:port?addr=host2:port2)")
	fs.Var(&g.queues, "queue", "a `queue` to serve, as name[:slot=N,session=D,ticket-ttl=D,period=D,strategy=S,target-url=URL,title=T,logo-url=URL,primary-color=#RGB,background-color=#RGB]; repeat for several (default tickets)")
	fs.IntVar(&g.slot, "slot", queue.DefaultSettings.Slot, "default cap of admitted users per queue (the store's value wins once set)")
	fs.DurationVar(&g.session, "session", queue.DefaultSettings.Session, "default session length of an admitted user without heartbeat")
	fs.DurationVar(&g.ticketTTL, "ticket-ttl", queue.DefaultSettings.TicketTTL, "default life of a waiting ticket without a status poll")
	fs.DurationVar(&g.maxSession, "max-session", queue.DefaultSettings.MaxSession, "default longest session from admission; heartbeats stop extending past it")
	fs.DurationVar(&g.period, "period", 200*time.Millisecond, "admission period")
	fs.StringVar(&g.joinKey, "join-key", "", "HMAC key the protected site signs user ids with (user, expires, sig); empty: anonymous joins only")
	fs.IntVar(&g.joinRate, "join-rate", 60, "joins per minute one client IP may make, shared by all instances through the store (0: no limit)")
	fs.StringVar(&g.trustedProxies, "trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed (empty: none)")
	fs.IntVar(&g.maxStreams, "max-streams", 10000, "event streams this instance serves at once; beyond: 429")
	fs.IntVar(&g.maxStreamsPerTicket, "max-streams-per-ticket", 2, "event streams one ticket may hold on this instance; beyond: 429")
	fs.StringVar(&g.events, "events", httpapi.EventsPush, "how event streams follow the queue: push (rounds published on the queue's shard channel, one subscription per queue) or poll (every stream read from the store on a schedule; to measure the difference)")
	fs.BoolVar(&g.markRounds, "mark-rounds", false, "diagnostics: mark each admission round in the store (wr:{q}:round:<instance>), two more commands per round")
	g.strategy = queue.Atomic
	fs.Var((*strategyFlag)(&g.strategy), "strategy", "admission `strategy`: naive, leader, optimistic or atomic")
	fs.StringVar(&g.secret, "secret", "", "HMAC secret shared by all instances, at least 32 bytes (required unless --dev)")
	fs.StringVar(&g.adminToken, "admin-token", "", "bearer token for PUT /v1/queues/{q}, at least 32 bytes unless --dev (empty: admin API off)")
	fs.StringVar(&g.targetURL, "target-url", "", "where admitted users are sent, with ?pass=...")
	fs.StringVar(&g.instanceID, "instance-id", "", "this instance's name in logs and leases (default hostname:port)")
	fs.BoolVar(&g.dev, "dev", false, "development mode: allow a missing or short secret and a short admin token")
	fs.StringVar(&g.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&g.logFormat, "log-format", "text", "text or json")
	fs.DurationVar(&g.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long requests in flight may take on SIGTERM")
	g.ha.register(fs) // sentinel.go
	if err := envflag.Parse(fs, "QUEUE", args, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "queue:", err)
		return 2
	}
	log, err := newLogger(g.logLevel, g.logFormat)
	if err != nil {
		fmt.Fprintln(os.Stderr, "queue:", err)
		return 2
	}
	if err := g.check(log); err != nil {
		fmt.Fprintln(os.Stderr, "queue:", err)
		return 2
	}
	if err := serve(g, log); err != nil {
		log.Error("exiting", "err", err)
		return 1
	}
	return 0
}

// strategyFlag is --strategy, checked as it is set.
type strategyFlag queue.Strategy

func (f *strategyFlag) String() string { return string(*f) }

func (f *strategyFlag) Set(v string) error {
	s, err := queue.ParseStrategy(v)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "queue: "))
	}
	*f = strategyFlag(s)
	return nil
}

// check validates the flags and fills the derived defaults.
func (g *globals) check(log *slog.Logger) error {
	switch {
	case len(g.secret) >= minSecretLen:
	case g.dev && g.secret == "":
		g.secret = devSecret
		log.Warn("dev mode: using the built-in secret; never do this in production")
	case g.dev:
		log.Warn("dev mode: the secret is shorter than 32 bytes")
	default:
		return fmt.Errorf("--secret (QUEUE_SECRET) must be at least %d bytes and the same on every instance; --dev allows a short one", minSecretLen)
	}
	switch {
	case g.adminToken == "" || len(g.adminToken) >= minSecretLen:
	case g.dev:
		log.Warn("dev mode: the admin token is shorter than 32 bytes")
	default:
		return fmt.Errorf("--admin-token (QUEUE_ADMIN_TOKEN) must be at least %d bytes; --dev allows a short one", minSecretLen)
	}
	if g.trustedProxies != "" {
		for _, c := range strings.Split(g.trustedProxies, ",") {
			p, err := netip.ParsePrefix(strings.TrimSpace(c))
			if err != nil {
				return fmt.Errorf("--trusted-proxies: %q is not a CIDR (like 10.0.0.0/8)", c)
			}
			g.proxies = append(g.proxies, p.Masked())
		}
	}
	if g.joinRate < 0 || g.maxStreams < 1 || g.maxStreamsPerTicket < 1 || g.maxSession <= 0 {
		return errors.New("--join-rate must be >= 0, --max-streams, --max-streams-per-ticket and --max-session positive")
	}
	if g.events != httpapi.EventsPush && g.events != httpapi.EventsPoll {
		return fmt.Errorf("--events %q: want %s or %s", g.events, httpapi.EventsPush, httpapi.EventsPoll)
	}
	if len(g.queues) == 0 {
		g.queues = queueList{{name: "tickets", set: map[string]bool{}}}
	}
	if g.instanceID == "" {
		host, _ := os.Hostname()
		_, port, err := net.SplitHostPort(g.listen)
		if err != nil {
			return fmt.Errorf("--listen %q: %v", g.listen, err)
		}
		g.instanceID = host + ":" + port
	}
	if g.slot < 1 || g.session <= 0 || g.ticketTTL <= 0 || g.period <= 0 {
		return errors.New("--slot, --session, --ticket-ttl and --period must be positive")
	}
	return nil
}

func newLogger(level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opt := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opt)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opt)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// redisLog routes go-redis's own messages (failed dials, mostly) to slog,
// at most one every few seconds so an outage does not flood the log.
type redisLog struct {
	log  *slog.Logger
	last atomic.Int64
}

func (r *redisLog) Printf(_ context.Context, format string, v ...any) {
	now := time.Now().UnixNano()
	if last := r.last.Load(); now-last < int64(5*time.Second) || !r.last.CompareAndSwap(last, now) {
		return
	}
	r.log.Warn("store client", "detail", fmt.Sprintf(format, v...))
}

func newStore(g globals) (redis.UniversalClient, error) {
	const timeout = time.Second
	if g.ha.masterName != "" {
		return g.ha.newFailoverClient(g.redisURL, timeout) // sentinel.go
	}
	if g.redisCluster {
		o, err := redis.ParseClusterURL(g.redisURL)
		if err != nil {
			return nil, fmt.Errorf("--redis-url: %v", err)
		}
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = timeout, timeout, timeout, timeout
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(g.redisURL)
	if err != nil {
		return nil, fmt.Errorf("--redis-url: %v", err)
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = timeout, timeout, timeout, timeout
	return redis.NewClient(o), nil
}

// serve runs the instance until SIGINT or SIGTERM.
func serve(g globals, log *slog.Logger) error {
	log = log.With("instance", g.instanceID)
	redis.SetLogger(&redisLog{log: log})
	rdb, err := newStore(g)
	if err != nil {
		return err
	}
	defer rdb.Close()

	var api *httpapi.Server
	var engines []*queue.Engine
	var rooms []httpapi.Queue
	for _, spec := range g.queues {
		spec := spec.withDefaults(g)
		name := spec.name
		eng, err := queue.New(rdb, name, queue.Options{
			Strategy:   spec.strategy,
			Period:     spec.period,
			InstanceID: g.instanceID,
			Secret:     []byte(g.secret),
			Defaults: queue.Settings{Slot: spec.slot, Session: spec.session, TicketTTL: spec.ticketTTL,
				MaxSession: spec.maxSession, Branding: spec.branding},
			Logger:       log,
			MarkRounds:   g.markRounds,
			NoEvents:     g.events == httpapi.EventsPoll,
			WaitReplicas: g.ha.waitReplicas, WaitTimeout: g.ha.waitTimeout,
			Hooks: queue.Hooks{OnAdmit: func([]queue.Admission) {
				if api != nil {
					api.Notify(name)
				}
			}},
		})
		if err != nil {
			return err
		}
		engines = append(engines, eng)
		rate := spec.joinRate
		if rate == 0 {
			rate = -1 // httpapi: 0 would mean "the default"
		}
		rooms = append(rooms, httpapi.Queue{Engine: eng, TargetURL: spec.targetURL, JoinKey: []byte(spec.joinKey),
			JoinRate: rate})
		log.Info("queue", "queue", name, "strategy", spec.strategy, "slot", spec.slot, "session", spec.session,
			"ticket_ttl", spec.ticketTTL, "period", spec.period, "target_url", spec.targetURL)
	}
	if err := probeStore(rdb, log); err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Queues created through the admin API get the global flags' defaults.
	runtime := &httpapi.Runtime{Period: g.period, NewEngine: func(name string, spec queue.Spec) (*queue.Engine, error) {
		st := spec.Strategy
		if st == "" {
			st = g.strategy
		}
		return queue.New(rdb, name, queue.Options{
			Strategy: st, Period: g.period, InstanceID: g.instanceID, Secret: []byte(g.secret),
			Defaults: queue.Settings{Slot: g.slot, Session: g.session, TicketTTL: g.ticketTTL, MaxSession: g.maxSession},
			Logger:   log, MarkRounds: g.markRounds, NoEvents: g.events == httpapi.EventsPoll,
			Hooks: queue.Hooks{OnAdmit: func([]queue.Admission) {
				if api != nil {
					api.Notify(name)
				}
			}},
		})
	}}
	api, err = httpapi.New(httpapi.Config{Queues: rooms, Store: rdb, AdminToken: g.adminToken, Logger: log, Registry: reg,
		MaxStreams: g.maxStreams, MaxStreamsPerTicket: g.maxStreamsPerTicket, TrustedProxies: g.proxies,
		Runtime: runtime, Events: g.events})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", g.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      15 * time.Second, // event streams lift it for themselves
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	loops, stopLoops := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, eng := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := eng.Run(loops); err != nil {
				log.Error("admission loop stopped", "queue", eng.Name(), "err", err)
			}
		}()
	}

	wg.Add(1)
	go func() {
		defer wg.Done()
		api.Run(loops) // the queues created at run time
	}()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "store", redactURL(g.redisURL),
		"queues", g.queues.String(), "admin_api", g.adminToken != "")

	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	var runErr error
	select {
	case s := <-sig:
		log.Info("shutting down", "signal", s.String())
	case runErr = <-served:
	}
	// Stop admitting first, then let requests in flight finish. A second
	// signal stops at once.
	go func() {
		<-sig
		log.Warn("second signal: exiting now")
		os.Exit(1)
	}()
	api.Drain()
	stopLoops()
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), g.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("requests still running at the shutdown timeout", "err", err)
	}
	if runErr != nil && !errors.Is(runErr, http.ErrServerClosed) {
		return runErr
	}
	log.Info("stopped")
	return nil
}

// probeStore checks the store once at start. An unreachable store is only a
// warning (the instance serves 503s and recovers when it appears); a store
// that answers but lacks a command the engine uses (sorted sets, hashes, and
// EVAL: every step of a ticket is a script, in every strategy) cannot work at
// all. The probe only reads a key that does not exist.
func probeStore(rdb redis.UniversalClient, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		log.Warn("store unreachable; serving 503 until it answers", "err", err)
		return nil
	}
	const key = "wr:{probe}:none"
	checks := []struct {
		what string
		err  error
	}{
		{"sorted sets (ZCARD)", rdb.ZCard(ctx, key).Err()},
		{"hashes (HGETALL)", rdb.HGetAll(ctx, key).Err()},
		{"EVAL, which every step of a ticket needs", rdb.Eval(ctx, "return redis.call('TIME')", nil).Err()},
	}
	for _, c := range checks {
		var re redis.Error
		if errors.As(c.err, &re) && strings.Contains(strings.ToLower(re.Error()), "unknown command") {
			return fmt.Errorf("the store does not serve %s: %v", c.what, c.err)
		}
	}
	return nil
}

// redactURL hides a password in a redis URL for the logs.
func redactURL(s string) string {
	if i := strings.Index(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "***" + s[i:]
		}
	}
	return s
}
