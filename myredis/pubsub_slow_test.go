package myredis_test

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// TestPubSubSlowSubscriber: one subscriber that never reads and many that do.
// The publisher is answered for every message, the fast subscribers get every
// message, and the slow one is disconnected by the pubsub hard limit (small
// here), never holding up the executor.
func TestPubSubSlowSubscriber(t *testing.T) {
	const fast = 50
	const payloadSize = 16 << 10
	_, _, addr := start(t)
	pub := redistest.Dial(t, addr)
	mustDo(t, pub, ok, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0")

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.(*net.TCPConn).SetReadBuffer(64 << 10) // a fixed window: the server's queue fills
	slow.Write(redistest.Encode("SUBSCRIBE", "ch"))

	var received atomic.Int64
	var wg sync.WaitGroup
	subs := make([]net.Conn, fast)
	for i := range subs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		subs[i] = c
		c.Write(redistest.Encode("SUBSCRIBE", "ch"))
		rd := bufio.NewReaderSize(c, 64<<10)
		var confirm strings.Builder
		if err := redistest.ReadReply(rd, &confirm); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { // a fast subscriber: reads and counts messages until closed
			defer wg.Done()
			for {
				var m strings.Builder
				if redistest.ReadReply(rd, &m) != nil {
					return
				}
				received.Add(1)
			}
		}()
	}
	waitNumSub(t, pub, "ch", fast+1)

	payload := strings.Repeat("x", payloadSize)
	sent := int64(0)
	slowGone := false
	for round := 0; round < 100 && !slowGone; round++ {
		for i := 0; i < 8; i++ {
			got := pub.Do("PUBLISH", "ch", payload)
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(got, ":")))
			if err != nil {
				t.Fatalf("PUBLISH: %q", got)
			}
			sent++
			if n == fast {
				slowGone = true // the slow one is no longer a receiver
			} else if n != fast+1 {
				t.Fatalf("PUBLISH reached %d subscribers, want %d or %d", n, fast+1, fast)
			}
		}
		// let the fast ones keep up, so only the slow one can fill its queue
		for end := time.Now().Add(10 * time.Second); received.Load() < sent*fast; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("fast subscribers received %d of %d messages", received.Load(), sent*fast)
			}
		}
	}
	if !slowGone {
		t.Fatalf("the slow subscriber was never disconnected after %d messages", sent)
	}
	// the slow subscriber's socket ends (after what the kernel held for it)
	slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64<<10)
	total := 0
	for {
		n, err := slow.Read(buf)
		total += n
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the slow subscriber's connection was not closed (%d bytes read)", total)
			}
			break
		}
	}
	mustDo(t, pub, array(bulk("ch"), num(fast)), "PUBSUB", "NUMSUB", "ch")
	for _, c := range subs {
		c.Close()
	}
	wg.Wait()
	if got := received.Load(); got != sent*fast {
		t.Fatalf("fast subscribers received %d messages, want %d", got, sent*fast)
	}
}

// waitNumSub polls PUBSUB NUMSUB until channel has n subscribers.
func waitNumSub(t *testing.T, c *redistest.Conn, channel string, n int) {
	t.Helper()
	want := array(bulk(channel), num(int64(n)))
	var got string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if got = c.Do("PUBSUB", "NUMSUB", channel); got == want {
			return
		}
	}
	t.Fatalf("PUBSUB NUMSUB %s: %q, want %q", channel, got, want)
}

// TestPubSubSoftLimit: a subscriber over the soft limit is disconnected once it
// has stayed over it for longer than the soft seconds (the fake clock), not before.
func TestPubSubSoftLimit(t *testing.T) {
	pub, clk, addr := start(t)
	mustDo(t, pub, ok, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 64kb 5")
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.(*net.TCPConn).SetReadBuffer(64 << 10)
	slow.Write(redistest.Encode("SUBSCRIBE", "ch"))
	waitNumSub(t, pub, "ch", 1)
	payload := strings.Repeat("y", 16<<10)
	// The kernel's send buffer may still grow and take part of the queue, which
	// restarts the soft-limit clock (as in Redis); then try again.
	for attempt := 0; attempt < 20; attempt++ {
		for i := 0; omem(pub.Do("CLIENT", "LIST")) < 64<<10; i++ {
			if i == 2000 {
				t.Fatal("the subscriber's queue never passed the soft limit")
			}
			mustDo(t, pub, num(1), "PUBLISH", "ch", payload)
		}
		mustDo(t, pub, num(1), "PUBLISH", "ch", payload) // over the limit since now
		clk.Advance(5 * time.Second)
		mustDo(t, pub, num(1), "PUBLISH", "ch", payload) // for 5 s: not longer yet
		if omem(pub.Do("CLIENT", "LIST")) < 0 {
			t.Fatal("closed before the soft limit's seconds passed")
		}
		clk.Advance(1 * time.Second)
		mustDo(t, pub, num(1), "PUBLISH", "ch", payload) // longer than 5 s: closed
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
			if pub.Do("PUBSUB", "NUMSUB", "ch") == array(bulk("ch"), num(0)) {
				return
			}
		}
	}
	t.Fatal("the subscriber over the soft limit was never disconnected")
}

// omem is the omem of the CLIENT LIST line with sub=1, -1 if none.
func omem(list string) int {
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " sub=1 ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "omem="); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
	}
	return -1
}
