package myredis_test

import (
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// waitField polls INFO until field has value; generous for a loaded machine.
func waitField(t *testing.T, c *redistest.Conn, section, field, value string) {
	t.Helper()
	var got string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if got = infoFields(t, c.Do("INFO", section))[field]; got == value {
			return
		}
	}
	t.Fatalf("INFO %s stayed %q, want %q", field, got, value)
}

// sendCmds writes commands without reading their replies (a deferring client).
func sendCmds(t *testing.T, c *redistest.Conn, cmds ...[]string) {
	t.Helper()
	var b []byte
	for _, cmd := range cmds {
		b = append(b, redistest.Encode(cmd...)...)
	}
	if err := c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// expectReplies reads one reply per want, in order.
func expectReplies(t *testing.T, c *redistest.Conn, wants ...string) {
	t.Helper()
	for i, want := range wants {
		got, err := c.Read()
		if err != nil || got != want {
			t.Fatalf("reply %d: got %q (%v), want %q", i+1, got, err, want)
		}
	}
}

// TestClientPauseWrite: under CLIENT PAUSE WRITE reads run, a write waits
// (with the rest of its pipeline) as a blocked client until UNPAUSE, then
// runs; the pausing client and others keep being served meanwhile.
func TestClientPauseWrite(t *testing.T) {
	c, _, addr := start(t)
	mustDo(t, c, ok, "SET", "k", "v")
	mustDo(t, c, ok, "CLIENT", "PAUSE", "100000", "WRITE")
	w := redistest.Dial(t, addr)
	sendCmds(t, w, []string{"PING"}, []string{"SET", "k", "w"}, []string{"GET", "k"})
	expectReplies(t, w, simple("PONG")) // before the write: answered at once
	waitField(t, c, "clients", "blocked_clients", "1")
	mustDo(t, c, bulk("v"), "GET", "k") // the write has not run
	r := redistest.Dial(t, addr)
	mustDo(t, r, bulk("v"), "GET", "k")
	mustDo(t, r, arity("set"), "SET", "k") // refused at once, as Redis
	list := c.Do("CLIENT", "LIST")
	if !strings.Contains(list, "flags=b ") {
		t.Fatalf("CLIENT LIST shows no postponed (b) client:\n%s", list)
	}
	mustDo(t, c, ok, "CLIENT", "UNPAUSE")
	expectReplies(t, w, ok, bulk("w"))
	waitField(t, c, "clients", "blocked_clients", "0")
}

// serverInfo polls the server's own INFO (an internal client, which no pause
// stops) until field has value.
func serverInfo(t *testing.T, srv *myredis.Server, field, value string) {
	t.Helper()
	var got string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if got = infoFields(t, string(srv.Do("INFO")))[field]; got == value {
			return
		}
	}
	t.Fatalf("INFO %s stayed %q, want %q", field, got, value)
}

// TestClientPauseAll: CLIENT PAUSE ALL stops every command, reads and the
// pausing client's own UNPAUSE included, until the timeout passes.
func TestClientPauseAll(t *testing.T) {
	clk := newFakeClock()
	srv, addr := redistest.StartMyRedisConfig(t, myredis.Config{}, myredis.WithClock(clk))
	c := redistest.Dial(t, addr)
	mustDo(t, c, ok, "SET", "k", "v")
	mustDo(t, c, ok, "CLIENT", "PAUSE", "500", "ALL")
	r := redistest.Dial(t, addr)
	sendCmds(t, r, []string{"GET", "k"})
	sendCmds(t, c, []string{"CLIENT", "UNPAUSE"})
	serverInfo(t, srv, "blocked_clients", "2")
	clk.Advance(time.Second) // past the end: the pause's timer lets them go
	expectReplies(t, r, bulk("v"))
	expectReplies(t, c, ok)
	serverInfo(t, srv, "blocked_clients", "0")
}

// TestClientPauseCovers: what a WRITE pause stops, as Redis 7.0.15's
// is_may_replicate_command: writes, PUBLISH, PFCOUNT, scripts unless they
// declare no-writes, EXEC of a transaction holding a write; not reads, not
// EVAL_RO, not a read-only transaction.
func TestClientPauseCovers(t *testing.T) {
	c, _, addr := start(t)
	mustDo(t, c, num(1), "PFADD", "h", "a")
	mustDo(t, c, bulk("lib"), "FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function{function_name='ro', callback=function() return 'ro' end, flags={'no-writes'}}\nredis.register_function('rw', function() return 'rw' end)")
	roEval := "#!lua flags=no-writes\nreturn 7"
	wtx := redistest.Dial(t, addr) // queued before the pause
	mustDo(t, wtx, ok, "MULTI")
	mustDo(t, wtx, queued, "INCR", "n")
	mustDo(t, c, ok, "CLIENT", "PAUSE", "100000", "WRITE")
	for _, cmd := range [][]string{
		{"GET", "x"}, {"EVAL_RO", "return 1", "0"}, {"EVAL", roEval, "0"}, {"FCALL", "ro", "0"},
		{"FCALL_RO", "ro", "0"}, {"PUBSUB", "CHANNELS"}, {"TTL", "h"},
	} {
		r := redistest.Dial(t, addr)
		if got := r.Do(cmd...); strings.HasPrefix(got, "-") {
			t.Fatalf("%v under a write pause: %q", cmd, got)
		}
	}
	tx := redistest.Dial(t, addr)
	mustDo(t, tx, ok, "MULTI")
	mustDo(t, tx, queued, "GET", "x")
	mustDo(t, tx, queued, "EVAL", roEval, "0")
	mustDo(t, tx, array(null, num(7)), "EXEC")

	stopped := [][]string{
		{"SET", "k", "v"}, {"PUBLISH", "ch", "m"}, {"PFCOUNT", "h"}, {"EVAL", "return 1", "0"},
		{"EVAL", "#!lua\nreturn 2", "0"}, {"FCALL", "rw", "0"},
	}
	var conns []*redistest.Conn
	for _, cmd := range stopped {
		w := redistest.Dial(t, addr)
		sendCmds(t, w, cmd)
		conns = append(conns, w)
	}
	sendCmds(t, wtx, []string{"EXEC"})
	queueing := redistest.Dial(t, addr) // as Redis 7.0: queueing a write waits too
	mustDo(t, queueing, ok, "MULTI")
	sendCmds(t, queueing, []string{"SET", "q", "1"}, []string{"EXEC"})
	waitField(t, c, "clients", "blocked_clients", "8")
	mustDo(t, c, ok, "CLIENT", "UNPAUSE")
	wants := []string{ok, num(0), num(1), num(1), num(2), bulk("rw")}
	for i, w := range conns {
		expectReplies(t, w, wants[i])
	}
	expectReplies(t, wtx, array(num(1)))
	expectReplies(t, queueing, queued, array(ok))
}

// TestClientPauseKeepsExpiredKeys: during a pause keys past their TTL read as
// missing but are neither deleted by readers nor by active expiry
// (expired_keys stays), as Redis keeps the dataset still; after UNPAUSE the
// next access deletes them.
func TestClientPauseKeepsExpiredKeys(t *testing.T) {
	c, clk, _ := start(t)
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, queued, "SET", "a", "1", "PX", "10")
	mustDo(t, c, queued, "SET", "b", "1", "PX", "10")
	mustDo(t, c, queued, "CLIENT", "PAUSE", "100000", "WRITE")
	mustDo(t, c, array(ok, ok, ok), "EXEC")
	clk.Advance(time.Second)
	mustDo(t, c, null, "GET", "a")
	mustDo(t, c, null, "GET", "b")
	mustDo(t, c, num(2), "DBSIZE")
	waitField(t, c, "stats", "expired_keys", "0")
	mustDo(t, c, ok, "CLIENT", "UNPAUSE")
	mustDo(t, c, null, "GET", "a")
	mustDo(t, c, null, "GET", "b")
	waitField(t, c, "stats", "expired_keys", "2")
}

// TestClientPauseUnblock: CLIENT UNBLOCK ERROR answers a postponed client
// -UNBLOCKED, and its command, sent again, waits again (as in Redis, where the
// client's command is reprocessed); a closed postponed client is forgotten.
func TestClientPauseUnblock(t *testing.T) {
	c, _, addr := start(t)
	mustDo(t, c, ok, "CLIENT", "PAUSE", "100000", "WRITE")
	w := redistest.Dial(t, addr)
	id := strings.TrimSuffix(strings.TrimPrefix(w.Do("CLIENT", "ID"), ":"), "\r\n")
	sendCmds(t, w, []string{"SET", "k", "v"})
	waitField(t, c, "clients", "blocked_clients", "1")
	mustDo(t, c, num(1), "CLIENT", "UNBLOCK", id, "ERROR")
	expectReplies(t, w, errRe("UNBLOCKED client unblocked via CLIENT UNBLOCK"))
	waitField(t, c, "clients", "blocked_clients", "1")
	gone := redistest.Dial(t, addr)
	sendCmds(t, gone, []string{"SET", "g", "v"})
	waitField(t, c, "clients", "blocked_clients", "2")
	gone.Close()
	waitField(t, c, "clients", "blocked_clients", "1")
	mustDo(t, c, ok, "CLIENT", "UNPAUSE")
	expectReplies(t, w, ok)
	mustDo(t, c, bulk("v"), "GET", "k")
	mustDo(t, c, null, "GET", "g")
}
