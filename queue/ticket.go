package queue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// State of a ticket as a user sees it.
type State string

const (
	StateWaiting  State = "waiting"
	StateAdmitted State = "admitted"
	StateExpired  State = "expired"
	// StatePreQueue: joined a scheduled queue before it opened; at OpensAt
	// the pre-queue is shuffled into the line.
	StatePreQueue State = "pre_queue"
)

// Reasons a ticket is over (Status.Reason), exactly as the API reports them.
const (
	ReasonReleased    = "released"     // released by its holder or the protected site
	ReasonSessionOver = "session_over" // admitted, and the session ran out (or hit the max session)
	ReasonExpired     = "expired"      // waiting, and stopped polling for a ticket TTL
	ReasonNotFound    = "not_found"    // never joined, or ended longer than a ticket TTL ago
	ReasonClosed      = "closed"       // the queue closed (sold out) while the ticket waited
)

// Errors of the session operations.
var (
	// ErrEntered: the ticket's admission was entered; only the session token
	// that Enter returned may end it.
	ErrEntered = errors.New("queue: the session was entered; release it with its session token")
	// ErrBadKey: an idempotency key that is not 1-64 visible ASCII characters.
	ErrBadKey = errors.New("queue: an idempotency key is 1-64 visible ASCII characters")
)

// MaxIdempotencyKey is the longest idempotency key EnterKey and JoinKey take.
const MaxIdempotencyKey = 64

// IdempotencyKeyOK tells whether key may be given to EnterKey: empty (none),
// or 1-64 visible ASCII characters.
func IdempotencyKeyOK(key string) bool {
	if len(key) > MaxIdempotencyKey {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] > '~' {
			return false
		}
	}
	return true
}

// Status is what a ticket holder is told.
type Status struct {
	Ticket string // ticket id (sign it with SignTicket before handing it out)
	State  State

	// Waiting.
	Position int64 // 0 = next to be admitted
	// Arrival is the ticket's place in the line's order (its score in
	// wr:{q}:waiting; 0 when not known): round events name those who left
	// by it (Event.Left).
	Arrival int64
	ETA     time.Duration // estimated wait; valid only when HasETA
	HasETA  bool          // false until the queue has an admission rate
	// QueueState is the queue's state when waiting (open or paused).
	QueueState QueueState

	// Pre-queue: how many joined it so far, and when the draw is.
	PreQueue int64
	OpensAt  time.Time

	// Admitted (confirmed: an optimistic reservation that may still be
	// rolled back shows as waiting at position 0).
	Pass      string    // single-use pass for Enter, valid for this admission only
	ExpiresAt time.Time // session deadline

	// Expired: one of the Reason constants.
	Reason string
}

// Join puts a user in the queue and returns the new ticket's status, in one
// atomic step (arrival number, waiting set, liveness, user key), so arrival
// order is queue order. With a non-empty user id, joining again while the
// user's ticket is still waiting or admitted returns that ticket; concurrent
// joins of one user get one ticket. The user id must be one the caller
// vouches for (the HTTP layer accepts only ids signed by the protected site).
func (e *Engine) Join(ctx context.Context, user string) (Status, error) {
	return e.join(ctx, user, "")
}

// JoinCode is Join with a bypass code (IssueCodes): the code loses one use,
// and the user is admitted at once when the queue is open and has a free
// place, or else goes to the head of the line. ErrBadCode for a malformed or
// forged code, ErrCodeUsed for one with no use left (nothing is spent then).
func (e *Engine) JoinCode(ctx context.Context, user, code string) (Status, error) {
	id, ok := e.sig.verify(domainCode, code)
	if !ok || !validCodeID(id) {
		return Status{}, ErrBadCode
	}
	return e.join(ctx, user, id)
}

// JoinKey is Join, or JoinCode when code is not empty, with an idempotency
// key (IdempotencyKeyOK): an anonymous join (user "") retried with the key of
// a call that landed gets that call's ticket while it is waiting or admitted,
// instead of a second ticket nobody holds (a retry after a lost answer, as
// in a store failover). The key stands for the user: it is kept as the
// ticket's user id, in a form no user id the HTTP layer accepts can take
// (keyUser). With a user id, the user's own ticket is the answer already
// and the key is not needed.
func (e *Engine) JoinKey(ctx context.Context, user, code, key string) (Status, error) {
	if !IdempotencyKeyOK(key) {
		return Status{}, ErrBadKey
	}
	if user == "" && key != "" {
		user = keyUser(key)
	}
	if code != "" {
		return e.JoinCode(ctx, user, code)
	}
	return e.Join(ctx, user)
}

// keyUser is the user id an idempotency key stands for: it starts with a
// byte that is never valid UTF-8, and user ids are valid UTF-8.
func keyUser(key string) string { return "\xffkey:" + key }

func (e *Engine) join(ctx context.Context, user, codeID string) (Status, error) {
	res, err := e.script(ctx, "join", newTicketID(), user, codeID).Slice()
	if err != nil {
		return Status{}, err
	}
	if len(res) != 4 {
		return Status{}, fmt.Errorf("queue: join script: unexpected reply %v", res)
	}
	id, _ := res[0].(string)
	switch res[3] {
	case "closed":
		return Status{}, ErrClosed
	case "code":
		return Status{}, ErrCodeUsed
	}
	if toInt(res[1]) == 0 { // the user's live ticket
		return e.Status(ctx, id)
	}
	e.c.joins.Add(1)
	if res[3] == "admitted" {
		e.c.admitted.Add(1)
		e.waits.observe(0) // a bypass code with a free place: in at once
		e.mu.Lock()
		e.rate.valid = false
		e.mu.Unlock()
		return e.Status(ctx, id)
	}
	if res[3] == "p" {
		set := e.CurrentSettings(ctx)
		return Status{Ticket: id, State: StatePreQueue, PreQueue: toInt(res[2]) + 1, OpensAt: set.OpensAt,
			QueueState: QueueScheduled}, nil
	}
	st := Status{Ticket: id, State: StateWaiting, Position: toInt(res[2]), QueueState: QueueState(fmt.Sprint(res[3]))}
	e.fillETA(ctx, &st)
	return st, nil
}

// Status reports a ticket's state and keeps a waiting ticket alive (a poll
// pushes its liveness deadline to now + ticket TTL).
func (e *Engine) Status(ctx context.Context, id string) (Status, error) {
	sts, err := e.Statuses(ctx, []string{id})
	if err != nil {
		return Status{}, err
	}
	return sts[0], nil
}

// StatusHeld is Status for the first read of a page that this instance will
// keep alive with Hold: a waiting ticket's hash and user key get at least
// HoldKeysLife at once, so the holds need not refresh them for half of that.
func (e *Engine) StatusHeld(ctx context.Context, id string) (Status, error) {
	sts, err := e.statuses(ctx, []string{id}, true)
	if err != nil {
		return Status{}, err
	}
	return sts[0], nil
}

// Statuses is Status for many tickets in one store call (the event streams of
// one queue on one instance share it).
func (e *Engine) Statuses(ctx context.Context, ids []string) ([]Status, error) {
	return e.statuses(ctx, ids, false)
}

func (e *Engine) statuses(ctx context.Context, ids []string, held bool) ([]Status, error) {
	out := make([]Status, len(ids))
	var ask []any
	var at []int
	for i, id := range ids {
		out[i] = Status{Ticket: id, State: StateExpired, Reason: ReasonNotFound}
		if validTicketID(id) {
			ask = append(ask, id)
			at = append(at, i)
		}
	}
	if len(ask) == 0 {
		return out, nil
	}
	var res []any
	var err error
	if held && len(ask) == 1 {
		res, err = e.script(ctx, "status_held", HoldKeysLife.Milliseconds(), ask[0]).Slice()
	} else {
		res, err = e.script(ctx, "status", ask...).Slice()
	}
	if err != nil {
		return nil, err
	}
	if len(res) != len(ask) {
		return nil, fmt.Errorf("queue: status script: %d answers for %d tickets", len(res), len(ask))
	}
	rate := -1.0
	for j, r := range res {
		st := &out[at[j]]
		v, _ := r.([]any)
		if len(v) < 2 {
			return nil, fmt.Errorf("queue: status script: unexpected answer %v", r)
		}
		switch v[0] {
		case "p":
			st.State, st.PreQueue, st.QueueState = StatePreQueue, toInt(v[1]), QueueScheduled
			if len(v) > 2 {
				st.OpensAt = time.UnixMilli(toInt(v[2]))
			}
		case "w":
			st.State, st.Position, st.QueueState = StateWaiting, toInt(v[1]), QueueOpen
			if len(v) > 2 {
				st.QueueState = QueueState(fmt.Sprint(v[2]))
			}
			if len(v) > 3 {
				st.Arrival = toInt(v[3])
			}
			if rate < 0 {
				rate, _ = e.AdmitRate(ctx)
			}
			if rate > 0 {
				st.ETA = time.Duration(float64(st.Position+1) / rate * float64(time.Second))
				st.HasETA = true
			}
		case "a":
			nonce := fmt.Sprint(v[2])
			st.State, st.ExpiresAt, st.Pass = StateAdmitted, time.UnixMilli(toInt(v[1])), e.passFor(st.Ticket, nonce)
		default:
			st.Reason = fmt.Sprint(v[1])
		}
	}
	return out, nil
}

// Enter consumes a pass and returns the entered session's token, the only
// credential that can extend or end the session. Exactly one of any number of
// concurrent calls with the same pass succeeds (the script checks and marks
// the admission in one step); the others get ErrPassUsed. A pass of an
// admission that is over, or of an earlier admission of the same ticket,
// gives ErrPassExpired, a forged one ErrForged.
func (e *Engine) Enter(ctx context.Context, pass string) (session string, deadline time.Time, err error) {
	return e.EnterKey(ctx, pass, "")
}

// EnterKey is Enter with an idempotency key (IdempotencyKeyOK): a call with
// the key of the call that entered the pass succeeds again, with the same
// session token, instead of ErrPassUsed. A caller whose Enter went
// unanswered (the store failed over after consuming the pass, a timeout)
// retries with the same key and gets its session; anyone else holding the
// pass still gets ErrPassUsed. An empty key is Enter.
func (e *Engine) EnterKey(ctx context.Context, pass, key string) (session string, deadline time.Time, err error) {
	if !IdempotencyKeyOK(key) {
		return "", time.Time{}, ErrBadKey
	}
	id, nonce, ok := e.sig.verifyAdmission(domainPass, pass)
	if !ok {
		return "", time.Time{}, ErrForged
	}
	res, err := e.script(ctx, "enter", id, nonce, key).Slice()
	if err != nil {
		return "", time.Time{}, err
	}
	switch res[0] {
	case "ok":
		if len(res) > 2 { // a retry with the entering call's key
			e.log.Info("enter repeated with its idempotency key", "ticket", id)
		} else {
			e.c.enters.Add(1)
		}
		return e.sessionFor(id, nonce), time.UnixMilli(toInt(res[1])), nil
	case "used":
		return "", time.Time{}, ErrPassUsed
	}
	return "", time.Time{}, ErrPassExpired
}

// Heartbeat extends an entered session to now + session (store clock); it
// never shortens it and never extends it past admission + MaxSession. It
// takes the session token Enter returned and returns the deadline, or
// ErrNotAdmitted when the session is over (or the token is of an earlier
// admission), ErrForged for anything but a session token.
func (e *Engine) Heartbeat(ctx context.Context, session string) (time.Time, error) {
	id, nonce, ok := e.sig.verifyAdmission(domainSession, session)
	if !ok {
		return time.Time{}, ErrForged
	}
	res, err := e.script(ctx, "heartbeat", id, nonce).Slice()
	if err != nil {
		return time.Time{}, err
	}
	if res[0] != "ok" {
		return time.Time{}, ErrNotAdmitted
	}
	return time.UnixMilli(toInt(res[1])), nil
}

// Release ends a ticket whatever its state, for a trusted caller (tests, the
// bench): an admitted user leaves the active set (and this instance runs an
// admission round at once), a waiting user leaves the queue. It reports
// whether the ticket held a place.
func (e *Engine) Release(ctx context.Context, id string) (bool, error) {
	return e.release(ctx, id, "", "any")
}

// Leave is Release for the holder of the waiting-room ticket: it leaves the
// queue or gives back an admission not entered yet, and refuses an entered
// session with ErrEntered (that needs ReleaseSession).
func (e *Engine) Leave(ctx context.Context, id string) (bool, error) {
	return e.release(ctx, id, "", "ticket")
}

// ReleaseSession ends the entered session a session token names.
func (e *Engine) ReleaseSession(ctx context.Context, session string) (bool, error) {
	id, nonce, ok := e.sig.verifyAdmission(domainSession, session)
	if !ok {
		return false, ErrForged
	}
	return e.release(ctx, id, nonce, "session")
}

func (e *Engine) release(ctx context.Context, id, nonce, mode string) (bool, error) {
	if !validTicketID(id) {
		return false, nil
	}
	res, err := e.script(ctx, "release", id, nonce, mode).Slice()
	if err != nil {
		return false, err
	}
	if len(res) < 1 {
		return false, fmt.Errorf("queue: release script: unexpected reply %v", res)
	}
	n := toInt(res[0])
	if len(res) > 1 { // it left the waiting line: the pages behind it move up
		ev := Event{}
		for _, a := range res[1:] {
			ev.Left = append(ev.Left, toInt(a))
		}
		e.publish(ctx, ev)
	}
	switch n {
	case -1:
		return false, ErrEntered
	case -2:
		return false, nil // a session token of an earlier admission
	}
	if n > 0 {
		e.c.releases.Add(1)
		e.Trigger()
	}
	return n > 0, nil
}
