package httpapi

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"waitroom/queue"
)

// testHub is a push-mode hub with n waiting streams, the i-th with 1000+i
// people ahead, whose answers are all due now; no room, no store (due and
// event do not need them).
func testHub(n int) *hub {
	h := &hub{push: true, wake: make(chan struct{}, 1), byID: map[string][]*sub{}}
	past := time.Now().Add(-time.Second)
	for i := range n {
		ahead := int64(1000 + i)
		sb := &sub{id: fmt.Sprintf("t%05d", i), ahead: ahead, due: past.Add(time.Duration(i) * time.Microsecond),
			readAt: past.Add(time.Hour), ch: make(chan hubAnswer, 1),
			last: queue.Status{State: queue.StateWaiting, Position: ahead, Arrival: int64(2000 + i)}}
		h.add(sb)
	}
	return h
}

func tickPass(every time.Duration) hubPass {
	return hubPass{ticked: every, reads: true, up: true, ttl: time.Minute}
}

// Streams whose answers fall due together (pages opened in the same moment)
// are answered over several ticks, the longest due first, each tick within
// its budget; none is left behind.
func TestHubSpreadsEstimates(t *testing.T) {
	const n = 3000
	h := testHub(n)
	p := tickPass(hubTick)
	// Far back, every stream wants an answer every streamMaxCheck.
	limit := int(float64(n)*hubTick.Seconds()/streamMaxCheck.Seconds()*estimateSlack) + estimateFloor
	answered := map[*sub]bool{}
	var lastDue time.Time
	for tick := 0; len(answered) < n; tick++ {
		if tick > 2*n/limit+2 {
			t.Fatalf("after %d ticks %d of %d streams answered", tick, len(answered), n)
		}
		read, guess := h.due(p)
		if read != nil {
			t.Fatalf("tick %d read %d streams: none is due for a store read", tick, len(read))
		}
		if len(guess) == 0 || len(guess) > limit {
			t.Fatalf("tick %d answered %d estimates; want 1..%d", tick, len(guess), limit)
		}
		for _, sb := range guess {
			if answered[sb] {
				t.Fatalf("tick %d answered %s twice", tick, sb.id)
			}
			if sb.due.Before(lastDue) {
				t.Fatalf("tick %d: %s (due %v) answered after a stream due later", tick, sb.id, sb.due)
			}
			answered[sb] = true
		}
		for _, sb := range guess { // as estimate would: next answer an interval on
			if sb.due.After(lastDue) {
				lastDue = sb.due
			}
			sb.due = time.Now().Add(streamInterval(sb.ahead, p.ttl))
		}
	}
}

// A few due streams are answered at once, whatever the budget.
func TestHubAnswersFewAtOnce(t *testing.T) {
	h := testHub(estimateFloor)
	if _, guess := h.due(tickPass(time.Nanosecond)); len(guess) != estimateFloor {
		t.Fatalf("answered %d of %d due streams", len(guess), estimateFloor)
	}
}

// A pass woken by an event (not a tick) reads the streams the event named
// and answers nothing else, even with thousands of answers due: the admitted
// page's answer does not queue behind theirs.
func TestHubEventPassTakesOnlyNamed(t *testing.T) {
	h := testHub(3000)
	var named *sub
	for _, sb := range h.subs {
		named = sb
		break
	}
	h.event(queue.Event{Admitted: []string{named.id}})
	select {
	case <-h.wake:
	default:
		t.Fatal("an event naming a stream's ticket did not wake the hub")
	}
	read, guess := h.due(hubPass{up: true, ttl: time.Minute})
	if len(read) != 1 || len(read[named.id]) != 1 || read[named.id][0] != named {
		t.Fatalf("the event's pass reads %d tickets; want just %s", len(read), named.id)
	}
	if len(guess) != 0 {
		t.Fatalf("the event's pass also answers %d estimates", len(guess))
	}
	// The other streams counted the admission off.
	for _, sb := range h.subs {
		if sb != named && sb.ahead != sb.last.Position-1 {
			t.Fatalf("%s: ahead %d after one admission, read %d", sb.id, sb.ahead, sb.last.Position)
		}
	}
	if read, guess = h.due(tickPass(hubTick)); len(read) != 0 || len(guess) == 0 {
		t.Fatalf("the next tick reads %d and estimates %d; want the due estimates only", len(read), len(guess))
	}
}

// check hands out the answers that end a wait before the others.
func TestEndsFirst(t *testing.T) {
	w := queue.Status{State: queue.StateWaiting}
	sts := []queue.Status{w, w, {State: queue.StateAdmitted}, w, {State: queue.StateExpired}, {State: queue.StatePreQueue}}
	got := fmt.Sprint(endsFirst(len(sts), sts, nil))
	if want := "[2 4 0 1 3 5]"; got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	if got := fmt.Sprint(endsFirst(3, nil, errors.New("down"))); got != "[0 1 2]" {
		t.Fatalf("a failed read answers in order %s, want every ticket", got)
	}
}

// The hub's work per round event and per tick with 3,333 streams (10,000
// pages on 3 instances).
func BenchmarkHubEvent(b *testing.B) {
	h := testHub(3333)
	ev := queue.Event{Admitted: []string{"elsewhere"}}
	for b.Loop() {
		h.event(ev)
		select {
		case <-h.wake:
		default:
		}
	}
}

func BenchmarkHubTick(b *testing.B) {
	h := testHub(3333)
	p := tickPass(hubTick)
	future := time.Now().Add(time.Hour)
	for _, sb := range h.subs {
		sb.due = future
	}
	for b.Loop() {
		h.due(p)
	}
}

// remove keeps the hub's lists whole: the other streams stay, each once,
// with their index and under their ticket.
func TestHubRemove(t *testing.T) {
	h := &hub{byID: map[string][]*sub{}}
	var all []*sub
	for _, id := range []string{"a", "b", "a", "c", "d"} {
		sb := &sub{id: id, at: -1}
		h.add(sb)
		all = append(all, sb)
	}
	h.remove(&sub{id: "a", at: -1}) // never scheduled
	h.remove(all[0])
	h.remove(all[3])
	h.remove(all[3]) // twice
	want := map[*sub]bool{all[1]: true, all[2]: true, all[4]: true}
	if len(h.subs) != len(want) {
		t.Fatalf("%d streams left, want %d", len(h.subs), len(want))
	}
	for i, sb := range h.subs {
		if !want[sb] || sb.at != i {
			t.Fatalf("stream %s at %d (index %d) should not be there or has a wrong index", sb.id, i, sb.at)
		}
	}
	if all[0].at != -1 || all[3].at != -1 {
		t.Fatal("a removed stream keeps an index")
	}
	if len(h.byID["a"]) != 1 || h.byID["a"][0] != all[2] || h.byID["c"] != nil || len(h.byID) != 3 {
		t.Fatalf("streams by ticket after removal: %v", h.byID)
	}
}
