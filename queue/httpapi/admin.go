package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"time"
	"unicode/utf8"

	"waitroom/queue"
)

// The admin API: change a queue's settings and state (PUT /v1/queues/{q}),
// create queues at run time (POST /v1/queues) and delete them (DELETE
// /v1/queues/{q}). Every call needs the admin token as a bearer token; a
// client IP that failed AdminFailures times within a minute gets 429 before
// its token is looked at.

const maxMessageLen = 500

// adminHandler serves an admin route once adminOnly has found its queue
// (nil on routes without {q}) and checked the token; ctx bounds its store work.
type adminHandler func(ctx context.Context, w http.ResponseWriter, r *http.Request, rm *room)

// adminOnly is the preamble every admin route shares: the queue of the path
// (404 when unknown), the store deadline, then the admin token.
func (s *Server) adminOnly(h adminHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var rm *room
		scope := "admin"
		if r.PathValue("q") != "" {
			var ok bool
			if rm, ok = s.room(w, r); !ok {
				return
			}
			scope = rm.eng.Name()
		}
		ctx, cancel := s.withStore(r)
		defer cancel()
		if !s.adminAuth(ctx, w, r, scope) {
			return
		}
		h(ctx, w, r, rm)
	}
}

// adminAuth checks the admin token. scope names the failure counter's hash
// tag (the queue, or "admin" for routes without one). It writes the error
// itself and returns false when the caller may not go on.
func (s *Server) adminAuth(ctx context.Context, w http.ResponseWriter, r *http.Request, scope string) bool {
	tok := bearer(r)
	if tok == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="waitroom-admin"`)
		writeError(w, http.StatusUnauthorized, "missing admin token (Authorization: Bearer <token>)")
		return false
	}
	if s.cfg.AdminToken == "" {
		writeError(w, http.StatusForbidden, "the admin API is disabled on this instance (no --admin-token)")
		return false
	}
	failKey := "wr:{" + scope + "}:adminfail:" + s.clientIP(r).String()
	if err := s.allow(ctx, failKey, s.cfg.AdminFailures, 0); err != nil {
		var lim errLimited
		if errors.As(err, &lim) {
			writeLimited(w, lim, "failed admin attempts")
			return false
		}
		s.fail(w, r, "settings", err)
		return false
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.AdminToken)) != 1 {
		if err := s.allow(ctx, failKey, s.cfg.AdminFailures, 1); err != nil && !errors.As(err, new(errLimited)) {
			s.log.Warn("cannot count a failed admin attempt", "err", err)
		}
		writeError(w, http.StatusForbidden, "wrong admin token")
		return false
	}
	return true
}

// settingsRequest is the body of PUT /v1/queues/{q}, and part of POST
// /v1/queues: any subset.
type settingsRequest struct {
	Slot              *int     `json:"slot"`
	SessionSeconds    *float64 `json:"session_seconds"`
	TicketTTLSeconds  *float64 `json:"ticket_ttl_seconds"`
	MaxSessionSeconds *float64 `json:"max_session_seconds"`
	State             *string  `json:"state"`     // open, paused, closed
	Message           *string  `json:"message"`   // "" removes it
	OpensAt           *string  `json:"opens_at"`  // RFC 3339; "" removes the schedule
	ClosesAt          *string  `json:"closes_at"` // RFC 3339; "" removes it
	PowBits           *int     `json:"pow_bits"`  // proof of work at join; 0 = off
	brandingRequest            // the page's title, logo and colours (branding.go)
}

func (q settingsRequest) empty() bool {
	return q == settingsRequest{}
}

// patch validates the request and turns it into the engine's patch.
func (q settingsRequest) patch() (queue.SettingsPatch, error) {
	var p queue.SettingsPatch
	const maxDur = 24 * 3600
	if q.Slot != nil && (*q.Slot < 1 || *q.Slot > 1_000_000) {
		return p, errors.New("slot must be between 1 and 1000000")
	}
	p.Slot = q.Slot
	for _, f := range []struct {
		name string
		v    *float64
		dst  **time.Duration
	}{{"session_seconds", q.SessionSeconds, &p.Session}, {"ticket_ttl_seconds", q.TicketTTLSeconds, &p.TicketTTL},
		{"max_session_seconds", q.MaxSessionSeconds, &p.MaxSession}} {
		if f.v == nil {
			continue
		}
		if *f.v < 1 || *f.v > maxDur || math.IsNaN(*f.v) {
			return p, fmt.Errorf("%s must be between 1 and %d", f.name, maxDur)
		}
		d := time.Duration(*f.v * float64(time.Second)).Round(time.Millisecond)
		*f.dst = &d
	}
	if q.State != nil {
		st := queue.QueueState(*q.State)
		switch st {
		case queue.QueueOpen, queue.QueuePaused, queue.QueueClosed:
		default:
			return p, fmt.Errorf("state must be open, paused or closed")
		}
		p.State = &st
	}
	if q.PowBits != nil {
		if *q.PowBits < 0 || *q.PowBits > queue.MaxPowBits {
			return p, fmt.Errorf("pow_bits must be between 0 and %d", queue.MaxPowBits)
		}
		p.PowBits = q.PowBits
	}
	if q.Message != nil {
		if len(*q.Message) > maxMessageLen || !utf8.ValidString(*q.Message) {
			return p, fmt.Errorf("message must be valid UTF-8 of at most %d bytes", maxMessageLen)
		}
		p.Message = q.Message
	}
	for _, f := range []struct {
		name string
		v    *string
		dst  **time.Time
	}{{"opens_at", q.OpensAt, &p.OpensAt}, {"closes_at", q.ClosesAt, &p.ClosesAt}} {
		if f.v == nil {
			continue
		}
		var t time.Time
		if *f.v != "" {
			var err error
			if t, err = time.Parse(time.RFC3339, *f.v); err != nil || t.Unix() <= 0 || t.Year() > 9999 {
				return p, fmt.Errorf("%s must be an RFC 3339 time (or \"\" to remove it)", f.name)
			}
		}
		*f.dst = &t
	}
	var err error
	p.Branding, err = q.brandingRequest.patch()
	return p, err
}

// update: PUT /v1/queues/{q} with the admin token sets any of the queue's
// settings, state, message and schedule for every instance (each picks them
// up at its next round). Only the fields given are written.
func (s *Server) update(ctx context.Context, w http.ResponseWriter, r *http.Request, rm *room) {
	var req settingsRequest
	if !s.decodeBody(w, r, &req, false) {
		return
	}
	if req.empty() {
		writeError(w, http.StatusBadRequest, "nothing to change: give slot, session_seconds, ticket_ttl_seconds, "+
			"max_session_seconds, state, message, opens_at, closes_at, pow_bits, title, logo_url, primary_color or background_color")
		return
	}
	patch, err := req.patch()
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	set, err := rm.eng.SetSettingFields(ctx, patch)
	if err != nil {
		s.fail(w, r, "settings", err)
		return
	}
	rm.mu.Lock()
	rm.ttl = 0
	rm.mu.Unlock()
	s.log.Info("queue settings changed", "queue", rm.eng.Name(), "slot", set.Slot,
		"session", set.Session, "ticket_ttl", set.TicketTTL, "max_session", set.MaxSession,
		"state", set.State, "opens_at", set.OpensAt, "closes_at", set.ClosesAt)
	s.writeInfo(ctx, w, r, rm)
}

// create: POST /v1/queues {"name", "strategy", "target_url", settings...}
// registers a queue in the store; every instance with a Runtime serves it
// within one period (this one at once). 201 with the queue; 409 when a queue
// of that name exists.
func (s *Server) create(ctx context.Context, w http.ResponseWriter, r *http.Request, _ *room) {
	var req struct {
		Name      string `json:"name"`
		Strategy  string `json:"strategy"`
		TargetURL string `json:"target_url"`
		settingsRequest
	}
	if !s.decodeBody(w, r, &req, false) {
		return
	}
	if s.cfg.Runtime == nil {
		writeError(w, http.StatusForbidden, "this instance does not serve queues created at run time")
		return
	}
	if !queue.ValidName(req.Name) {
		writeError(w, http.StatusBadRequest, "name must be 1-64 of A-Z a-z 0-9 _ . -")
		return
	}
	spec := queue.Spec{TargetURL: req.TargetURL}
	if req.Strategy != "" {
		st, err := queue.ParseStrategy(req.Strategy)
		if err != nil {
			writeError(w, http.StatusBadRequest, "strategy must be naive, leader, optimistic or atomic")
			return
		}
		spec.Strategy = st
	}
	if req.TargetURL != "" {
		if _, err := parseTarget(req.TargetURL); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	}
	patch, err := req.settingsRequest.patch()
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if s.lookup(req.Name) != nil {
		writeError(w, http.StatusConflict, "queue %q exists", req.Name)
		return
	}
	// The settings first, so no instance serves the queue with defaults.
	eng, err := s.cfg.Runtime.NewEngine(req.Name, spec)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err := eng.Init(ctx); err != nil {
		s.fail(w, r, "settings", err)
		return
	}
	if _, err := eng.SetSettingFields(ctx, patch); err != nil {
		s.fail(w, r, "settings", err)
		return
	}
	switch err := queue.Register(ctx, s.cfg.Store, req.Name, spec); {
	case errors.Is(err, queue.ErrExists):
		writeError(w, http.StatusConflict, "queue %q exists", req.Name)
		return
	case err != nil:
		s.fail(w, r, "settings", err)
		return
	}
	if err := s.reconcile(ctx, true); err != nil {
		s.fail(w, r, "settings", err)
		return
	}
	rm := s.lookup(req.Name)
	if rm == nil {
		s.fail(w, r, "settings", errors.New("the new queue is not served"))
		return
	}
	w.Header().Set("Location", "/v1/queues/"+req.Name)
	s.writeInfoStatus(ctx, w, r, rm, http.StatusCreated)
}

// remove: DELETE /v1/queues/{q} deletes a queue created at run time: every
// instance stops serving it within one period, its keys are deleted (its
// tickets' own keys run out by their TTLs). A queue of the instances' flags
// cannot be deleted (409).
func (s *Server) remove(ctx context.Context, w http.ResponseWriter, r *http.Request, rm *room) {
	if !rm.runtime {
		writeError(w, http.StatusConflict, "queue %q comes from the instances' flags; close it instead", rm.eng.Name())
		return
	}
	if _, err := queue.Unregister(ctx, s.cfg.Store, rm.eng.Name()); err != nil {
		s.fail(w, r, "settings", err)
		return
	}
	if err := s.reconcile(ctx, true); err != nil {
		s.fail(w, r, "settings", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"deleted": true})
}

// issueCodes: POST /v1/queues/{q}/codes {"count","uses"} issues bypass codes
// (default one code of one use). 201 {"codes": [...], "uses"}.
func (s *Server) issueCodes(ctx context.Context, w http.ResponseWriter, r *http.Request, rm *room) {
	req := struct {
		Count int `json:"count"`
		Uses  int `json:"uses"`
	}{Count: 1, Uses: 1}
	if !s.decodeBody(w, r, &req, true) {
		return
	}
	if req.Count < 1 || req.Count > 1000 || req.Uses < 1 || req.Uses > queue.MaxCodeUses {
		writeError(w, http.StatusBadRequest, "count must be 1-1000 and uses 1-%d", queue.MaxCodeUses)
		return
	}
	codes, err := rm.eng.IssueCodes(ctx, req.Count, req.Uses)
	if err != nil {
		s.fail(w, r, "codes", err)
		return
	}
	s.log.Info("bypass codes issued", "queue", rm.eng.Name(), "count", req.Count, "uses", req.Uses)
	writeJSON(w, http.StatusCreated, map[string]any{"codes": codes, "uses": req.Uses})
}

// listCodes: GET /v1/queues/{q}/codes: every code's id (not the code) with
// its uses left and used.
func (s *Server) listCodes(ctx context.Context, w http.ResponseWriter, r *http.Request, rm *room) {
	uses, err := rm.eng.CodeUses(ctx)
	if err != nil {
		s.fail(w, r, "codes", err)
		return
	}
	type item struct {
		ID       string `json:"id"`
		UsesLeft int64  `json:"uses_left"`
		Used     int64  `json:"used"`
	}
	out := []item{}
	for _, u := range uses {
		out = append(out, item{ID: u.ID, UsesLeft: u.Left, Used: u.Used})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	writeJSON(w, http.StatusOK, map[string]any{"codes": out})
}

// history: GET /v1/queues/{q}/history, the last 30 minutes in 10-second
// steps for the dashboard's chart: active, waiting and the admission rate
// between one step and the one before.
func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	ctx, cancel := s.withStore(r)
	defer cancel()
	pts, err := rm.eng.History(ctx)
	if err != nil {
		s.fail(w, r, "stats", err)
		return
	}
	type point struct {
		At      string  `json:"at"`
		Active  int64   `json:"active"`
		Waiting int64   `json:"waiting"`
		Rate    float64 `json:"admit_rate_per_s"`
	}
	out := make([]point, 0, len(pts))
	for i, p := range pts {
		pt := point{At: timeJSON(p.At), Active: p.Active, Waiting: p.Waiting}
		if i > 0 {
			if dt := p.At.Sub(pts[i-1].At).Seconds(); dt > 0 && p.AdmittedTotal >= pts[i-1].AdmittedTotal {
				pt.Rate = math.Round(float64(p.AdmittedTotal-pts[i-1].AdmittedTotal)/dt*100) / 100
			}
		}
		out = append(out, pt)
	}
	writeJSON(w, http.StatusOK, map[string]any{"step_seconds": int(queue.HistoryStep / time.Second), "points": out})
}
