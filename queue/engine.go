// Package queue is the waiting room's admission engine.
//
// Users join a queue and wait in a sorted set ordered by arrival; every
// instance of the service runs an admission loop that moves users from the
// front of the queue into the active set, never letting the active set grow
// past the slot. The engine talks to any Redis-compatible store (MyRedis, real
// Redis, Redis Cluster) through go-redis and keeps no state of its own, so any
// number of instances can serve one queue.
package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors returned by the engine. The HTTP layer maps them to statuses.
var (
	ErrForged      = errors.New("queue: forged or malformed token") // 401
	ErrPassUsed    = errors.New("queue: pass already used")         // 409
	ErrPassExpired = errors.New("queue: pass expired")              // 410
	ErrNotAdmitted = errors.New("queue: ticket is not admitted")    // 409 / 410
	ErrKilled      = errors.New("queue: instance killed by a fail point")
	ErrBadSettings = errors.New("queue: invalid settings")
)

// Settings are stored in the store (hash wr:{q}:settings) so every instance
// uses the same values; SetSettings changes them for all instances, which pick
// them up at their next round.
type Settings struct {
	Slot      int           // cap of the active set
	Session   time.Duration // how long an admitted user may stay without a heartbeat
	TicketTTL time.Duration // how long a waiting ticket lives without a status poll
}

// DefaultSettings are used when neither the options nor the store say otherwise.
var DefaultSettings = Settings{Slot: 100, Session: 5 * time.Minute, TicketTTL: 5 * time.Minute}

func (s Settings) validate() error {
	if s.Slot < 1 || s.Session < time.Millisecond || s.TicketTTL < time.Millisecond {
		return fmt.Errorf("%w: slot %d, session %v, ticket ttl %v", ErrBadSettings, s.Slot, s.Session, s.TicketTTL)
	}
	return nil
}

// Options configure one engine (one queue on one instance).
type Options struct {
	Strategy   Strategy      // default Atomic
	Period     time.Duration // admission period, default 200ms
	InstanceID string        // default hostname-pid
	Secret     []byte        // shared by all instances; required
	Defaults   Settings      // written to the store only if it has none; zero fields use DefaultSettings
	// LeaseMargin is added to Period for the leader lease (default Period/2).
	LeaseMargin time.Duration
	Clock       Clock // default the system clock
	Logger      *slog.Logger
	Hooks       Hooks
}

// Hooks let a test or the bench watch and disturb an engine.
type Hooks struct {
	// OnAdmit is called after each round with the admissions the round confirmed.
	OnAdmit func([]Admission)
	// FailPoint is called at named points inside a round: "round:start"
	// before every round, and the points listed in each strategy's file. Returning true makes the instance die there: the
	// round stops without sending another command, Round and Run return
	// ErrKilled, and the engine stays dead.
	FailPoint func(point string) bool
}

// Admission is one user let in.
type Admission struct {
	Ticket   string
	Arrival  int64     // arrival number (the waiting-set score)
	Number   int64     // admission number from the store's counter (admission order)
	Deadline time.Time // session deadline
	Instance string
}

// Engine is the admission engine of one queue as seen from one instance.
// It is safe for concurrent use.
type Engine struct {
	rdb      redis.UniversalClient
	name     string
	k        keys
	opt      Options
	strategy strategy
	clock    Clock
	log      *slog.Logger
	sig      signer

	mu       sync.Mutex
	settings Settings
	rate     rateCache

	trigger chan struct{}
	dead    atomic.Bool
	c       counters
}

var queueName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// New returns an engine for queue name. It does not touch the store; call
// Init (Run calls it) before serving.
func New(rdb redis.UniversalClient, name string, opt Options) (*Engine, error) {
	if !queueName.MatchString(name) {
		return nil, fmt.Errorf("queue: bad queue name %q (want 1-64 of A-Z a-z 0-9 _ . -)", name)
	}
	if len(opt.Secret) == 0 {
		return nil, errors.New("queue: a secret shared by all instances is required")
	}
	if opt.Strategy == "" {
		opt.Strategy = Atomic
	}
	st, err := newStrategy(opt.Strategy)
	if err != nil {
		return nil, err
	}
	if opt.Period <= 0 {
		opt.Period = 200 * time.Millisecond
	}
	if opt.LeaseMargin <= 0 {
		opt.LeaseMargin = opt.Period / 2
	}
	if opt.InstanceID == "" {
		host, _ := os.Hostname()
		opt.InstanceID = host + "-" + strconv.Itoa(os.Getpid())
	}
	d := opt.Defaults
	if d.Slot == 0 {
		d.Slot = DefaultSettings.Slot
	}
	if d.Session == 0 {
		d.Session = DefaultSettings.Session
	}
	if d.TicketTTL == 0 {
		d.TicketTTL = DefaultSettings.TicketTTL
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	opt.Defaults = d
	if opt.Clock == nil {
		opt.Clock = SystemClock
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	return &Engine{
		rdb:      rdb,
		name:     name,
		k:        newKeys(name),
		opt:      opt,
		strategy: st,
		clock:    opt.Clock,
		log:      opt.Logger.With("queue", name, "instance", opt.InstanceID),
		sig:      signer{secret: opt.Secret, queue: name},
		settings: d,
		trigger:  make(chan struct{}, 1),
	}, nil
}

// Name returns the queue name.
func (e *Engine) Name() string { return e.name }

// Strategy returns the admission strategy.
func (e *Engine) Strategy() Strategy { return e.opt.Strategy }

// InstanceID returns this instance's id.
func (e *Engine) InstanceID() string { return e.opt.InstanceID }

// Init writes the default settings to the store unless it already has them
// (HSETNX per field, so the first instance wins) and loads them.
func (e *Engine) Init(ctx context.Context) error {
	d := e.opt.Defaults
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, e.k.settings, "slot", d.Slot)
		p.HSetNX(ctx, e.k.settings, "session_ms", d.Session.Milliseconds())
		p.HSetNX(ctx, e.k.settings, "ticket_ttl_ms", d.TicketTTL.Milliseconds())
		return nil
	})
	if err != nil {
		return err
	}
	_, err = e.Settings(ctx)
	return err
}

// Settings reads the queue's settings from the store and caches them.
func (e *Engine) Settings(ctx context.Context) (Settings, error) {
	m, err := e.rdb.HGetAll(ctx, e.k.settings).Result()
	if err != nil {
		return e.cachedSettings(), err
	}
	s := e.opt.Defaults
	if v, err := strconv.Atoi(m["slot"]); err == nil {
		s.Slot = v
	}
	if v, err := strconv.ParseInt(m["session_ms"], 10, 64); err == nil {
		s.Session = time.Duration(v) * time.Millisecond
	}
	if v, err := strconv.ParseInt(m["ticket_ttl_ms"], 10, 64); err == nil {
		s.TicketTTL = time.Duration(v) * time.Millisecond
	}
	e.mu.Lock()
	e.settings = s
	e.mu.Unlock()
	return s, nil
}

// SetSettings stores new settings for every instance of the queue. Each
// instance uses them from its next round (within one period).
func (e *Engine) SetSettings(ctx context.Context, s Settings) error {
	if err := s.validate(); err != nil {
		return err
	}
	err := e.rdb.HSet(ctx, e.k.settings,
		"slot", s.Slot,
		"session_ms", s.Session.Milliseconds(),
		"ticket_ttl_ms", s.TicketTTL.Milliseconds()).Err()
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.settings = s
	e.mu.Unlock()
	return nil
}

func (e *Engine) cachedSettings() Settings {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.settings
}

func (e *Engine) nowMs() int64 { return e.clock.Now().UnixMilli() }
