package httpapi

import (
	"context"
	"errors"
	"math"
	"mime"
	"net/http"
	"time"
	"unicode/utf8"

	"waitroom/queue"
)

// Response bodies. Times are RFC 3339 in UTC with milliseconds.

type waitingBody struct {
	State       string   `json:"state"` // "waiting"
	Ticket      string   `json:"ticket,omitempty"`
	Position    int64    `json:"position"`    // 1 = next in
	Ahead       int64    `json:"ahead"`       // people in front
	ETASeconds  *float64 `json:"eta_seconds"` // null until the queue has an admission rate
	PollAfterMs int64    `json:"poll_after_ms"`
	QueueState  string   `json:"queue_state"`       // open, or paused (nobody admitted; places kept)
	Message     string   `json:"message,omitempty"` // the site's message
}

// preQueueBody: joined a scheduled queue before it opened.
type preQueueBody struct {
	State       string `json:"state"` // "pre_queue"
	Ticket      string `json:"ticket,omitempty"`
	OpensAt     string `json:"opens_at"`
	PreQueue    int64  `json:"pre_queue"` // people in the pre-queue so far
	PollAfterMs int64  `json:"poll_after_ms"`
	Message     string `json:"message,omitempty"`
}

type admittedBody struct {
	State       string `json:"state"` // "admitted"
	Ticket      string `json:"ticket,omitempty"`
	Pass        string `json:"pass"`
	ExpiresAt   string `json:"expires_at"`
	RedirectURL string `json:"redirect_url,omitempty"`
}

type enteredBody struct {
	State string `json:"state"` // "entered"
	// Session is the token that alone can heartbeat and release the entered
	// session (the waiting-room ticket cannot).
	Session   string `json:"session"`
	ExpiresAt string `json:"expires_at"`
}

type queueBody struct {
	Name             string  `json:"name"`
	Slot             int     `json:"slot"`
	Active           int64   `json:"active"`
	Waiting          int64   `json:"waiting"`
	AdmittedTotal    int64   `json:"admitted_total"`
	AdmitRatePerS    float64 `json:"admit_rate_per_s"`
	Strategy         string  `json:"strategy"`
	SessionSeconds   float64 `json:"session_seconds"`
	TicketTTLSeconds float64 `json:"ticket_ttl_seconds"`
	MaxSessionSecs   float64 `json:"max_session_seconds"`
	Instance         string  `json:"instance"`
	State            string  `json:"state"`       // now: open, paused, scheduled or closed
	AdminState       string  `json:"admin_state"` // as set: open, paused or closed
	Message          string  `json:"message"`
	OpensAt          *string `json:"opens_at"`
	ClosesAt         *string `json:"closes_at"`
	PreQueue         int64   `json:"pre_queue"`
	PowBits          int     `json:"pow_bits"`
	Draws            int64   `json:"draws"`
	BypassUses       int64   `json:"bypass_uses"`
	Runtime          bool    `json:"runtime"` // created through the admin API (can be deleted)
	brandingBody
}

const maxUserLen = 128

func timeJSON(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// pollAfter tells a waiting client when to ask again: soon near the front,
// rarely far back, and always well within the ticket TTL that the polls
// keep alive.
func pollAfter(ahead int64, ticketTTL time.Duration) time.Duration {
	d := 500*time.Millisecond + time.Duration(ahead)*20*time.Millisecond
	limit := 15 * time.Second
	if ttl := ticketTTL / 4; ttl < limit {
		limit = ttl
	}
	d = min(d, limit)
	return max(d, 50*time.Millisecond)
}

// statusResponse renders an engine status as the API's status code and body.
// ticket is echoed when non-empty (join).
func (s *Server) statusResponse(ctx context.Context, rm *room, st queue.Status, ticket string) (int, any) {
	switch st.State {
	case queue.StatePreQueue:
		poll := min(pollAfter(1000, rm.ticketTTL(ctx)), max(time.Until(st.OpensAt), 200*time.Millisecond))
		return http.StatusOK, preQueueBody{State: "pre_queue", Ticket: ticket, OpensAt: timeJSON(st.OpensAt),
			PreQueue: st.PreQueue, PollAfterMs: poll.Milliseconds(), Message: rm.eng.CurrentSettings(ctx).Message}
	case queue.StateWaiting:
		b := waitingBody{State: "waiting", Ticket: ticket, Position: st.Position + 1, Ahead: st.Position,
			PollAfterMs: pollAfter(st.Position, rm.ticketTTL(ctx)).Milliseconds(), QueueState: string(st.QueueState)}
		if st.QueueState != queue.QueueOpen {
			b.Message = rm.eng.CurrentSettings(ctx).Message
		}
		if st.HasETA {
			eta := math.Round(st.ETA.Seconds()*10) / 10
			b.ETASeconds = &eta
		}
		return http.StatusOK, b
	case queue.StateAdmitted:
		return http.StatusOK, admittedBody{State: "admitted", Ticket: ticket, Pass: st.Pass,
			ExpiresAt: timeJSON(st.ExpiresAt), RedirectURL: rm.redirect(st.Pass)}
	}
	b := expiredBody(st.Reason)
	if st.Reason == queue.ReasonClosed {
		b.Message = rm.eng.CurrentSettings(ctx).Message
	}
	return http.StatusGone, b
}

// expiredBody is the 410 of a ticket that is over, with its exact reason:
// released, session_over, expired (stopped polling) or not_found.
func expiredBody(reason string) errorBody {
	if reason == "" {
		reason = queue.ReasonNotFound
	}
	return errorBody{State: "expired", Reason: reason, Error: reasonText[reason]}
}

var reasonText = map[string]string{
	queue.ReasonReleased:    "the ticket was released",
	queue.ReasonSessionOver: "the session is over",
	queue.ReasonExpired:     "the ticket expired: its page stopped polling",
	queue.ReasonNotFound:    "no such ticket (never joined, or over long ago)",
	queue.ReasonClosed:      "the queue closed",
}

// redirect is the target URL with the pass added, or "" without a target.
func (rm *room) redirect(pass string) string {
	if rm.target == nil {
		return ""
	}
	u := *rm.target
	q := u.Query()
	q.Set("pass", pass)
	u.RawQuery = q.Encode()
	return u.String()
}

// ticketTTL is the queue's ticket TTL, read from the store at most every few
// seconds (it only caps poll_after_ms, so a slightly old value is fine). One
// caller reads it while the others keep the old value: thousands of event
// streams answering at once cost one store read, not one each.
func (rm *room) ticketTTL(ctx context.Context) time.Duration {
	rm.mu.Lock()
	ttl, at := rm.ttl, rm.ttlAt
	if ttl > 0 && (time.Since(at) < 5*time.Second || rm.ttlReading) {
		rm.mu.Unlock()
		return ttl
	}
	rm.ttlReading = true
	rm.mu.Unlock()
	set, err := rm.eng.Settings(ctx)
	rm.mu.Lock()
	rm.ttlReading = false
	if err == nil {
		rm.ttl, rm.ttlAt = set.TicketTTL, time.Now()
	}
	rm.mu.Unlock()
	if err != nil {
		if ttl > 0 {
			return ttl
		}
		return queue.DefaultSettings.TicketTTL
	}
	return set.TicketTTL
}

// join: POST /v1/queues/{q}/join {"user","expires","sig"} (all optional
// together). Content-Type must be application/json, so a cross-site form
// cannot make a browser join; each client IP has a join budget per minute.
// With an Idempotency-Key header, an anonymous join retried with the key of
// the call that joined gets the same ticket while it is live.
func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "join needs Content-Type: application/json")
		return
	}
	var req struct {
		User    string `json:"user"`
		Expires int64  `json:"expires"`
		Sig     string `json:"sig"`
		Code    string `json:"code"` // a bypass code (admin API)
		PoW     *struct {
			Challenge string `json:"challenge"`
			Solution  string `json:"solution"`
		} `json:"pow"` // the solved challenge, when the queue asks for proof of work
	}
	if !s.decodeBody(w, r, &req, true) {
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if !queue.IdempotencyKeyOK(key) {
		writeError(w, http.StatusBadRequest, "Idempotency-Key is 1-64 visible ASCII characters")
		return
	}
	if len(req.User) > maxUserLen || !utf8.ValidString(req.User) {
		writeError(w, http.StatusBadRequest, "user must be valid UTF-8 of at most %d bytes", maxUserLen)
		return
	}
	if req.User != "" {
		if err := verifyUser(rm.joinKey, req.User, req.Expires, req.Sig, time.Now()); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	} else if req.Expires != 0 || req.Sig != "" {
		writeError(w, http.StatusBadRequest, "expires and sig come with a user id")
		return
	}
	ctx, cancel := s.withStore(r)
	defer cancel()
	if err := s.allow(ctx, "wr:{"+rm.eng.Name()+"}:join:"+s.clientIP(r).String(), rm.joinRate, 1); err != nil {
		var lim errLimited
		if errors.As(err, &lim) {
			writeLimited(w, lim, "joins")
			return
		}
		s.fail(w, r, "join", err)
		return
	}
	if bits := rm.eng.CurrentSettings(ctx).PowBits; bits > 0 {
		if req.PoW == nil {
			writeError(w, http.StatusBadRequest, "this queue asks for proof of work: solve GET .../challenge and send {\"pow\":{\"challenge\",\"solution\"}}")
			return
		}
		switch err := rm.eng.CheckPoW(ctx, req.PoW.Challenge, req.PoW.Solution, bits); {
		case errors.Is(err, queue.ErrBadPoW):
			writeError(w, http.StatusBadRequest, "invalid proof of work (malformed, forged, expired, too easy or wrong)")
			return
		case errors.Is(err, queue.ErrPoWUsed):
			writeError(w, http.StatusBadRequest, "this proof of work was used already")
			return
		case err != nil:
			s.fail(w, r, "join", err)
			return
		}
	}
	st, err := rm.eng.JoinKey(ctx, req.User, req.Code, key)
	switch {
	case errors.Is(err, queue.ErrBadCode):
		writeError(w, http.StatusBadRequest, "invalid bypass code")
		return
	case errors.Is(err, queue.ErrCodeUsed):
		writeError(w, http.StatusBadRequest, "the bypass code has no use left")
		return
	}
	if errors.Is(err, queue.ErrClosed) {
		writeJSON(w, http.StatusConflict, errorBody{Error: "the queue is closed", State: "closed",
			Message: rm.eng.CurrentSettings(ctx).Message})
		return
	}
	if err != nil {
		s.fail(w, r, "join", err)
		return
	}
	if st.State == queue.StateWaiting && st.Position == 0 {
		// At the head: there may be a free place now, so do not make the
		// first person in an idle queue wait a whole period.
		rm.eng.Trigger()
	}
	code, body := s.statusResponse(ctx, rm, st, rm.eng.SignTicket(st.Ticket))
	writeJSON(w, code, body)
}

// challenge: GET /v1/queues/{q}/challenge, a proof-of-work challenge at the
// queue's difficulty (difficulty 0: the queue asks for none; the challenge
// is issued anyway and a join may ignore it).
func (s *Server) challenge(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	ctx, cancel := s.withStore(r)
	defer cancel()
	bits := rm.eng.CurrentSettings(ctx).PowBits
	c, exp := rm.eng.Challenge(bits)
	writeJSON(w, http.StatusOK, map[string]any{"challenge": c, "difficulty": bits, "expires_at": timeJSON(exp)})
}

// status: GET /v1/queues/{q}/status with the ticket as bearer token. A poll
// keeps a waiting ticket alive.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	id, ok := s.ticketID(w, r, rm, bearer(r))
	if !ok {
		return
	}
	ctx, cancel := s.withStore(r)
	defer cancel()
	st, err := rm.eng.Status(ctx, id)
	if err != nil {
		s.fail(w, r, "status", err)
		return
	}
	code, body := s.statusResponse(ctx, rm, st, "")
	writeJSON(w, code, body)
}

// enter: POST /v1/queues/{q}/enter {"pass"}, called by the protected site.
// With an Idempotency-Key header, a retry with the key of the call that
// entered the pass gets the same session again (200), not 409.
// The pass works once, for its admission only; the answer carries the
// session token, the only credential for heartbeat and release of the
// entered session.
func (s *Server) enter(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	var req struct {
		Pass string `json:"pass"`
	}
	if !s.decodeBody(w, r, &req, false) {
		return
	}
	if req.Pass == "" {
		writeError(w, http.StatusBadRequest, `field "pass" is required`)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if !queue.IdempotencyKeyOK(key) {
		writeError(w, http.StatusBadRequest, "Idempotency-Key is 1-64 visible ASCII characters")
		return
	}
	ctx, cancel := s.withStore(r)
	defer cancel()
	session, deadline, err := rm.eng.EnterKey(ctx, req.Pass, key)
	if err != nil {
		s.fail(w, r, "enter", err)
		return
	}
	writeJSON(w, http.StatusOK, enteredBody{State: "entered", Session: session, ExpiresAt: timeJSON(deadline)})
}

// heartbeat: POST /v1/queues/{q}/heartbeat (Bearer session token) extends an
// entered session, up to the queue's max session from the admission.
func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	tok := bearer(r)
	if tok == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="waitroom-session"`)
		writeError(w, http.StatusUnauthorized, "missing session token (Authorization: Bearer <session from /enter>)")
		return
	}
	ctx, cancel := s.withStore(r)
	defer cancel()
	deadline, err := rm.eng.Heartbeat(ctx, tok)
	switch {
	case errors.Is(err, queue.ErrForged):
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, "a session token from /enter is required (a ticket or a pass is not one)")
		return
	case errors.Is(err, queue.ErrNotAdmitted):
		writeJSON(w, http.StatusGone, expiredBody(queue.ReasonSessionOver))
		return
	case err != nil:
		s.fail(w, r, "heartbeat", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"state": "admitted", "expires_at": timeJSON(deadline)})
}

// release: POST /v1/queues/{q}/release ends a ticket. With the session token
// it ends the entered session (the next person is admitted at once); with the
// waiting-room ticket it leaves the queue or gives back an admission that was
// not entered, and is refused (403) once the session was entered. Releasing
// twice is harmless: the second answer says released false.
func (s *Server) release(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	tok := bearer(r)
	ctx, cancel := s.withStore(r)
	defer cancel()
	var released bool
	var err error
	if _, serr := rm.eng.SessionTicket(tok); serr == nil {
		released, err = rm.eng.ReleaseSession(ctx, tok)
	} else {
		id, ok := s.ticketID(w, r, rm, tok)
		if !ok {
			return
		}
		released, err = rm.eng.Leave(ctx, id)
	}
	if errors.Is(err, queue.ErrEntered) {
		writeError(w, http.StatusForbidden, "the session was entered: only its session token can release it")
		return
	}
	if err != nil {
		s.fail(w, r, "release", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"released": released})
}

// list: GET /v1/queues names the queues this instance serves.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	type item struct {
		Name string `json:"name"`
		Page string `json:"page"`
	}
	out := []item{}
	for _, n := range s.table().names {
		out = append(out, item{Name: n, Page: "/q/" + n})
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": out})
}

// info: GET /v1/queues/{q}.
func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	ctx, cancel := s.withStore(r)
	defer cancel()
	s.writeInfo(ctx, w, r, rm)
}

func (s *Server) writeInfo(ctx context.Context, w http.ResponseWriter, r *http.Request, rm *room) {
	s.writeInfoStatus(ctx, w, r, rm, http.StatusOK)
}

func (s *Server) writeInfoStatus(ctx context.Context, w http.ResponseWriter, r *http.Request, rm *room, code int) {
	st, err := rm.eng.Stats(ctx)
	if err != nil {
		s.fail(w, r, "stats", err)
		return
	}
	optTime := func(t time.Time) *string {
		if t.IsZero() {
			return nil
		}
		s := timeJSON(t)
		return &s
	}
	writeJSON(w, code, queueBody{
		Name: st.Name, Slot: st.Settings.Slot, Active: st.Active, Waiting: st.Waiting,
		AdmittedTotal: st.AdmittedTotal, AdmitRatePerS: math.Round(st.AdmitRate*100) / 100,
		Strategy: string(st.Strategy), SessionSeconds: st.Settings.Session.Seconds(),
		TicketTTLSeconds: st.Settings.TicketTTL.Seconds(), MaxSessionSecs: st.Settings.MaxSession.Seconds(),
		Instance: rm.eng.InstanceID(), State: string(st.State), AdminState: string(st.Settings.State),
		Message: st.Settings.Message, OpensAt: optTime(st.Settings.OpensAt), ClosesAt: optTime(st.Settings.ClosesAt),
		PreQueue: st.PreQueue, PowBits: st.Settings.PowBits, Draws: st.Draws, BypassUses: st.BypassUses, Runtime: rm.runtime,
		brandingBody: brandingBody(st.Settings.Branding),
	})
}
