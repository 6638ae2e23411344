package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
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
// All streams of one queue on one instance share one hub: a goroutine that
// reads the store for many tickets in one script call (which keeps them
// alive) and fans the answers out. How it learns that the queue moved
// depends on Config.Events:
//
//   - push (default): the hub subscribes once to the queue's round events
//     (queue.Engine.Watch, SSUBSCRIBE wr:{q}:events), which every instance
//     publishes after each round that changed the queue. A stream whose ticket
//     an event names as admitted is read at once; every other stream's
//     position is estimated from the events (the admissions counted off) and
//     sent at the same pace as before, without a store read. Each stream is
//     still read now and then (every 5 s near the front, otherwise every
//     streamPushRead), which corrects the estimate; the hub's holds keep the
//     tickets alive (holdLoop). While the
//     subscription is down the hub polls as in poll mode, and when it is back
//     the streams near the front are read at once (events may have been
//     missed). A pre-queue stream is always polled (the draw is not an event).
//     The hub answers due estimates every hubTick (50 ms), no more per tick
//     than 1.5 times the streams' average need, so the answers of streams
//     opened together go out spread rather than in bursts of thousands of
//     stream writes; and a pass that an event woke reads and answers only
//     the tickets the event named, the ended waits first, so an admitted
//     page's answer does not queue behind other pages' position updates.
//   - poll: every stream is read when due (often near the front, rarely far
//     back, at once for those near the front when this instance admits
//     someone). Store work grows with the number of open streams.
//
// A ticket may hold MaxStreamsPerTicket streams on an instance, the instance
// MaxStreams in all; beyond either the answer is 429.

const (
	streamKeepAlive  = 15 * time.Second
	streamMinCheck   = 250 * time.Millisecond // also the period of the hub's store reads of due streams
	streamMaxCheck   = 5 * time.Second
	notifyAheadLimit = 100 // streams this close to the front recheck on a local admission
	// hubTick is how often a push-mode hub answers the streams whose
	// estimate is due. The estimates are spread over the ticks
	// (estimateSlack), so a short tick makes small bursts of stream writes
	// rather than big ones that an admitted page's answer would queue behind
	// on a busy CPU.
	hubTick = 50 * time.Millisecond
	// estimateSlack and estimateFloor bound the estimates one tick answers:
	// estimateSlack times the waiting streams' average need for the time
	// since the last tick, plus estimateFloor. Streams left over stay due
	// (the longest due go first), so streams that opened together, whose
	// answers would otherwise stay bunched on the same tick, spread out.
	estimateSlack = 1.5
	estimateFloor = 16
	// streamPushRead is, in push mode, the longest time between two store
	// reads of a stream far from the front: a safety net for its position
	// estimate only, since the hub's holds keep its ticket alive.
	streamPushRead = 30 * time.Minute
	ticketCookie   = "wr_ticket"
)

// sub is one open stream as its queue's hub sees it. The hub's goroutine
// and the events subscription change it under hub.mu.
type sub struct {
	id     string
	ahead  int64        // people ahead: read from the store, or estimated from events since
	due    time.Time    // next answer: a store read, or in push mode maybe an estimate
	readAt time.Time    // push mode: next store read, whatever the estimate
	keysAt time.Time    // push mode: when a hold last refreshed its ticket's keys (zero: due)
	now    bool         // read at the next tick (an event admitted it; the feed came back)
	last   queue.Status // last status read; estimates change only its position
	ch     chan hubAnswer
	at     int    // its index in hub.subs; -1 when not there
	named  uint64 // the last event (hub.events) that named its ticket admitted
}

type hubAnswer struct {
	st  queue.Status
	err error
}

// hub runs the shared store reads of one queue's streams on this instance.
type hub struct {
	rm      *room
	s       *Server
	push    bool          // Config.Events == EventsPush
	wake    chan struct{} // an event or a subscription change wants a tick now
	mu      sync.Mutex
	subs    []*sub            // every stream, in no order (a slice: the hub scans it on every tick and event)
	byID    map[string][]*sub // the streams of each ticket
	running bool
	lost    atomic.Bool // the events subscription dropped; cleared when it is back
	// events counts the events received (under mu). A store read that an
	// event overtook may or may not include that event's admissions: the
	// streams it answered are read again at their next answer, so an
	// estimate never keeps an error from such a race (far from the front
	// nothing else would correct it for half an hour).
	events uint64
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
	read := rm.eng.Status
	if rm.hub.push {
		read = rm.eng.StatusHeld // the hub will hold the ticket: its keys live long at once
	}
	seen := rm.hub.eventCount()
	st, err := read(ctx, id)
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
	rm.hub.schedule(sb, st, seen)

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
	return &sub{id: id, ch: make(chan hubAnswer, 1), at: -1}, ""
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

// eventCount is the number of events the hub received so far.
func (h *hub) eventCount() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.events
}

// schedule adds sb to the hub with its first answer after the read just
// made (st; seen is eventCount before it), and starts the hub's goroutine if
// it is not running.
func (h *hub) schedule(sb *sub, st queue.Status, seen uint64) {
	ahead := streamAhead(st)
	now := time.Now()
	next, read := now.Add(streamInterval(ahead, h.rm.ticketTTL(context.Background()))), now.Add(h.readEvery(ahead))
	h.mu.Lock()
	defer h.mu.Unlock()
	sb.ahead, sb.due, sb.readAt, sb.last = ahead, next, read, st
	if h.events != seen {
		sb.readAt = now // an event came during the first read, or before the stream was here
	}
	if h.push {
		sb.keysAt = now // the stream's first read (StatusHeld) gave its keys HoldKeysLife
	}
	h.add(sb)
	if !h.running {
		h.running = true
		go h.run()
	}
}

// add puts sb in the hub's lists; under h.mu.
func (h *hub) add(sb *sub) {
	sb.at = len(h.subs)
	h.subs = append(h.subs, sb)
	h.byID[sb.id] = append(h.byID[sb.id], sb)
}

// remove takes sb out of the hub, if it is there.
func (h *hub) remove(sb *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sb.at < 0 || sb.at >= len(h.subs) || h.subs[sb.at] != sb {
		return // the stream ended before it was scheduled
	}
	last := len(h.subs) - 1
	h.subs[sb.at], h.subs[last].at = h.subs[last], sb.at
	h.subs[last], h.subs, sb.at = nil, h.subs[:last], -1
	if same := slices.DeleteFunc(h.byID[sb.id], func(x *sub) bool { return x == sb }); len(same) > 0 {
		h.byID[sb.id] = same
	} else {
		delete(h.byID, sb.id)
	}
}

// streamInterval is how long a stream with ahead people in front waits
// between answers (ttl: the ticket TTL).
func streamInterval(ahead int64, ttl time.Duration) time.Duration {
	return min(max(pollAfter(ahead, ttl)/2, streamMinCheck), streamMaxCheck)
}

// readEvery is, in push mode, the longest time between two store reads of a
// stream: every few seconds near the front (people who left ahead, bypass
// joins), rarely far back, where the events keep the estimate and the holds
// keep the ticket alive.
func (h *hub) readEvery(ahead int64) time.Duration {
	if ahead < notifyAheadLimit {
		return streamMaxCheck
	}
	return streamPushRead
}

// holdEvery is, in push mode, the period of the hub's holds: a third of the
// ticket TTL, as a page's polls would be at most.
func (h *hub) holdEvery() time.Duration {
	return max(h.rm.ticketTTL(context.Background())/3, streamMinCheck)
}

// holdLoop is the push-mode hub's second goroutine: every holdEvery it
// keeps the tickets of all waiting streams alive in one store call per 1,000
// tickets (queue.Engine.Hold), so the store load of waiting pages does not
// grow with their number. It stops with ctx (the hub's run).
func (h *hub) holdLoop(ctx context.Context) {
	t := time.NewTimer(h.holdEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wait := h.holdEvery()
		if err := h.hold(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			h.s.metrics.storeErrors.WithLabelValues("hold").Inc()
			h.s.log.Warn("hold of open pages' tickets failed", "queue", h.rm.eng.Name(), "err", err)
			wait = min(wait, time.Second)
		}
		t.Reset(wait)
	}
}

// hold is one hold of the waiting streams' tickets; those whose keys were
// not refreshed for half of queue.HoldKeysLife get that too.
func (h *hub) hold(ctx context.Context) error {
	now := time.Now()
	seen := map[string]bool{}
	var refresh, others []string
	h.mu.Lock()
	for _, sb := range h.subs {
		if sb.last.State != queue.StateWaiting || seen[sb.id] {
			continue
		}
		seen[sb.id] = true
		if now.Sub(sb.keysAt) > queue.HoldKeysLife/2 {
			refresh = append(refresh, sb.id)
		} else {
			others = append(others, sb.id)
		}
	}
	h.mu.Unlock()
	if len(seen) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.s.cfg.StoreTimeout*time.Duration(1+len(seen)/1000))
	defer cancel()
	if _, err := h.rm.eng.Hold(ctx, refresh, others); err != nil {
		return err
	}
	fresh := make(map[string]bool, len(refresh))
	for _, id := range refresh {
		fresh[id] = true
	}
	h.mu.Lock()
	for _, sb := range h.subs {
		if fresh[sb.id] {
			sb.keysAt = now
		}
	}
	h.mu.Unlock()
	return nil
}

// run is the hub's goroutine: every tick it reads the due streams' tickets
// in one store call, estimates the others, and hands each stream its answer;
// at once when an event names one of its tickets, and (without a
// subscription) when this instance admitted someone, it reads and answers
// just the streams concerned. It stops when no stream is left.
func (h *hub) run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var up atomic.Bool // this run's subscription is established
	if h.push {
		go h.rm.eng.Watch(ctx, h.event, func(ok bool) { h.feed(&up, ok) })
		go h.holdLoop(ctx)
	}
	tick := time.NewTicker(hubTick)
	defer tick.Stop()
	lastTick, lastRead := time.Now(), time.Now()
	for {
		var p hubPass
		select {
		case now := <-tick.C:
			p.ticked, lastTick = max(now.Sub(lastTick), time.Nanosecond), now
			if now.Sub(lastRead) >= streamMinCheck-hubTick/2 {
				p.reads, lastRead = true, now
			}
		case <-h.wake:
		case <-h.rm.changes():
			p.changed = !up.Load() // with a subscription, this instance's rounds come back as events
		case <-h.s.drainCh:
			h.mu.Lock()
			h.running = false
			h.mu.Unlock()
			return
		}
		p.up = up.Load()
		p.ttl = h.rm.ticketTTL(ctx) // read here, not under h.mu (it may ask the store)
		read, guess := h.due(p)
		if read == nil && guess == nil {
			h.mu.Lock()
			if len(h.subs) == 0 {
				h.running = false
				h.mu.Unlock()
				return
			}
			h.mu.Unlock()
			continue
		}
		if read != nil {
			h.check(read, p.ttl)
		}
		h.estimate(guess, p.ttl)
	}
}

// event is a round event of the queue (from any instance): the tickets it
// admitted (or that left) are read at the next tick, every other waiting
// stream counts the admissions, and those who left ahead of it, off its
// position. A settings change (paused, message, ...) has
// the streams near the front read at once and every other one at its next
// answer, so the store is not asked for every ticket in one call.
func (h *hub) event(ev queue.Event) {
	left := slices.Sorted(slices.Values(ev.Left))
	n := int64(len(ev.Admitted))
	wake := false
	now := time.Now()
	h.mu.Lock()
	h.events++
	for _, id := range ev.Admitted {
		for _, sb := range h.byID[id] {
			sb.now, sb.named, wake = true, h.events, true
		}
	}
	for _, sb := range h.subs {
		if sb.named == h.events {
			continue // admitted: read at the next pass, which comes at once
		}
		arrival := sb.last.Arrival
		if sb.last.State != queue.StateWaiting {
			arrival = 0
		}
		gone := 0 // people who left the line ahead of this stream's ticket
		if arrival != 0 {
			gone, _ = slices.BinarySearch(left, arrival)
		}
		switch {
		case ev.Settings && sb.ahead < notifyAheadLimit,
			arrival != 0 && gone < len(left) && left[gone] == arrival: // its own ticket left: read to show why
			sb.now, wake = true, true
		case ev.Settings:
			sb.readAt = now // read at its next answer, spread over the streams' intervals
		case sb.last.State == queue.StateWaiting:
			was := sb.ahead
			sb.ahead = max(sb.ahead-n-int64(gone), 0)
			if was >= notifyAheadLimit && sb.ahead < notifyAheadLimit {
				sb.readAt = now // near the front now: read at its next answer
			}
		}
	}
	h.mu.Unlock()
	if wake {
		h.poke()
	}
}

// feed records the subscription's state. When it comes (back), the streams
// near the front are read at once: events may have gone by unseen. When it
// comes back after a drop, every other stream is read at its next answer too
// (far from the front the events are what keeps the estimate).
func (h *hub) feed(up *atomic.Bool, ok bool) {
	was := up.Swap(ok)
	if !ok {
		if was {
			h.lost.Store(true)
		}
		return
	}
	lost := h.lost.Swap(false)
	now := time.Now()
	h.mu.Lock()
	for _, sb := range h.subs {
		if sb.ahead < notifyAheadLimit {
			sb.now = true
		} else if lost {
			sb.readAt = now
		}
	}
	h.mu.Unlock()
	h.poke()
}

func (h *hub) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// hubPass is what one pass of the hub's run loop is for.
type hubPass struct {
	ticked  time.Duration // a tick, this long after the last one; 0: woken between ticks
	reads   bool          // a tick that also reads the streams whose store read is due
	changed bool          // without a subscription: this instance admitted someone
	up      bool          // the events subscription is established
	ttl     time.Duration // the ticket TTL
}

// due returns the streams to read from the store, each ticket once, and
// those to answer with an estimate (push mode with the subscription up).
// A pass between ticks (an event or this instance's admission woke the hub)
// takes only the streams it was woken for, so their answers go out before
// any other stream's. A tick takes the streams whose estimate is due, at
// most estimateSlack times their average need (the longest due first), and
// every streamMinCheck those whose store read is due.
func (h *hub) due(p hubPass) (read map[string][]*sub, guess []*sub) {
	now := time.Now()
	need := 0.0 // estimates per second the waiting streams take on average
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, sb := range h.subs {
		waiting := sb.last.State == queue.StateWaiting
		if p.up && waiting {
			need += 1 / streamInterval(sb.ahead, p.ttl).Seconds()
		}
		switch {
		case sb.now, p.changed && sb.ahead < notifyAheadLimit:
		case p.ticked == 0 || now.Before(sb.due):
			continue
		case p.up && waiting && now.Before(sb.readAt):
			guess = append(guess, sb)
			continue
		case !p.reads:
			continue
		}
		// Cleared here, not after the read: an event that comes while the
		// read is in flight (it may have missed that admission) marks it again.
		sb.now = false
		if read == nil {
			read = map[string][]*sub{}
		}
		read[sb.id] = append(read[sb.id], sb)
	}
	return read, spread(guess, int(need*p.ticked.Seconds()*estimateSlack)+estimateFloor)
}

// spread returns at most limit of the due estimates, the longest due first;
// the others stay due for the next tick. Called under hub.mu.
func spread(guess []*sub, limit int) []*sub {
	if len(guess) <= limit {
		return guess
	}
	slices.SortFunc(guess, func(a, b *sub) int { return a.due.Compare(b.due) })
	return guess[:limit]
}

// check is the one store read of a pass. The answers that end a wait
// (admitted, expired) are handed out first.
func (h *hub) check(due map[string][]*sub, ttl time.Duration) {
	ids := make([]string, 0, len(due))
	for id := range due {
		ids = append(ids, id)
	}
	seen := h.eventCount()
	ctx, cancel := context.WithTimeout(context.Background(), h.s.cfg.StoreTimeout)
	sts, err := h.rm.eng.Statuses(ctx, ids)
	cancel()
	h.s.hubReads.Add(1)
	now := time.Now()
	for _, i := range endsFirst(len(ids), sts, err) {
		id := ids[i]
		a := hubAnswer{err: err}
		if err == nil {
			a.st = sts[i]
		}
		for _, sb := range due[id] {
			h.mu.Lock()
			if err != nil {
				sb.due = now.Add(time.Second)
			} else {
				sb.ahead, sb.last = streamAhead(a.st), a.st
				sb.due = now.Add(streamInterval(sb.ahead, ttl))
				sb.readAt = now.Add(h.readEvery(sb.ahead))
				if h.events != seen {
					sb.readAt = now // an event overtook the read: read again at the next answer
				}
			}
			h.mu.Unlock()
			deliver(sb, a)
			h.s.hubDelivered.Add(1)
		}
	}
}

// endsFirst is the order in which check hands out the answers to n tickets
// (sts, or err when the read failed): those that end a wait first.
func endsFirst(n int, sts []queue.Status, err error) []int {
	order := make([]int, 0, n)
	for pass := range 2 {
		for i := range n {
			ends := err == nil && sts[i].State != queue.StateWaiting && sts[i].State != queue.StatePreQueue
			if ends == (pass == 0) {
				order = append(order, i)
			}
		}
	}
	return order
}

// estimate answers streams from their last read and the events since.
func (h *hub) estimate(subs []*sub, ttl time.Duration) {
	now := time.Now()
	for _, sb := range subs {
		h.mu.Lock()
		st, ahead := sb.last, sb.ahead
		sb.due = now.Add(streamInterval(ahead, ttl))
		h.mu.Unlock()
		deliver(sb, hubAnswer{st: h.rm.eng.Moved(context.Background(), st, ahead)})
	}
}

// deliver hands sb its answer; the latest wins, a slow stream skips stale ones.
func deliver(sb *sub, a hubAnswer) {
	select {
	case <-sb.ch:
	default:
	}
	sb.ch <- a
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
