package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"time"

	"waitroom/queue"
)

// Event streams (GET /v1/queues/{q}/events): the page's live view.
//
// The ticket comes as a bearer token or, since EventSource cannot set
// headers, as ?ticket=. The stream sends "status" events whose data is
// exactly the body GET .../status would return, whenever it changes, and ends
// after the admitted or expired event. The instance asks the store on the
// client's behalf (which keeps the ticket alive): often near the front, rarely
// far back, and at once when this instance has just admitted someone. When
// the store is unreachable it sends "unavailable" events and keeps trying.
// Streams end after StreamLifetime or when the instance drains; EventSource
// reconnects by itself, possibly to another instance.

const (
	streamKeepAlive  = 15 * time.Second
	streamMinCheck   = 250 * time.Millisecond
	streamMaxCheck   = 5 * time.Second
	notifyAheadLimit = 100 // streams this close to the front recheck on a local admission
)

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	tok := bearer(r)
	if tok == "" {
		tok = r.URL.Query().Get("ticket")
	}
	id, ok := s.ticketID(w, r, rm, tok)
	if !ok {
		return
	}
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

	end := time.NewTimer(s.cfg.StreamLifetime)
	defer end.Stop()
	keepAlive := time.NewTicker(streamKeepAlive)
	defer keepAlive.Stop()
	ahead := st.Position
	failures := 0
	for st.State == queue.StateWaiting {
		wait := min(max(pollAfter(ahead, rm.ticketTTL(r.Context()))/2, streamMinCheck), streamMaxCheck)
		if failures > 0 {
			wait = min(time.Duration(failures)*time.Second, streamMaxCheck)
		}
		timer := time.NewTimer(wait)
		changed := rm.changes()
		if ahead >= notifyAheadLimit {
			changed = nil
		}
		select {
		case <-r.Context().Done():
			timer.Stop()
			return
		case <-s.drainCh:
			timer.Stop()
			return
		case <-end.C:
			timer.Stop()
			return
		case <-keepAlive.C:
			timer.Stop()
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
			continue
		case <-changed:
			timer.Stop()
		case <-timer.C:
		}
		ctx, cancel := s.withStore(r)
		st, err = rm.eng.Status(ctx, id)
		if err != nil {
			cancel()
			if r.Context().Err() != nil {
				return
			}
			failures++
			s.metrics.storeErrors.WithLabelValues("status").Inc()
			st.State = queue.StateWaiting
			if !send("unavailable", errorBody{Error: "store unavailable, retrying"}) {
				return
			}
			continue
		}
		failures = 0
		_, body := s.statusResponse(ctx, rm, st, "")
		cancel()
		ahead = st.Position
		if !send("status", body) {
			return
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
	return fmt.Sprintf("waiting|%d|%s", w.Position, eta)
}
