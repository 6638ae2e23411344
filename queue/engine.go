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
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	ErrClosed      = errors.New("queue: the queue is closed") // 409
)

// QueueState is a queue's state. An admin sets open, paused or closed;
// scheduled is what an open or paused queue is before its OpensAt, and a
// queue past its ClosesAt is closed.
type QueueState string

const (
	QueueOpen      QueueState = "open"      // admitting
	QueuePaused    QueueState = "paused"    // nobody admitted; everyone keeps their place and may still join
	QueueClosed    QueueState = "closed"    // sold out / over: no joins, waiting tickets end with reason closed
	QueueScheduled QueueState = "scheduled" // before OpensAt: joins go to the pre-queue
)

// Settings are stored in the store (hash wr:{q}:settings) so every instance
// uses the same values; SetSettings changes them for all instances, which pick
// them up at their next round.
type Settings struct {
	Slot      int           // cap of the active set
	Session   time.Duration // how long an admitted user may stay without a heartbeat
	TicketTTL time.Duration // how long a waiting ticket lives without a status poll
	// MaxSession bounds a session from its admission: heartbeats stop
	// extending it past admission + MaxSession (default 30 minutes).
	MaxSession time.Duration

	// Issue 19: the queue's state and schedule, and what its page shows.
	State    QueueState // QueueOpen (default), QueuePaused or QueueClosed as an admin set it
	Message  string     // the site's message, shown on the page (why paused, sold out, ...)
	OpensAt  time.Time  // zero: none; before it joins go to the pre-queue, at it the pre-queue is drawn
	ClosesAt time.Time  // zero: none; from it the queue is closed
	PowBits  int        // proof of work at join: leading zero bits of SHA-256; 0 = off
	Branding Branding   // the page's title, logo and colours (branding.go)
}

// DefaultSettings are used when neither the options nor the store say otherwise.
var DefaultSettings = Settings{Slot: 100, Session: 5 * time.Minute, TicketTTL: 5 * time.Minute,
	MaxSession: 30 * time.Minute}

func (s Settings) validate() error {
	if s.Slot < 1 || s.Session < time.Millisecond || s.TicketTTL < time.Millisecond || s.MaxSession < time.Millisecond {
		return fmt.Errorf("%w: slot %d, session %v, ticket ttl %v, max session %v", ErrBadSettings,
			s.Slot, s.Session, s.TicketTTL, s.MaxSession)
	}
	if s.PowBits < 0 || s.PowBits > MaxPowBits {
		return fmt.Errorf("%w: pow bits %d (want 0-%d)", ErrBadSettings, s.PowBits, MaxPowBits)
	}
	switch s.State {
	case "", QueueOpen, QueuePaused, QueueClosed:
	default:
		return fmt.Errorf("%w: state %q (want open, paused or closed)", ErrBadSettings, s.State)
	}
	if err := s.Branding.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSettings, err)
	}
	return nil
}

// SettingsPatch changes some settings; nil fields keep the store's value
// (SetSettingFields writes only the fields given, so two admins changing
// different fields at once do not undo each other).
type SettingsPatch struct {
	Slot       *int
	Session    *time.Duration
	TicketTTL  *time.Duration
	MaxSession *time.Duration
	State      *QueueState
	Message    *string
	OpensAt    *time.Time // the zero time removes the schedule
	ClosesAt   *time.Time // the zero time removes it
	PowBits    *int
	Branding   BrandingPatch
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
	// Clock is this instance's own clock. No deadline depends on it (the
	// store's TIME decides every deadline and reclaim, so instances with
	// skewed clocks agree); it only ages the local admission-rate cache.
	Clock Clock
	// MarkRounds makes every round write wr:{q}:round:<instance> when it
	// starts and delete it when it ends (two more commands per round), so a
	// crash test can tell from the store whether a kill landed mid-round.
	MarkRounds bool
	// WaitReplicas, when above 0, follows every script (join, admission
	// round...) with WAIT WaitReplicas WaitTimeout on the same connection, so
	// that a write acknowledged to a user is on a replica before the answer
	// leaves (queue/durable.go). For a store replicated under Sentinel.
	WaitReplicas int
	WaitTimeout  time.Duration
	// NoEvents turns off publishing round events on wr:{q}:events
	// (events.go); pages then learn of admissions only by polling. It exists
	// to measure the difference (cmd/queue --events poll).
	NoEvents bool
	// DrawRand is where the seed of a scheduled queue's draw comes from
	// (default crypto/rand); tests give a seeded source.
	DrawRand io.Reader
	Logger   *slog.Logger
	Hooks    Hooks
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
	// Waited is how long the user stood in line, by the store's clock: from
	// the join (for a pre-queue ticket, from the draw) to this admission.
	// Negative when unknown (a ticket without a join time).
	Waited time.Duration
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
	setAt    time.Time // when settings were read (CurrentSettings)
	rate     rateCache

	trigger chan struct{}
	dead    atomic.Bool
	c       counters
	waits   waitHist     // join to admission, of this instance's admissions
	failing atomic.Int64 // consecutive failed rounds
	lastErr atomic.Value // error of the latest failed round (errBox)
}

type errBox struct{ err error }

// failingRounds is how many rounds in a row must fail before Failing reports it.
const failingRounds = 3

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
	if d.MaxSession == 0 {
		d.MaxSession = DefaultSettings.MaxSession
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
	if opt.DrawRand == nil {
		opt.DrawRand = crand.Reader
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
// (HSETNX per field, so the first instance wins) and loads them. Every round
// and every ticket operation does the same for a field the store lost, so an
// instance re-establishes the settings whenever the store restarts empty.
func (e *Engine) Init(ctx context.Context) error {
	if err := e.initSettings(ctx); err != nil {
		return err
	}
	_, err := e.Settings(ctx)
	return err
}

func (e *Engine) initSettings(ctx context.Context) error {
	d := e.opt.Defaults
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, e.k.settings, "slot", d.Slot)
		p.HSetNX(ctx, e.k.settings, "session_ms", d.Session.Milliseconds())
		p.HSetNX(ctx, e.k.settings, "ticket_ttl_ms", d.TicketTTL.Milliseconds())
		p.HSetNX(ctx, e.k.settings, "max_session_ms", d.MaxSession.Milliseconds())
		for i, v := range d.Branding.fields() {
			if *v != "" {
				p.HSetNX(ctx, e.k.settings, brandFields[i], *v)
			}
		}
		return nil
	})
	return err
}

// Settings reads the queue's settings from the store and caches them. Fields
// the store lacks (it restarted empty) are written back from the defaults.
func (e *Engine) Settings(ctx context.Context) (Settings, error) {
	m, err := e.rdb.HGetAll(ctx, e.k.settings).Result()
	if err != nil {
		return e.cachedSettings(), err
	}
	s, complete := e.parseSettings(m)
	if !complete {
		if err := e.initSettings(ctx); err != nil {
			return e.cachedSettings(), err
		}
		if m, err = e.rdb.HGetAll(ctx, e.k.settings).Result(); err != nil {
			return e.cachedSettings(), err
		}
		s, _ = e.parseSettings(m)
	}
	e.setCached(s)
	return s, nil
}

func (e *Engine) parseSettings(m map[string]string) (Settings, bool) {
	s := e.opt.Defaults
	complete := true
	ms := func(f string, d *time.Duration) {
		if v, err := strconv.ParseInt(m[f], 10, 64); err == nil {
			*d = time.Duration(v) * time.Millisecond
		} else {
			complete = false
		}
	}
	if v, err := strconv.Atoi(m["slot"]); err == nil {
		s.Slot = v
	} else {
		complete = false
	}
	ms("session_ms", &s.Session)
	ms("ticket_ttl_ms", &s.TicketTTL)
	ms("max_session_ms", &s.MaxSession)
	s.State = QueueOpen
	if v := m["state"]; v != "" {
		s.State = QueueState(v)
	}
	s.Message = m["message"]
	s.PowBits, _ = strconv.Atoi(m["pow_bits"])
	s.Branding = parseBranding(m, s.Branding)
	s.OpensAt, s.ClosesAt = time.Time{}, time.Time{}
	if v, err := strconv.ParseInt(m["opens_at_ms"], 10, 64); err == nil && v > 0 {
		s.OpensAt = time.UnixMilli(v)
	}
	if v, err := strconv.ParseInt(m["closes_at_ms"], 10, 64); err == nil && v > 0 {
		s.ClosesAt = time.UnixMilli(v)
	}
	return s, complete
}

// SetSettings stores new settings for every instance of the queue. Each
// instance uses them from its next round (within one period). A zero
// MaxSession keeps the stored one.
func (e *Engine) SetSettings(ctx context.Context, s Settings) error {
	p := SettingsPatch{Slot: &s.Slot, Session: &s.Session, TicketTTL: &s.TicketTTL}
	if s.MaxSession != 0 {
		p.MaxSession = &s.MaxSession
	}
	_, err := e.SetSettingFields(ctx, p)
	return err
}

// SetSettingFields writes only the fields the patch gives (HSET of those
// fields), so a concurrent change of another field survives, and returns the
// settings as the store then holds them.
func (e *Engine) SetSettingFields(ctx context.Context, p SettingsPatch) (Settings, error) {
	var args []any
	check := e.opt.Defaults // stands in for the fields not given while validating
	if p.Slot != nil {
		check.Slot = *p.Slot
		args = append(args, "slot", *p.Slot)
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		dst  *time.Duration
	}{{"session_ms", p.Session, &check.Session}, {"ticket_ttl_ms", p.TicketTTL, &check.TicketTTL},
		{"max_session_ms", p.MaxSession, &check.MaxSession}} {
		if f.v != nil {
			*f.dst = *f.v
			args = append(args, f.name, f.v.Milliseconds())
		}
	}
	if p.State != nil {
		check.State = *p.State
		args = append(args, "state", string(*p.State))
	}
	if p.Message != nil {
		args = append(args, "message", *p.Message)
	}
	if p.PowBits != nil {
		check.PowBits = *p.PowBits
		args = append(args, "pow_bits", *p.PowBits)
	}
	check.Branding = p.Branding.apply(check.Branding)
	args = p.Branding.hset(args)
	var del []string
	at := func(field string, t *time.Time) {
		switch {
		case t == nil:
		case t.IsZero():
			del = append(del, field)
		default:
			args = append(args, field, t.UnixMilli())
		}
	}
	at("opens_at_ms", p.OpensAt)
	at("closes_at_ms", p.ClosesAt)
	if p.OpensAt != nil {
		// A new opening gets a new draw, with a seed nobody saw before.
		seed, err := e.drawSeed()
		if err != nil {
			return Settings{}, err
		}
		args = append(args, "draw_seed", seed)
		del = append(del, "drawn_ms")
	}
	if err := check.validate(); err != nil {
		return Settings{}, err
	}
	if len(args) == 0 && len(del) == 0 {
		return e.Settings(ctx)
	}
	if err := e.initSettings(ctx); err != nil {
		return Settings{}, err
	}
	_, err := e.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if len(del) > 0 {
			p.HDel(ctx, e.k.settings, del...)
		}
		if len(args) > 0 {
			p.HSet(ctx, e.k.settings, args...)
		}
		return nil
	})
	if err != nil {
		return Settings{}, err
	}
	e.Trigger() // a queue opened, or its opening moved to the past: draw and admit now
	e.publish(ctx, Event{Settings: true})
	return e.Settings(ctx)
}

// drawSeed returns two 31-bit numbers "a:b" for the draw's generator.
func (e *Engine) drawSeed() (string, error) {
	var b [8]byte
	if _, err := io.ReadFull(e.opt.DrawRand, b[:]); err != nil {
		return "", fmt.Errorf("queue: draw seed: %w", err)
	}
	a := binary.LittleEndian.Uint32(b[:4]) & 0x7fffffff
	c := binary.LittleEndian.Uint32(b[4:]) & 0x7fffffff
	return strconv.FormatUint(uint64(a), 10) + ":" + strconv.FormatUint(uint64(c), 10), nil
}

// CurrentSettings are the queue's settings as read at most one period ago
// (what the page is told: message, schedule), read again when older.
func (e *Engine) CurrentSettings(ctx context.Context) Settings {
	e.mu.Lock()
	s, at := e.settings, e.setAt
	e.mu.Unlock()
	if !at.IsZero() && time.Since(at) < e.opt.Period {
		return s
	}
	s, _ = e.Settings(ctx) // on error: the cached value
	return s
}

func (e *Engine) setCached(s Settings) {
	e.mu.Lock()
	e.settings = s
	e.setAt = time.Now()
	e.mu.Unlock()
}

func (e *Engine) cachedSettings() Settings {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.settings
}

// Failing returns the error of the latest round when the last few rounds in a
// row failed (the store refuses them, or cannot be reached), nil otherwise.
// /readyz reports it.
func (e *Engine) Failing() error {
	if e.failing.Load() < failingRounds {
		return nil
	}
	if b, ok := e.lastErr.Load().(errBox); ok {
		return b.err
	}
	return errors.New("queue: admission rounds failing")
}
