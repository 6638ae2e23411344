package myredis_test

import (
	"strconv"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

// infoLineFields reads a CLIENT INFO or CLIENT LIST line into its fields.
func infoLineFields(t *testing.T, line string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}

// clientInfoText is a bulk reply's text.
func clientInfoText(t *testing.T, reply string) string {
	t.Helper()
	head, body, ok := strings.Cut(reply, "\r\n")
	if !ok || !strings.HasPrefix(head, "$") {
		t.Fatalf("not a bulk reply: %q", reply)
	}
	return strings.TrimSuffix(body, "\r\n")
}

// TestClientInfoBuffers: CLIENT INFO's buffer fields are the client's own
// figures, as Redis defines them. The running request is in the query buffer
// (qbuf, 26 bytes for CLIENT INFO) and its arguments in argv-mem; a reply
// written earlier in the same batch is in obl; a queued MULTI's arguments are
// multi-mem (bytes plus a pointer each); the reply buffer's size and peak are
// rbs and rbp; tot-mem holds them all.
func TestClientInfoBuffers(t *testing.T) {
	c, _, addr := start(t)
	f := infoLineFields(t, clientInfoText(t, c.Do("CLIENT", "INFO")))
	if f["qbuf"] != 26 || f["argv-mem"] != int64(len("CLIENT")+len("INFO")) || f["obl"] != 0 || f["multi-mem"] != 0 {
		t.Fatalf("CLIENT INFO alone: %v", f)
	}
	if f["tot-mem"] < f["qbuf"]+f["qbuf-free"]+f["argv-mem"] {
		t.Fatalf("tot-mem %d is less than the query buffer and arguments: %v", f["tot-mem"], f)
	}

	replies := c.Pipeline([]string{"PING"}, []string{"CLIENT", "INFO"})
	f = infoLineFields(t, clientInfoText(t, replies[1]))
	if f["obl"] != int64(len("+PONG\r\n")) || f["qbuf"] != 14+26 {
		t.Fatalf("CLIENT INFO after PING in one batch: obl=%d qbuf=%d, want 7 and 40", f["obl"], f["qbuf"])
	}

	mustDo(t, c, "+OK\r\n", "SET", "v", strings.Repeat("x", 1000))
	c.Do("GET", "v")
	f = infoLineFields(t, clientInfoText(t, c.Do("CLIENT", "INFO")))
	if f["rbp"] < 1000 || f["rbp"] > f["rbs"] {
		t.Fatalf("after a 1000-byte reply: rbp=%d rbs=%d", f["rbp"], f["rbs"])
	}

	m := redistest.Dial(t, addr)
	mustDo(t, m, "+OK\r\n", "CLIENT", "SETNAME", "tx")
	mustDo(t, m, "+OK\r\n", "MULTI")
	mustDo(t, m, "+QUEUED\r\n", "SET", "k", strings.Repeat("y", 100))
	mustDo(t, m, "+QUEUED\r\n", "INCR", "n")
	want := int64(3+1+100+8*3) + int64(4+1+8*2)
	if got := clientField(t, c, "tx", "multi-mem"); got != want {
		t.Fatalf("multi-mem=%d, want %d", got, want)
	}
	if got := clientField(t, c, "tx", "argv-mem"); got != 0 {
		t.Fatalf("argv-mem=%d between commands", got)
	}
	mustDo(t, m, "*2\r\n+OK\r\n:1\r\n", "EXEC")
	if got := clientField(t, c, "tx", "multi-mem"); got != 0 {
		t.Fatalf("multi-mem=%d after EXEC", got)
	}
}

// TestBlockedClientArgvMem: a blocked command keeps its arguments (argv-mem)
// until it is served, as Redis keeps a blocked client's argv, and is counted
// in clients_in_timeout_table when it has a timeout.
func TestBlockedClientArgvMem(t *testing.T) {
	c, _, addr := start(t)
	b := redistest.Dial(t, addr)
	mustDo(t, b, "+OK\r\n", "CLIENT", "SETNAME", "blk")
	if err := b.Write(redistest.Encode("BLPOP", "list", "100")); err != nil {
		t.Fatal(err)
	}
	waitInfo(t, c, "blocked_clients", "1")
	if got := clientField(t, c, "blk", "argv-mem"); got != int64(len("BLPOP")+len("list")+len("100")) {
		t.Fatalf("blocked BLPOP argv-mem=%d", got)
	}
	if got := infoInt(t, c, "clients_in_timeout_table"); got != 1 {
		t.Fatalf("clients_in_timeout_table=%d with one BLPOP waiting 100 s", got)
	}
	mustDo(t, c, ":1\r\n", "RPUSH", "list", "a")
	if got, err := b.Read(); err != nil || got != "*2\r\n$4\r\nlist\r\n$1\r\na\r\n" {
		t.Fatalf("BLPOP: %q %v", got, err)
	}
	pollUntil(t, func() bool { return clientField(t, c, "blk", "argv-mem") == 0 },
		func() string { return "argv-mem stayed after the BLPOP was served" })
}

// TestInfoClientsRecentMaxInput: INFO's client_recent_max_input_buffer is
// the biggest query buffer and arguments a client had lately: a client
// holding most of a 1 MB request shows there.
func TestInfoClientsRecentMaxInput(t *testing.T) {
	c, _, addr := start(t)
	big := redistest.Dial(t, addr)
	req := redistest.Encode("SET", "k", strings.Repeat("v", 1<<20))
	if err := big.Write(req[:len(req)-10]); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, func() bool { return infoInt(t, c, "client_recent_max_input_buffer") >= int64(len(req)-10) },
		func() string { return "client_recent_max_input_buffer never saw the big request" })
	if got := infoInt(t, c, "client_recent_max_output_buffer"); got != 0 {
		t.Fatalf("client_recent_max_output_buffer=%d with no output waiting", got)
	}
	if err := big.Write(req[len(req)-10:]); err != nil {
		t.Fatal(err)
	}
	if got, err := big.Read(); err != nil || got != "+OK\r\n" {
		t.Fatalf("SET: %q %v", got, err)
	}
}
