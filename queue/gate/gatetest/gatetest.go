// Package gatetest is a stand-in for the queue service's site-facing routes
// (/enter, /heartbeat, /release) for tests of sites and gates: passes
// "good" and "other" are valid once each (a retry with the Idempotency-Key
// of the call that entered gets the session again), sessions last a minute
// unless heartbeated.
package gatetest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Queue is an http.Handler serving /v1/queues/{name}/{enter,heartbeat,release}.
type Queue struct {
	name       string
	now        func() time.Time
	mu         sync.Mutex
	passes     map[string]string    // pass -> session token
	used       map[string]bool      // pass -> used
	usedKey    map[string]string    // pass -> the Idempotency-Key of the call that entered it
	sessions   map[string]time.Time // token -> deadline
	heartbeats int
	released   []string
}

// NewQueue returns a queue named name on the clock now (time.Now if nil).
func NewQueue(name string, now func() time.Time) *Queue {
	if now == nil {
		now = time.Now
	}
	return &Queue{name: name, now: now, passes: map[string]string{"good": "tok-1", "other": "tok-2"},
		used: map[string]bool{}, usedKey: map[string]string{}, sessions: map[string]time.Time{}}
}

// Heartbeats counts heartbeat calls.
func (q *Queue) Heartbeats() int { q.mu.Lock(); defer q.mu.Unlock(); return q.heartbeats }

// Released lists the tokens released, in order.
func (q *Queue) Released() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.released...)
}

// End ends a session now, as the queue does at its maximum length.
func (q *Queue) End(token string) { q.mu.Lock(); q.sessions[token] = q.now(); q.mu.Unlock() }

func (q *Queue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch strings.TrimPrefix(r.URL.Path, "/v1/queues/"+q.name) {
	case "/enter":
		q.enter(w, r)
	case "/heartbeat":
		q.heartbeat(w, token)
	case "/release":
		q.released = append(q.released, token)
		delete(q.sessions, token)
		json.NewEncoder(w).Encode(map[string]bool{"released": true})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (q *Queue) enter(w http.ResponseWriter, r *http.Request) {
	var body struct{ Pass string }
	json.NewDecoder(r.Body).Decode(&body)
	tok, ok := q.passes[body.Pass]
	key := r.Header.Get("Idempotency-Key")
	switch {
	case !ok:
		w.WriteHeader(http.StatusUnauthorized)
	case q.used[body.Pass] && (key == "" || q.usedKey[body.Pass] != key):
		w.WriteHeader(http.StatusConflict)
	default:
		q.used[body.Pass], q.usedKey[body.Pass] = true, key
		exp := q.now().Add(time.Minute)
		q.sessions[tok] = exp
		json.NewEncoder(w).Encode(map[string]string{"state": "entered", "session": tok, "expires_at": exp.UTC().Format(time.RFC3339Nano)})
	}
}

func (q *Queue) heartbeat(w http.ResponseWriter, token string) {
	q.heartbeats++
	exp, ok := q.sessions[token]
	if !ok || !q.now().Before(exp) {
		w.WriteHeader(http.StatusGone)
		return
	}
	exp = q.now().Add(time.Minute)
	q.sessions[token] = exp
	json.NewEncoder(w).Encode(map[string]string{"state": "admitted", "expires_at": exp.UTC().Format(time.RFC3339Nano)})
}
