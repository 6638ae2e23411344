package myredis_test

import (
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// waitInfo polls INFO clients until field has value; it fails the test if that
// never happens. (A deadline on a condition, not a timing assertion.)
func waitInfo(t *testing.T, c *redistest.Conn, field, value string) {
	t.Helper()
	var got string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if got = infoFields(t, c.Do("INFO", "clients"))[field]; got == value {
			return
		}
	}
	t.Fatalf("INFO %s stayed %q, want %q", field, got, value)
}

// TestBlockedClientDisconnect closes the socket of a client blocked in a blocking
// command: the server must drop it from the wait list, so the next write is not
// served to a dead socket, and from connected_clients/blocked_clients.
func TestBlockedClientDisconnect(t *testing.T) {
	for _, cmd := range [][]string{
		{"BZPOPMIN", "q", "0"},
		{"BZPOPMAX", "q", "0"},
		{"BZPOPMIN", "other", "q", "100"},
		{"BZPOPMAX", "q", "0.5"}, // closes long before the timeout fires
	} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			c, _, addr := start(t)
			waitInfo(t, c, "connected_clients", "1")
			blocked := redistest.Dial(t, addr)
			if err := blocked.Write(redistest.Encode(cmd...)); err != nil {
				t.Fatal(err)
			}
			waitInfo(t, c, "blocked_clients", "1")
			blocked.Close()
			waitInfo(t, c, "blocked_clients", "0")
			waitInfo(t, c, "connected_clients", "1")
			mustDo(t, c, num(1), "ZADD", "q", "1", "a")
			mustDo(t, c, num(1), "ZCARD", "q")
		})
	}
}

// TestBlockedClientKeepsInput checks that what a blocked client sends while it
// waits is kept, in order, and run once it is served.
func TestBlockedClientKeepsInput(t *testing.T) {
	c, _, addr := start(t)
	blocked := redistest.Dial(t, addr)
	if err := blocked.Write(redistest.Encode("BZPOPMIN", "q", "0")); err != nil {
		t.Fatal(err)
	}
	waitInfo(t, c, "blocked_clients", "1")
	if err := blocked.Write(append(redistest.Encode("ECHO", "after"), redistest.Encode("ZCARD", "q")...)); err != nil {
		t.Fatal(err)
	}
	mustDo(t, c, num(2), "ZADD", "q", "1", "a", "2", "b")
	for _, want := range []string{bulks("q", "a", "1"), bulk("after"), num(1)} {
		got, err := blocked.Read()
		if err != nil || got != want {
			t.Fatalf("blocked client got %q (%v), want %q", got, err, want)
		}
	}
	mustDo(t, blocked, simple("PONG"), "PING")
	waitInfo(t, c, "blocked_clients", "0")
}

// TestBlockedListClientDisconnect is TestBlockedClientDisconnect for the
// blocking list commands and BZMPOP: a dead waiter takes nothing.
func TestBlockedListClientDisconnect(t *testing.T) {
	for _, tc := range []struct {
		cmd        []string
		push, left []string // the write after the close, and the read that shows nothing was taken
		want       string
	}{
		{[]string{"BLPOP", "l", "0"}, []string{"RPUSH", "l", "a"}, []string{"LLEN", "l"}, num(1)},
		{[]string{"BRPOP", "l", "0"}, []string{"RPUSH", "l", "a"}, []string{"LLEN", "l"}, num(1)},
		{[]string{"BLMOVE", "l", "dst", "LEFT", "RIGHT", "0"}, []string{"RPUSH", "l", "a"}, []string{"LLEN", "l"}, num(1)},
		{[]string{"BRPOPLPUSH", "l", "dst", "0"}, []string{"RPUSH", "l", "a"}, []string{"LLEN", "l"}, num(1)},
		{[]string{"BLMPOP", "0", "1", "l", "LEFT"}, []string{"RPUSH", "l", "a"}, []string{"LLEN", "l"}, num(1)},
		{[]string{"BZMPOP", "0", "1", "q", "MIN"}, []string{"ZADD", "q", "1", "a"}, []string{"ZCARD", "q"}, num(1)},
	} {
		t.Run(strings.Join(tc.cmd, " "), func(t *testing.T) {
			c, _, addr := start(t)
			blocked := redistest.Dial(t, addr)
			if err := blocked.Write(redistest.Encode(tc.cmd...)); err != nil {
				t.Fatal(err)
			}
			waitInfo(t, c, "blocked_clients", "1")
			blocked.Close()
			waitInfo(t, c, "blocked_clients", "0")
			waitInfo(t, c, "connected_clients", "1")
			mustDo(t, c, num(1), tc.push...)
			mustDo(t, c, tc.want, tc.left...)
		})
	}
}
