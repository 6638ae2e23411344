package myredis_test

// Differential keyspace-notification tests: needs redis-server (skipped without
// it). Every sequence of testdata/compat (the command scripts of TestCompat) and
// the cases below runs on a real Redis and on MyRedis with
// notify-keyspace-events set, while a second connection listens with PSUBSCRIBE
// __key*__:*; the events each server publishes, in order, must be the same.

import (
	"bufio"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// notifyDiffCases are sequences written for notifications (the testdata cases
// were written for replies). "@2" and "!" work as in TestCompat; "SLEEP ms"
// pauses the test, not a server (real Redis refuses DEBUG by default).
var notifyDiffCases = []diffCase{
	{"every class letter", [][]string{
		{"CONFIG", "SET", "notify-keyspace-events", "KEg$lshzxetdnm"},
		{"CONFIG", "GET", "notify-keyspace-events"},
		{"SET", "a", "1"}, {"LPUSH", "l", "x"}, {"GET", "missing"}, {"DEL", "a", "l"},
		{"CONFIG", "SET", "notify-keyspace-events", "Kl"},
		{"LPUSH", "l", "x"}, {"SET", "a", "2"}, {"RPOP", "l"},
		{"CONFIG", "SET", "notify-keyspace-events", "E$"},
		{"SET", "a", "3"}, {"APPEND", "a", "x"}, {"SADD", "s", "m"},
		{"CONFIG", "SET", "notify-keyspace-events", "Em"},
		{"GET", "nokey"}, {"HGET", "nokey", "f"}, {"SET", "nokey", "v"}, {"LRANGE", "nolist", "0", "-1"},
		{"CONFIG", "SET", "notify-keyspace-events", "KEA"},
	}},
	{"new keys", [][]string{
		{"CONFIG", "SET", "notify-keyspace-events", "KEAn"},
		{"SET", "a", "1"}, {"SET", "a", "2"}, {"RENAME", "a", "b"}, {"SET", "c", "1"}, {"RENAME", "b", "c"},
		{"COPY", "c", "d"}, {"COPY", "c", "d", "REPLACE"}, {"MOVE", "d", "1"}, {"SELECT", "1"}, {"DEL", "d"},
		{"SELECT", "0"}, {"LPUSH", "l", "a"}, {"LPUSH", "l", "b"}, {"SADD", "s", "a"}, {"ZADD", "z", "1", "a"},
		{"HSET", "h", "f", "v"}, {"SINTERSTORE", "s2", "s"}, {"SINTERSTORE", "s2", "s"}, {"SORT", "l", "ALPHA", "STORE", "s3"},
		{"PFADD", "hll", "a"}, {"SETBIT", "bits", "3", "1"}, {"BITOP", "OR", "b2", "bits"}, {"GEOADD", "g", "1", "1", "m"},
		{"CONFIG", "SET", "notify-keyspace-events", "KEA"},
	}},
	{"expiry", [][]string{
		{"CONFIG", "SET", "notify-keyspace-events", "KEA"},
		{"SET", "a", "1", "PX", "1"}, {"SLEEP", "10"}, {"GET", "a"},
		{"SET", "b", "1", "PX", "1"}, {"SLEEP", "10"}, {"EXISTS", "b"},
		{"SET", "c", "1"}, {"EXPIRE", "c", "100"}, {"PERSIST", "c"}, {"EXPIRE", "c", "-1"},
		{"SET", "d", "1"}, {"PEXPIREAT", "d", "1"}, {"SET", "e", "1", "EX", "100"}, {"SETEX", "f", "10", "v"},
		{"GETEX", "e", "PERSIST"}, {"GETEX", "f", "EX", "5"}, {"GETEX", "f", "PXAT", "1"},
		{"SET", "g", "1", "PX", "20"}, {"SLEEP", "300"}, {"SET", "h", "1"},
	}},
	{"restore and dump", [][]string{
		{"CONFIG", "SET", "notify-keyspace-events", "KEAn"},
		{"SET", "a", "1"}, {"RESTORE", "b", "0", "\x00\xc0\x01\n\x00&x\xe7\xb6\xd1\x01\x11\xfc"},
		{"RESTORE", "b", "0", "\x00\xc0\x01\n\x00&x\xe7\xb6\xd1\x01\x11\xfc", "REPLACE"},
		{"RESTORE", "c", "1", "\x00\xc0\x01\n\x00&x\xe7\xb6\xd1\x01\x11\xfc", "ABSTTL"},
	}},
}

// notifySkip are testdata sequences left out here, with why.
var notifySkip = map[string]string{
	"string_range/setrange": "512 MB strings: too slow twice more on a shared machine (TestCompat runs it)",
}

// killsClients reports whether dc sends CLIENT KILL, which may close the
// listening connection.
func killsClients(dc diffCase) bool {
	for _, args := range dc.cmds {
		for i := 0; i+1 < len(args); i++ {
			if strings.EqualFold(args[i], "client") && strings.EqualFold(args[i+1], "kill") {
				return true
			}
		}
	}
	return false
}

// notifyClassesForFiles are the classes the testdata sequences run with: every
// class but keymiss (whose rules, reads only, are covered by the cases above).
const notifyClassesForFiles = "KEAnm"

func TestCompatNotify(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	cases := append([]diffCase(nil), notifyDiffCases...)
	files, _ := filepath.Glob("testdata/compat/*.txt")
	for _, f := range files {
		fc, err := loadDiffCases(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, fc...)
	}
	realAddr, myAddr := startPair(t)
	for _, dc := range cases {
		if notifySkip[dc.name] != "" || killsClients(dc) {
			continue
		}
		t.Run(dc.name, func(t *testing.T) {
			want := playNotify(t, realAddr, dc)
			got := playNotify(t, myAddr, dc)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("events differ:\n redis:   %q\n myredis: %q", want, got)
			}
		})
	}
}

// notifyEnd is the channel of the message that ends a case's events.
const notifyEnd = "__keyspace@end__:end"

// playNotify runs dc on addr after FLUSHALL with notifyClassesForFiles on, and
// returns the events a PSUBSCRIBE __key*__:* subscriber saw, one
// "channel payload" string each.
func playNotify(t *testing.T, addr string, dc diffCase) []string {
	t.Helper()
	admin := redistest.Dial(t, addr)
	defer admin.Close()
	admin.Do("SELECT", "0")
	admin.Do("FLUSHALL")
	admin.Do("CONFIG", "SET", "notify-keyspace-events", notifyClassesForFiles)
	sub := redistest.Dial(t, addr)
	defer sub.Close()
	if r := sub.Do("PSUBSCRIBE", "__key*__:*"); !strings.Contains(r, "psubscribe") {
		t.Fatalf("PSUBSCRIBE: %q", r)
	}
	conns := map[int]*redistest.Conn{}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, args := range dc.cmds {
		n := 1
		if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '@' {
			n, _ = strconv.Atoi(args[0][1:])
			args = args[1:]
		}
		quiet := false
		if len(args) > 0 && len(args[0]) > 1 && strings.IndexByte("~^!", args[0][0]) >= 0 {
			quiet = args[0][0] == '!'
			args = append([]string{args[0][1:]}, args[1:]...)
		}
		if args[0] == "SLEEP" { // the test sleeps (milliseconds): the servers keep running
			ms, _ := strconv.Atoi(args[1])
			time.Sleep(time.Duration(ms) * time.Millisecond)
			continue
		}
		c := conns[n]
		if c == nil {
			c = redistest.Dial(t, addr)
			conns[n] = c
		}
		if quiet {
			c.Write(redistest.Encode(args...))
			continue
		}
		if _, err := c.DoErr(args...); err != nil {
			t.Fatalf("%s: %q: %v", addr, args, err)
		}
	}
	admin.Do("CONFIG", "SET", "notify-keyspace-events", "")
	admin.Do("PUBLISH", notifyEnd, "end")
	return readEvents(t, sub, addr)
}

// readEvents reads pmessages from sub up to the end marker.
func readEvents(t *testing.T, sub *redistest.Conn, addr string) []string {
	t.Helper()
	rd := bufio.NewReader(sub.NetConn())
	var events []string
	for {
		sub.NetConn().SetReadDeadline(time.Now().Add(redistest.Timeout))
		var r strings.Builder
		if err := redistest.ReadReply(rd, &r); err != nil {
			t.Fatalf("%s: events so far %q: %v", addr, events, err)
		}
		parts := eventParts(r.String())
		if len(parts) != 4 || parts[0] != "pmessage" {
			t.Fatalf("%s: not a pmessage: %q", addr, r.String())
		}
		if parts[2] == notifyEnd {
			return events
		}
		events = append(events, parts[2]+" "+parts[3])
	}
}

// eventParts splits a RESP2 array of bulk strings into its strings.
func eventParts(reply string) []string {
	var out []string
	rd := bufio.NewReader(strings.NewReader(reply))
	head, _ := rd.ReadString('\n')
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	for i := 0; i < n; i++ {
		h, _ := rd.ReadString('\n')
		size, _ := strconv.Atoi(strings.TrimSpace(h[1:]))
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil
		}
		out = append(out, string(buf[:size]))
	}
	return out
}
