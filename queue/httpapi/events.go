package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"waitroom/queue"
)

// Event streams (GET /v1/queues/{q}/events): the page's live view.
//
// The ticket comes as a bearer token or in the cookie wr_ticket, which the
// page sets for the events path only (EventSource cannot send headers, and a
// ticket in the URL would land in access logs and proxies; the ticket shows
// the pass once admitted). The stream sends "status" events whose data is
// exactly the body GET .../status would return, whenever it changes, and ends
// after the admitted or expired event. When the store is unreachable it sends
// "unavailable" events and keeps trying. Streams end after StreamLifetime or
// when the instance drains; EventSource reconnects by itself, possibly to
// another instance.
//
// All streams of one queue on one instance share one store read per tick: a
// hub goroutine per queue collects the tickets whose check is due (often near
// the front, rarely far back, at once for those near the front when this
// instance admits someone), asks the store for all of them in one script call
// (which keeps them alive), and fans the answers out. A ticket may hold
// MaxStreamsPerTicket streams on an instance, the instance MaxStreams in all;
// beyond either the answer is 429.

const (
	streamKeepAlive  = 15 * time.Second
	streamMinCheck   = 250 * time.Millisecond
	streamMaxCheck   = 5 * time.Second
	notifyAheadLimit = 100 // streams this close to the front recheck on a local admission
	ticketCookie     = "wr_ticket"
)

// sub is one open stream as its queue's hub sees it.
type sub struct {
	id    string
	ahead int64     // last known people ahead; the hub's scheduling
	due   time.Time // next check
	ch    chan hubAnswer
}

type hubAnswer struct {
	st  queue.Status
	err error
}

// hub runs the shared store reads of one queue's streams on this instance.
type hub struct {
	rm      *room
	s       *Server
	mu      sync.Mutex
	subs    map[*sub]struct{}
	running bool
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	tok := bearer(r)
	if tok == "" {
		if c, err := r.Cookie(ticketCookie); err == nil {
			tok = c.Value
		}
	}
	id, ok := s.ticketID(w, r, rm, tok)
	if !ok {
		return
	}
	sb, why := s.openStream(rm, id)
	if sb == nil {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusTooManyRequests, "%s", why)
		return
	}
	defer s.closeStream(rm, sb)

	// The first status is answered as plain JSON on failure, so a dead ticket
	// or a store outage gets its proper status code rather than a stream.
	ctx, cancel := s.withStore(r)
	st, err := rm.eng.Status(ctx, id)
	if err != nil {
		cancel()
		s.fail(w, r, "status", err)
		return
	}
	code, body := s.statusResponse(ctx, rm, st, "")
	cancel()
	if code != http.StatusOK {
		writeJSON(w, code, body)
		return
	}

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	s.metrics.streams.Inc()
	defer s.metrics.streams.Dec()

	var last string
	send := func(event string, v any) bool {
		data, _ := json.Marshal(v)
		if event == "status" {
			k := newsKey(v, data)
			if k == last {
				return true
			}
			last = k
		} else {
			last = "" // after an outage, the next status is news again
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return
	}
	if !send("status", body) {
		return
	}
	rm.hub.schedule(sb, streamAhead(st))

	end := time.NewTimer(s.cfg.StreamLifetime)
	defer end.Stop()
	keepAlive := time.NewTicker(streamKeepAlive)
	defer keepAlive.Stop()
	for st.State == queue.StateWaiting || st.State == queue.StatePreQueue {
		select {
		case <-r.Context().Done():
			return
		case <-s.drainCh:
			return
		case <-end.C:
			return
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
			continue
		case a := <-sb.ch:
			if a.err != nil {
				s.metrics.storeErrors.WithLabelValues("status").Inc()
				if !send("unavailable", errorBody{Error: "store unavailable, retrying"}) {
					return
				}
				continue
			}
			st = a.st
			_, body := s.statusResponse(r.Context(), rm, st, "")
			if !send("status", body) {
				return
			}
		}
	}
}

// openStream registers a stream of ticket id within the caps; nil and the
// reason when a cap is reached.
func (s *Server) openStream(rm *room, id string) (*sub, string) {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	if s.streamCount >= s.cfg.MaxStreams {
		return nil, fmt.Sprintf("this instance serves %d event streams already; poll /status", s.cfg.MaxStreams)
	}
	if s.streamsOf[id] >= s.cfg.MaxStreamsPerTicket {
		return nil, fmt.Sprintf("this ticket has %d event streams open already", s.cfg.MaxStreamsPerTicket)
	}
	s.streamCount++
	s.streamsOf[id]++
	return &sub{id: id, ch: make(chan hubAnswer, 1)}, ""
}

func (s *Server) closeStream(rm *room, sb *sub) {
	rm.hub.remove(sb)
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	s.streamCount--
	if s.streamsOf[sb.id]--; s.streamsOf[sb.id] <= 0 {
		delete(s.streamsOf, sb.id)
	}
}

// schedule adds sb to the hub with its first check after the one just made,
// and starts the hub's goroutine if it is not running.
func (h *hub) schedule(sb *sub, ahead int64) {
	next := time.Now().Add(h.interval(ahead))
	h.mu.Lock()
	defer h.mu.Unlock()
	sb.ahead, sb.due = ahead, next
	h.subs[sb] = struct{}{}
	if !h.running {
		h.running = true
		go h.run()
	}
}

func (h *hub) remove(sb *sub) {
	h.mu.Lock()
	delete(h.subs, sb)
	h.mu.Unlock()
}

// interval is how long a stream with ahead people in front waits between checks.
func (h *hub) interval(ahead int64) time.Duration {
	return min(max(pollAfter(ahead, h.rm.ticketTTL(context.Background()))/2, streamMinCheck), streamMaxCheck)
}

// run is the hub's goroutine: every tick (and at once when this instance
// admitted someone) it reads the due streams' tickets in one store call and
// hands each stream its answer. It stops when no stream is left.
func (h *hub) run() {
	tick := time.NewTicker(streamMinCheck)
	defer tick.Stop()
	for {
		changed := false
		select {
		case <-tick.C:
		case <-h.rm.changes():
			changed = true
		case <-h.s.drainCh:
			h.mu.Lock()
			h.running = false
			h.mu.Unlock()
			return
		}
		due := h.due(changed)
		if due == nil {
			h.mu.Lock()
			if len(h.subs) == 0 {
				h.running = false
				h.mu.Unlock()
				return
			}
			h.mu.Unlock()
			continue
		}
		h.check(due)
	}
}

// due returns the streams whose check is due, each ticket once.
func (h *hub) due(changed bool) map[string][]*sub {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	var out map[string][]*sub
	for sb := range h.subs {
		if now.Before(sb.due) && !(changed && sb.ahead < notifyAheadLimit) {
			continue
		}
		if out == nil {
			out = map[string][]*sub{}
		}
		out[sb.id] = append(out[sb.id], sb)
	}
	return out
}

// check is the one store read of a tick.
func (h *hub) check(due map[string][]*sub) {
	ids := make([]string, 0, len(due))
	for id := range due {
		ids = append(ids, id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.s.cfg.StoreTimeout)
	sts, err := h.rm.eng.Statuses(ctx, ids)
	cancel()
	h.s.hubReads.Add(1)
	now := time.Now()
	for i, id := range ids {
		a := hubAnswer{err: err}
		if err == nil {
			a.st = sts[i]
		}
		for _, sb := range due[id] {
			h.mu.Lock()
			if err != nil {
				sb.due = now.Add(time.Second)
			} else {
				sb.ahead = streamAhead(a.st)
				sb.due = now.Add(h.interval(sb.ahead))
			}
			h.mu.Unlock()
			select { // the latest answer wins; a slow stream skips stale ones
			case <-sb.ch:
			default:
			}
			sb.ch <- a
			h.s.hubDelivered.Add(1)
		}
	}
}

// newsKey is what makes a status worth sending: a waiting status is news when
// the position moves or the ETA changes at the precision people read it (10 s
// under a minute, then minutes), not at every drift of the measured rate.
func newsKey(v any, data []byte) string {
	w, ok := v.(waitingBody)
	if !ok {
		return string(data)
	}
	eta := "none"
	if w.ETASeconds != nil {
		if e := *w.ETASeconds; e < 60 {
			eta = fmt.Sprintf("%.0fs", math.Ceil(e/10)*10)
		} else {
			eta = fmt.Sprintf("%.0fm", math.Round(e/60))
		}
	}
	return fmt.Sprintf("waiting|%d|%s|%s|%s", w.Position, eta, w.QueueState, w.Message)
}

// streamAhead is the hub's scheduling weight of a status: the people ahead,
// and a far place for the pre-queue (nothing moves there until the draw).
func streamAhead(st queue.Status) int64 {
	if st.State == queue.StatePreQueue {
		return 4 * notifyAheadLimit
	}
	return st.Position
}
