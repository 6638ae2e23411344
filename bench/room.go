package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A room is a waiting room under test: a store and queue instances (real
// cmd/queue processes the bench started, or URLs it was given), driven through
// the HTTP API by simulated users while an observer reads the store.

// roomSpec is how the bench starts the instances of one room.
type roomSpec struct {
	Queue     string
	Strategy  string
	Instances int
	Slot      int
	Session   time.Duration
	TicketTTL time.Duration
	Period    time.Duration
	Events    string // --events of the instances; "" leaves their default
	// MaxStreams is --max-streams of each instance; 0 leaves the default.
	MaxStreams int
}

type room struct {
	spec  roomSpec
	store *Target // nil when only queue URLs are known
	procs []*Proc
	urls  []string
	hc    *http.Client
}

// benchSecret is the HMAC secret the bench's instances share.
const benchSecret = "bench-secret-not-for-production-0123456789"

// openRoom starts spec.Instances queue processes against store, or uses urls.
func (e *Env) openRoom(ctx context.Context, store *Target, urls []string, spec roomSpec) (*room, error) {
	r := &room{spec: spec, store: store, hc: &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 2048, MaxIdleConnsPerHost: 512, IdleConnTimeout: 30 * time.Second},
	}}
	if len(urls) > 0 {
		for _, u := range urls {
			r.urls = append(r.urls, strings.TrimRight(u, "/"))
		}
		return r, nil
	}
	bin, err := e.Binary("queue")
	if err != nil {
		return nil, err
	}
	for i := range spec.Instances {
		port, err := FreePort()
		if err != nil {
			r.close()
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		var extra []string
		if spec.Events != "" {
			extra = append(extra, "--events", spec.Events)
		}
		if spec.MaxStreams > 0 {
			extra = append(extra, "--max-streams", strconv.Itoa(spec.MaxStreams))
		}
		p, err := e.start(fmt.Sprintf("queue-%s-%d", spec.Strategy, i), addr, bin, append(extra,
			"--listen", addr, "--redis-url", store.URL, "--queue", spec.Queue,
			"--slot", strconv.Itoa(spec.Slot), "--session", spec.Session.String(),
			"--ticket-ttl", spec.TicketTTL.String(), "--period", spec.Period.String(),
			"--strategy", spec.Strategy, "--secret", benchSecret,
			// The simulated users all come from one address and carry user
			// ids: no per-IP limit, and ids signed as a protected site would.
			"--join-rate", "0", "--join-key", benchSecret,
			"--instance-id", "i"+strconv.Itoa(i), "--log-level", "warn")...)
		if err != nil {
			r.close()
			return nil, err
		}
		r.procs = append(r.procs, p)
		r.urls = append(r.urls, "http://"+addr)
	}
	for i, p := range r.procs {
		if err := p.waitHTTP(ctx, r.urls[i]+"/readyz"); err != nil {
			r.close()
			return nil, err
		}
	}
	return r, nil
}

func (r *room) close() {
	var wg sync.WaitGroup
	for _, p := range r.procs {
		wg.Go(p.Stop)
	}
	wg.Wait()
	r.hc.CloseIdleConnections()
}

// key is a key of the room's queue in the store (layout of queue/keys.go).
func (r *room) key(name string) string { return "wr:{" + r.spec.Queue + "}:" + name }

// pick returns a random instance, as a load balancer without stickiness would.
func (r *room) pick() string { return r.urls[rand.IntN(len(r.urls))] }

// apiReply is every field the bench reads from the API's answers.
type apiReply struct {
	State         string   `json:"state"`
	Ticket        string   `json:"ticket"`
	Position      int64    `json:"position"`
	ETASeconds    *float64 `json:"eta_seconds"`
	PollAfterMs   int64    `json:"poll_after_ms"`
	Pass          string   `json:"pass"`
	ExpiresAt     string   `json:"expires_at"`
	Error         string   `json:"error"`
	Active        int64    `json:"active"`
	Waiting       int64    `json:"waiting"`
	AdmittedTotal int64    `json:"admitted_total"`
	Strategy      string   `json:"strategy"`
	Slot          int      `json:"slot"`
}

// call sends one request and decodes the JSON answer.
func (r *room) call(ctx context.Context, method, url, bearer string, body any) (int, apiReply, time.Duration, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, apiReply{}, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	t0 := time.Now()
	resp, err := r.hc.Do(req)
	if err != nil {
		return 0, apiReply{}, time.Since(t0), err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	lat := time.Since(t0)
	if err != nil {
		return resp.StatusCode, apiReply{}, lat, err
	}
	var a apiReply
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &a); err != nil {
			return resp.StatusCode, a, lat, err
		}
	}
	return resp.StatusCode, a, lat, nil
}

func (r *room) path(base, op string) string {
	if op == "" {
		return base + "/v1/queues/" + r.spec.Queue
	}
	return base + "/v1/queues/" + r.spec.Queue + "/" + op
}

// info asks one instance for the queue's figures.
func (r *room) info(ctx context.Context) (apiReply, error) {
	code, a, _, err := r.call(ctx, "GET", r.path(r.urls[0], ""), "", nil)
	if err == nil && code != 200 {
		err = fmt.Errorf("GET %s: status %d %s", r.path(r.urls[0], ""), code, a.Error)
	}
	return a, err
}

// ---- simulated users ----

// stage is a stretch of constant arrival rate.
type stage struct {
	Rate float64       `json:"users_per_sec"`
	For  time.Duration `json:"duration_ns"`
}

// userSpec is how simulated users behave.
type userSpec struct {
	Poll              bool          // poll status until admitted (else join only)
	PollCap           time.Duration // poll at least this often (0: as told by poll_after_ms)
	HoldMin, HoldMax  time.Duration // time an admitted user stays before releasing
	Abandon           float64       // share of admitted users who never release
	ReleaseAtDeadline bool          // release exactly when the session ends (event-driven)
}

// userResult is one user's story.
type userResult struct {
	Joined       time.Time // join answered
	ETA          *float64  // eta_seconds shown at join
	JoinPosition int64
	Seen         time.Time // first answer saying admitted (zero: never)
	AdmittedAt   time.Time // expires_at - session: when the store admitted them
	ExpiresAt    time.Time
	Released     time.Time // release sent (zero: never)
	Abandoned    bool
	Lost         string // set when the user was told expired without having seen admission
	Errors       int
	JoinFailed   bool
}

// simResult is what a user simulation gathered.
type simResult struct {
	Start      time.Time
	Users      []*userResult
	JoinLat    []float64 // ms
	StatusLat  []float64 // ms
	Requests   int
	Errors     int
	FirstError string
	Active     []sample // observer: active set ZCARD
	Waiting    []sample // waiting set ZCARD, every 100 ms
	Admitted   []sample // store admission counter, every 100 ms
	Reads      int      // observer reads
	TimedOut   int      // users still waiting when the drain ended
}

type sample struct {
	T float64 // seconds since start
	N int64
}

type simCounters struct {
	mu         sync.Mutex
	joinLat    []float64
	statusLat  []float64
	requests   int
	errors     int
	firstError string
	log        []request // every request, when keepLog is set
	keepLog    bool
}

// request is one API call as the user saw it.
type request struct {
	Sent time.Time
	Ms   float64
	OK   bool
}

func (c *simCounters) note(kind string, lat time.Duration, ok bool, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	ms := float64(lat.Microseconds()) / 1000
	if c.keepLog {
		c.log = append(c.log, request{Sent: time.Now().Add(-lat), Ms: ms, OK: ok})
	}
	switch kind {
	case "join":
		c.joinLat = append(c.joinLat, ms)
	case "status":
		c.statusLat = append(c.statusLat, ms)
	}
	if !ok {
		c.errors++
		if c.firstError == "" {
			c.firstError = what
		}
	}
}

// simulate runs users arriving by stages against the room, then waits up to
// drain for every user to finish. onProgress is called once per finished user.
func (r *room) simulate(ctx context.Context, stages []stage, us userSpec, drain time.Duration, onProgress func()) *simResult {
	res := &simResult{Start: time.Now()}
	var cnt simCounters
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Observers: the active set every millisecond, the rest every 100 ms.
	var obsWG sync.WaitGroup
	obsCtx, stopObs := context.WithCancel(ctx)
	if r.store != nil {
		obs := r.store.Client(2)
		defer obs.Close()
		obsWG.Go(func() { res.Active, res.Reads = r.observeActive(obsCtx, obs, res.Start) })
		obsWG.Go(func() { res.Waiting, res.Admitted = r.observeQueue(obsCtx, obs, res.Start) })
	} else {
		obsWG.Go(func() { res.Active, res.Waiting, res.Admitted, res.Reads = r.observeInfo(obsCtx, res.Start) })
	}

	var users sync.WaitGroup
	arrivals(ctx, res.Start, stages, func(n int) {
		u := &userResult{}
		res.Users = append(res.Users, u)
		id := "u" + strconv.Itoa(n)
		users.Go(func() {
			r.user(runCtx, id, u, us, &cnt)
			if onProgress != nil {
				onProgress()
			}
		})
	})
	done := make(chan struct{})
	go func() { users.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drain):
		cancel()
		<-done
	case <-ctx.Done():
		<-done
	}
	stopObs()
	obsWG.Wait()
	res.JoinLat, res.StatusLat = cnt.joinLat, cnt.statusLat
	res.Requests, res.Errors, res.FirstError = cnt.requests, cnt.errors, cnt.firstError
	for _, u := range res.Users {
		if !u.JoinFailed && u.Seen.IsZero() && u.Lost == "" && us.Poll {
			res.TimedOut++
		}
	}
	return res
}

// arrivals calls spawn(n) for the n-th arrival, at the stages' rates from
// start, on the calling goroutine, until the stages end or ctx is done.
func arrivals(ctx context.Context, start time.Time, stages []stage, spawn func(n int)) {
	at := start
	n := 0
	for _, st := range stages {
		gap := time.Duration(float64(time.Second) / st.Rate)
		end := at.Add(st.For)
		for ; at.Before(end); at = at.Add(gap) {
			if d := time.Until(at); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				return
			}
			spawn(n)
			n++
		}
	}
}

// user is one simulated person: join, poll until admitted, hold, release.
func (r *room) user(ctx context.Context, id string, u *userResult, us userSpec, cnt *simCounters) {
	code, a, lat, err := r.call(ctx, "POST", r.path(r.pick(), "join"), "", signedUser(id))
	ok := err == nil && code == 200
	cnt.note("join", lat, ok || ctx.Err() != nil, describe("join", code, a, err))
	if !ok {
		u.JoinFailed = true
		u.Errors++
		return
	}
	u.Joined = time.Now()
	u.ETA = a.ETASeconds
	u.JoinPosition = a.Position
	if !us.Poll {
		return
	}
	r.follow(ctx, a.Ticket, a, u, us, cnt)
}

// follow is the rest of a user's story once they hold ticket: poll until
// admitted (a is the last answer), hold, release.
func (r *room) follow(ctx context.Context, ticket string, a apiReply, u *userResult, us userSpec, cnt *simCounters) {
	var (
		code int
		lat  time.Duration
		err  error
		ok   bool
	)
	for a.State != "admitted" {
		wait := time.Duration(a.PollAfterMs) * time.Millisecond
		if us.PollCap > 0 && (wait <= 0 || wait > us.PollCap) {
			wait = us.PollCap
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
		code, a, lat, err = r.call(ctx, "GET", r.path(r.pick(), "status"), ticket, nil)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil && code == 200:
			cnt.note("status", lat, true, "")
		case err == nil && code == http.StatusGone:
			cnt.note("status", lat, true, "")
			u.Lost = a.Error
			return
		default:
			cnt.note("status", lat, false, describe("status", code, a, err))
			u.Errors++
			a.State, a.PollAfterMs = "waiting", 200 // retry soon
		}
	}
	u.Seen = time.Now()
	if t, err := time.Parse(time.RFC3339Nano, a.ExpiresAt); err == nil {
		u.ExpiresAt = t
		u.AdmittedAt = t.Add(-r.spec.Session)
	}
	if rand.Float64() < us.Abandon {
		u.Abandoned = true // closes the browser: the session runs out
		return
	}
	var hold time.Duration
	switch {
	case us.ReleaseAtDeadline:
		hold = time.Until(u.ExpiresAt)
	case us.HoldMax > us.HoldMin:
		hold = us.HoldMin + rand.N(us.HoldMax-us.HoldMin)
	default:
		hold = us.HoldMin
	}
	select {
	case <-time.After(max(hold, 0)):
	case <-ctx.Done():
		return
	}
	u.Released = time.Now()
	code, a, lat, err = r.call(ctx, "POST", r.path(r.pick(), "release"), ticket, nil)
	ok = err == nil && (code == 200 || code == 410)
	cnt.note("release", lat, ok || ctx.Err() != nil, describe("release", code, a, err))
}

// signedUser is a join body with user id signed by the join key, as the
// protected site makes it (queue/httpapi/README.md, "Signed user ids").
func signedUser(id string) map[string]any {
	exp := time.Now().Add(time.Hour).Unix()
	m := hmac.New(sha256.New, []byte(benchSecret))
	fmt.Fprintf(m, "%s\n%d", id, exp)
	return map[string]any{"user": id, "expires": exp, "sig": hex.EncodeToString(m.Sum(nil))}
}

func describe(op string, code int, a apiReply, err error) string {
	if err != nil {
		return op + ": " + err.Error()
	}
	return fmt.Sprintf("%s: HTTP %d %s", op, code, a.Error)
}

func (r *room) observeActive(ctx context.Context, c *redis.Client, start time.Time) ([]sample, int) {
	var out []sample
	reads := 0
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	key := r.key("active")
	for {
		select {
		case <-ctx.Done():
			return out, reads
		case <-t.C:
		}
		n, err := c.ZCard(ctx, key).Result()
		if err != nil {
			continue
		}
		reads++
		out = append(out, sample{time.Since(start).Seconds(), n})
	}
}

func (r *room) observeQueue(ctx context.Context, c *redis.Client, start time.Time) (waiting, admitted []sample) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Since(start).Seconds()
		p := c.Pipeline()
		w := p.ZCard(ctx, r.key("waiting"))
		a := p.Get(ctx, r.key("admitted"))
		p.Exec(ctx)
		if n, err := w.Result(); err == nil {
			waiting = append(waiting, sample{now, n})
		}
		if n, err := a.Int64(); err == nil || errors.Is(err, redis.Nil) {
			admitted = append(admitted, sample{now, n})
		}
	}
}

// observeInfo watches through GET /v1/queues/{q} when the store is unknown.
func (r *room) observeInfo(ctx context.Context, start time.Time) (active, waiting, admitted []sample, reads int) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a, err := r.info(ctx)
		if err != nil {
			continue
		}
		now := time.Since(start).Seconds()
		reads++
		active = append(active, sample{now, a.Active})
		if i%10 == 0 {
			waiting = append(waiting, sample{now, a.Waiting})
			admitted = append(admitted, sample{now, a.AdmittedTotal})
		}
	}
}

// maxSample is the highest N.
func maxSample(s []sample) int64 {
	var m int64
	for _, x := range s {
		m = max(m, x.N)
	}
	return m
}

// bucketMax reduces samples to the maximum per bucket of width w seconds, for charts.
func bucketMax(s []sample, w float64) (xs, ys []float64) {
	for _, x := range s {
		b := float64(int(x.T/w)) * w
		if n := len(xs); n > 0 && xs[n-1] == b {
			ys[n-1] = max(ys[n-1], float64(x.N))
			continue
		}
		xs = append(xs, b)
		ys = append(ys, float64(x.N))
	}
	return xs, ys
}

// confirmedMax is the most users that held an admission at the same moment, by
// their own account: from the answer saying admitted until they sent release
// (or their session ended). A lower bound of the real active count.
func confirmedMax(users []*userResult) int {
	type ev struct {
		t time.Time
		d int
	}
	var evs []ev
	for _, u := range users {
		if u.Seen.IsZero() {
			continue
		}
		end := u.Released
		if end.IsZero() {
			end = u.ExpiresAt
		}
		if !end.After(u.Seen) {
			continue
		}
		evs = append(evs, ev{u.Seen, 1}, ev{end, -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.d - b.d // ends before starts at the same instant
	})
	cur, best := 0, 0
	for _, e := range evs {
		cur += e.d
		best = max(best, cur)
	}
	return best
}

// getJSON decodes the JSON answer of GET url into v.
func (r *room) getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
