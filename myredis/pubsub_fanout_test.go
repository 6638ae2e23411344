package myredis_test

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// Pub/sub under Redis's default client-output-buffer-limit for subscribers
// (pubsub 32mb 8mb 60): one subscriber that never reads, 1,000 that read, and a
// publisher publishing steadily. The slow one is disconnected by the hard limit
// (the clock stands still, so the soft one cannot fire) or, in the second case,
// by the soft limit once the fake clock passes its 60 seconds; every fast
// subscriber receives every message in order; every PUBLISH is answered.
// Progress is asserted, never timing.

const (
	fanoutSubscribers = 1000
	fanoutBigPayload  = 256 << 10 // one message on the slow subscriber's own channel
	fanoutHard        = 32 << 20  // the default limits, checked by CONFIG GET below
	fanoutSoft        = 8 << 20
)

func TestPubSubFanoutHardLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 subscribers and 40 MB through one socket: not in -short")
	}
	f := newFanout(t)
	sawOverSoft := false
	lastOmem := 0
	for f.slowAlive {
		if f.bigSent*fanoutBigPayload > 4*fanoutHard {
			t.Fatalf("the slow subscriber was not disconnected after %d MB (omem %d)", f.bigSent*fanoutBigPayload>>20, lastOmem)
		}
		f.publishSeq()
		f.publishBig()
		if om := f.slowOmem(); om >= 0 {
			lastOmem = om
			if om >= fanoutHard {
				t.Fatalf("the slow subscriber has omem=%d, at or over the hard limit, and is still connected", om)
			}
			sawOverSoft = sawOverSoft || om >= fanoutSoft
		}
	}
	if !sawOverSoft {
		t.Fatalf("disconnected with omem %d, before passing the soft limit: not the hard limit's doing", lastOmem)
	}
	f.finish()
}

func TestPubSubFanoutSoftLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 subscribers and 10 MB through one socket: not in -short")
	}
	f := newFanout(t)
	// Over the soft limit (and under the hard one) without any time passing.
	for f.slowOmem() < fanoutSoft {
		if f.bigSent*fanoutBigPayload > 2*fanoutHard {
			t.Fatalf("the slow subscriber's queue never reached the soft limit (omem %d)", f.slowOmem())
		}
		f.publishSeq()
		f.publishBig()
		if !f.slowAlive {
			t.Fatal("the slow subscriber was disconnected before the soft limit's seconds passed")
		}
	}
	// The soft limit's clock starts with the first message over it, and starts
	// again if the queue ever drops under it (the kernel taking a part), so each
	// attempt is: one message over it, 60 s (still connected), then 1 s more.
	for attempt := 0; f.slowAlive; attempt++ {
		if attempt == 20 {
			t.Fatalf("the slow subscriber over the soft limit was never disconnected (omem %d)", f.slowOmem())
		}
		f.publishBig()
		f.clk.Advance(60 * time.Second)
		f.publishSeq()
		f.publishBig()
		if !f.slowAlive {
			t.Fatal("disconnected after exactly the soft limit's 60 seconds: Redis waits for longer")
		}
		if om := f.slowOmem(); om >= fanoutHard {
			t.Fatalf("omem %d reached the hard limit: the soft limit is not what is being tested", om)
		}
		f.clk.Advance(time.Second)
		f.publishBig()
		f.waitSlowGone()
		f.publishSeq()
	}
	f.finish()
}

// fanout is one run: a server with a fake clock, the publisher, the slow
// subscriber (channels "ch" and "big") and the fast ones (channel "ch").
type fanout struct {
	t         *testing.T
	clk       interface{ Advance(time.Duration) }
	pub       *redistest.Conn
	slow      net.Conn
	slowID    string
	slowAlive bool // the slow subscriber still counts as a receiver
	seq       int  // messages published on "ch"
	bigSent   int  // messages published on "big"
	fast      []*fastSubscriber
	wg        sync.WaitGroup
}

// fastSubscriber reads every message of "ch" and checks it is the next one.
type fastSubscriber struct {
	conn net.Conn
	got  atomic.Int64
	mu   sync.Mutex
	bad  string // the first unexpected reply, or the read error before the end
}

func newFanout(t *testing.T) *fanout {
	pub, clk, addr := start(t)
	mustDo(t, pub, array(bulk("client-output-buffer-limit"), bulk("normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60")),
		"CONFIG", "GET", "client-output-buffer-limit")
	f := &fanout{t: t, clk: clk, pub: pub, slowAlive: true}
	t.Cleanup(f.close)

	slow := redistest.Dial(t, addr)
	f.slow = slow.NetConn()
	f.slow.(*net.TCPConn).SetReadBuffer(64 << 10) // a small window: the server's queue fills
	id := slow.Do("CLIENT", "ID")
	f.slowID = strings.TrimSpace(strings.TrimPrefix(id, ":"))
	if err := slow.Write(redistest.Encode("SUBSCRIBE", "ch", "big")); err != nil {
		t.Fatal(err)
	}
	// from here on the slow subscriber reads nothing

	for range fanoutSubscribers {
		f.fast = append(f.fast, f.dialFast(addr))
	}
	waitNumSub(t, pub, "ch", fanoutSubscribers+1)
	waitNumSub(t, pub, "big", 1)
	return f
}

func (f *fanout) dialFast(addr string) *fastSubscriber {
	c, err := net.DialTimeout("tcp", addr, redistest.Timeout)
	if err != nil {
		f.t.Fatal(err)
	}
	s := &fastSubscriber{conn: c}
	if _, err := c.Write(redistest.Encode("SUBSCRIBE", "ch")); err != nil {
		f.t.Fatal(err)
	}
	rd := bufio.NewReader(c)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		var r strings.Builder
		if err := redistest.ReadReply(rd, &r); err != nil || r.String() != array(bulk("subscribe"), bulk("ch"), num(1)) {
			s.fail(fmt.Sprintf("confirmation %q (%v)", r.String(), err))
			return
		}
		for i := 0; ; i++ {
			r.Reset()
			if err := redistest.ReadReply(rd, &r); err != nil {
				s.fail(fmt.Sprintf("after %d messages: %v", i, err)) // expected once closed
				return
			}
			if want := array(bulk("message"), bulk("ch"), bulk(strconv.Itoa(i))); r.String() != want {
				s.fail(fmt.Sprintf("message %d: %q, want %q", i, r.String(), want))
				return
			}
			s.got.Add(1)
		}
	}()
	return s
}

func (s *fastSubscriber) fail(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bad == "" {
		s.bad = msg
	}
}

// publishSeq publishes the next numbered message on "ch": every fast subscriber
// receives it, and the slow one until it is disconnected.
func (f *fanout) publishSeq() {
	f.t.Helper()
	n := f.publish("ch", strconv.Itoa(f.seq))
	f.seq++
	switch {
	case n == fanoutSubscribers+1 && f.slowAlive:
	case n == fanoutSubscribers:
		f.slowAlive = false
	default:
		f.t.Fatalf("PUBLISH ch reached %d subscribers (slow one alive: %v)", n, f.slowAlive)
	}
}

// publishBig publishes a big message on "big", the slow subscriber's alone.
func (f *fanout) publishBig() {
	f.t.Helper()
	n := f.publish("big", strings.Repeat("b", fanoutBigPayload))
	f.bigSent++
	switch {
	case n == 1 && f.slowAlive:
	case n == 0:
		f.slowAlive = false
	default:
		f.t.Fatalf("PUBLISH big reached %d subscribers (slow one alive: %v)", n, f.slowAlive)
	}
}

// publish sends PUBLISH and returns its count. A reply that does not come
// within redistest.Timeout fails the test: the executor must not be held up.
func (f *fanout) publish(channel, msg string) int {
	f.t.Helper()
	got, err := f.pub.DoErr("PUBLISH", channel, msg)
	if err != nil {
		f.t.Fatalf("PUBLISH %s after %d messages: no reply: %v", channel, f.seq+f.bigSent, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(got, ":")))
	if err != nil {
		f.t.Fatalf("PUBLISH %s: %q", channel, got)
	}
	return n
}

// slowOmem is the slow subscriber's omem in CLIENT LIST, -1 once it is gone.
func (f *fanout) slowOmem() int {
	f.t.Helper()
	line := f.pub.Do("CLIENT", "LIST", "ID", f.slowID)
	for _, field := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(field, "omem="); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				f.t.Fatalf("CLIENT LIST: %q", line)
			}
			return n
		}
	}
	return -1
}

// waitSlowGone polls until the slow subscriber is no longer subscribed.
func (f *fanout) waitSlowGone() {
	f.t.Helper()
	for end := time.Now().Add(redistest.Timeout); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if f.pub.Do("PUBSUB", "NUMSUB", "big") == array(bulk("big"), num(0)) {
			f.slowAlive = false
			return
		}
	}
}

// finish publishes a few more messages with the slow subscriber gone, then
// checks its socket was closed and every fast subscriber got every message.
func (f *fanout) finish() {
	t := f.t
	t.Helper()
	for range 10 {
		f.publishSeq()
	}
	if f.slowAlive {
		t.Fatal("PUBLISH still counts the slow subscriber")
	}
	mustDo(t, f.pub, array(bulk("big"), num(0), bulk("ch"), num(fanoutSubscribers)), "PUBSUB", "NUMSUB", "big", "ch")
	if om := f.slowOmem(); om != -1 {
		t.Fatalf("the slow subscriber is still in CLIENT LIST (omem %d)", om)
	}
	// the slow subscriber's socket ends, after what the kernel held for it
	f.slow.SetReadDeadline(time.Now().Add(4 * redistest.Timeout))
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.slow.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the slow subscriber's connection was not closed")
			}
			break
		}
	}
	// every fast subscriber receives all f.seq messages, in order
	for end := time.Now().Add(6 * redistest.Timeout); ; time.Sleep(10 * time.Millisecond) {
		behind := 0
		for _, s := range f.fast {
			if s.got.Load() < int64(f.seq) {
				behind++
			}
		}
		if behind == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%d of %d fast subscribers did not receive all %d messages", behind, len(f.fast), f.seq)
		}
	}
	f.close()
	for i, s := range f.fast {
		if got := s.got.Load(); got != int64(f.seq) {
			t.Errorf("fast subscriber %d: %d messages, want %d (%s)", i, got, f.seq, s.bad)
		} else if !strings.HasPrefix(s.bad, fmt.Sprintf("after %d messages:", f.seq)) {
			t.Errorf("fast subscriber %d: %s", i, s.bad) // anything but the close after the last
		}
	}
}

// close closes every subscriber and waits for the readers.
func (f *fanout) close() {
	for _, s := range f.fast {
		s.conn.Close()
	}
	f.slow.Close()
	f.wg.Wait()
}
