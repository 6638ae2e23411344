package myredis

import (
	"testing"
	"time"
)

// TestNotifyClasses: every class letter parses to its bit and CONFIG GET's
// string is Redis's canonical one (A alone; n hidden under A; K, E, m last).
func TestNotifyClasses(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"", ""}, {"K", "K"}, {"E", "E"}, {"g", "g"}, {"$", "$"}, {"l", "l"}, {"s", "s"},
		{"h", "h"}, {"z", "z"}, {"x", "x"}, {"e", "e"}, {"t", "t"}, {"m", "m"}, {"d", "d"},
		{"n", "n"}, {"A", "A"}, {"KEA", "AKE"}, {"EKA", "AKE"}, {"An", "A"}, {"Am", "Am"},
		{"zhsl$g", "g$lshz"}, {"g$lshzxetd", "A"}, {"g$lshzxet", "g$lshzxet"},
		{"mEKnx", "xnKEm"}, {"gg", "g"},
	} {
		flags, err := parseNotifyClasses(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if got := formatNotifyClasses(flags); got != tc.out {
			t.Errorf("%q: CONFIG GET %q, want %q", tc.in, got, tc.out)
		}
	}
	for _, bad := range []string{"a", "KEAq", " ", "K E", "*"} {
		if _, err := parseNotifyClasses(bad); err == nil || err.Error() != msgNotifyClasses {
			t.Errorf("%q: error %v, want %q", bad, err, msgNotifyClasses)
		}
	}
}

// notifyServer is a server with notify-keyspace-events set, a client that
// subscribed to __key*__:* whose messages collect in got, and a fake clock.
func notifyServer(t *testing.T, classes string) (s *Server, run func(args ...string), got func() []string, clk *manualClock) {
	t.Helper()
	clk = &manualClock{now: time.Unix(1893553445, 0)}
	s = New(Config{}, WithClock(clk))
	t.Cleanup(func() { s.Close() })
	sub := newClient(s, nil)
	c := newClient(s, nil)
	c.authed = true
	s.submit(func() {
		s.subscribe(sub, subPattern, "__key*__:*", &Writer{})
		s.runningClient = sub // messages to sub land in its batch writer, sub.out
		s.call(c, bargs("CONFIG", "SET", "notify-keyspace-events", classes), &Writer{})
	})
	run = func(args ...string) {
		s.submit(func() {
			s.runningClient = sub
			s.call(c, bargs(args...), &Writer{})
		})
	}
	got = func() []string {
		var out []string
		s.submit(func() {
			out = splitPMessages(t, sub.out.Bytes())
			sub.out.Reset()
		})
		return out
	}
	return s, run, got, clk
}

// splitPMessages reads RESP2 pmessages into "channel payload" strings.
func splitPMessages(t *testing.T, b []byte) []string {
	var out []string
	for len(b) > 0 {
		parts, rest, ok := readPMessage(b)
		if !ok || len(parts) != 4 {
			t.Fatalf("not a pmessage: %q", b)
		}
		out = append(out, parts[2]+" "+parts[3])
		b = rest
	}
	return out
}

func readPMessage(b []byte) (parts []string, rest []byte, ok bool) {
	line := func() (string, bool) {
		for i := 0; i+1 < len(b); i++ {
			if b[i] == '\r' && b[i+1] == '\n' {
				l := string(b[:i])
				b = b[i+2:]
				return l, true
			}
		}
		return "", false
	}
	head, ok := line()
	if !ok || head[0] != '*' {
		return nil, nil, false
	}
	n, _ := parseRedisInt([]byte(head[1:]))
	for range n {
		h, ok := line()
		if !ok || h[0] != '$' {
			return nil, nil, false
		}
		size, _ := parseRedisInt([]byte(h[1:]))
		parts = append(parts, string(b[:size]))
		b = b[size+2:]
	}
	return parts, b, true
}

func sameEvents(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("events:\n got  %q\n want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("events:\n got  %q\n want %q", got, want)
		}
	}
}

// TestNotifyExpired: "expired" from a read of an expired key (lazy) and from
// the active cycle, on the fake clock; none while the class is off.
func TestNotifyExpired(t *testing.T) {
	s, run, got, clk := notifyServer(t, "Ex")
	run("SET", "lazy", "v", "PX", "100")
	run("SET", "active", "v", "PX", "100")
	run("SET", "kept", "v")
	sameEvents(t, got(), nil) // set and expire are not in class x
	clk.Advance(time.Second)
	run("GET", "lazy")
	sameEvents(t, got(), []string{"__keyevent@0__:expired lazy"})
	s.submit(func() {
		s.expire.now = func() time.Time { return time.Unix(0, 0) } // a CPU budget that never runs out
		s.activeExpireSlow()
	})
	sameEvents(t, got(), []string{"__keyevent@0__:expired active"})
	run("CONFIG", "SET", "notify-keyspace-events", "Eg")
	run("SET", "quiet", "v", "PX", "100")
	clk.Advance(time.Second)
	run("GET", "quiet")
	sameEvents(t, got(), []string{"__keyevent@0__:expire quiet"})
}

// TestNotifyOffIsQuiet: with notifications off (the default) no command
// publishes anything, and turning them off stops the events.
func TestNotifyOffIsQuiet(t *testing.T) {
	_, run, got, _ := notifyServer(t, "")
	run("SET", "a", "1")
	run("LPUSH", "l", "x")
	run("DEL", "a", "l")
	sameEvents(t, got(), nil)
	run("CONFIG", "SET", "notify-keyspace-events", "Kg")
	run("SET", "a", "1")
	run("DEL", "a")
	sameEvents(t, got(), []string{"__keyspace@0__:a del"})
	run("CONFIG", "SET", "notify-keyspace-events", "")
	run("SET", "a", "1")
	run("DEL", "a")
	sameEvents(t, got(), nil)
}

// BenchmarkSetNotifyOff is SET with notifications off: the hook's cost is one
// branch (compare BenchmarkSetNotifyOnNoSubscriber).
func BenchmarkSetNotifyOff(b *testing.B) {
	s := benchServer(b)
	benchCall(b, s, argv("SET", "key", "value"), "+OK\r\n")
}

// BenchmarkSetNotifyOnNoSubscriber is SET with KEA on and nobody listening.
func BenchmarkSetNotifyOnNoSubscriber(b *testing.B) {
	s := benchServer(b)
	s.submit(func() { s.cfg.NotifyEvents = notifyAll | notifyKeyspace | notifyKeyevent })
	benchCall(b, s, argv("SET", "key", "value"), "+OK\r\n")
}
