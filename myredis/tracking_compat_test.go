// Needs redis-server (skips without it): client-side caching played against a
// real redis-server and MyRedis, every reply and every invalidation compared
// byte for byte, in the order each connection receives them.
package myredis_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// trackScript records one side of a tracking scenario: the replies and pushes
// each numbered connection received, in order. Client ids differ between the
// servers, so each id a reply carries is written as "ID<n>" (n: the connection).
type trackScript struct {
	t     *testing.T
	addr  string
	conns map[int]*redistest.Conn
	ids   map[int]string
	log   []string
}

func (s *trackScript) conn(n int) *redistest.Conn {
	if c, ok := s.conns[n]; ok {
		return c
	}
	c := redistest.Dial(s.t, s.addr)
	r := c.Do("CLIENT", "ID")
	s.ids[n] = strings.TrimSpace(strings.TrimPrefix(r, ":"))
	s.conns[n] = c
	return c
}

// id is connection n's client id, for REDIRECT.
func (s *trackScript) id(n int) string {
	s.conn(n)
	return s.ids[n]
}

func (s *trackScript) note(n int, what, reply string, err error) {
	if strings.Contains(what, "GETREDIR") || strings.Contains(what, "TRACKINGINFO") || strings.Contains(reply, "tracking-redir-broken") {
		for m, id := range s.ids {
			reply = strings.ReplaceAll(reply, ":"+id+"\r\n", ":ID"+strconv.Itoa(m)+"\r\n")
		}
	}
	if err != nil {
		reply += " (" + err.Error() + ")"
	}
	s.log = append(s.log, "@"+strconv.Itoa(n)+" "+what+" -> "+strconv.Quote(reply))
}

// do sends a command on connection n and records its reply.
func (s *trackScript) do(n int, args ...string) {
	r, err := s.conn(n).DoErr(args...)
	s.note(n, s.show(args), r, err)
}

// show is a command line with each client id in it written as "ID<n>".
func (s *trackScript) show(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if i == 0 || !strings.EqualFold(args[i-1], "REDIRECT") {
			continue
		}
		for m, id := range s.ids {
			if a == id {
				out[i] = "ID" + strconv.Itoa(m)
			}
		}
	}
	return strings.Join(out, " ")
}

// quiet sends a command whose reply differs between the servers for reasons
// of no interest here (HELLO's id): only its first byte is recorded.
func (s *trackScript) quiet(n int, args ...string) {
	r, err := s.conn(n).DoErr(args...)
	if len(r) > 0 {
		r = r[:1]
	}
	s.note(n, strings.Join(args, " "), r, err)
}

// read records the next message connection n receives unasked.
func (s *trackScript) read(n int) {
	r, err := s.conn(n).Read()
	s.note(n, "(read)", r, err)
}

// readUnordered records the next k messages of connection n as a set: their
// order depends on timing (a push from the server's expiry cycle or from the
// command's own lookup).
func (s *trackScript) readUnordered(n, k int) {
	var got []string
	for range k {
		r, err := s.conn(n).Read()
		if err != nil {
			r += " (" + err.Error() + ")"
		}
		got = append(got, r)
	}
	sort.Strings(got)
	s.note(n, "(read, any order)", strings.Join(got, " | "), nil)
}

// send writes a command without reading its reply (CLIENT REPLY OFF, a
// blocking command).
func (s *trackScript) send(n int, args ...string) {
	if err := s.conn(n).Write(redistest.Encode(args...)); err != nil {
		s.t.Fatalf("@%d %s: %v", n, strings.Join(args, " "), err)
	}
}

func (s *trackScript) close(n int) {
	s.conn(n).Close()
	delete(s.conns, n)
}

// trackScenarios are the sequences; each ends with a PING on every connection
// still open, so a push one server sends and the other does not shows.
var trackScenarios = []struct {
	name string
	play func(s *trackScript)
}{
	{"own writes: invalidation after the reply", func(s *trackScript) {
		s.quiet(1, "HELLO", "3")
		s.do(1, "CLIENT", "TRACKING", "on")
		s.do(1, "SET", "a", "1")
		s.do(1, "GET", "a")
		s.do(1, "SET", "a", "2")
		s.read(1)
		s.do(1, "HSET", "h", "f", "1")
		s.do(1, "HGET", "h", "f")
		s.do(1, "HDEL", "h", "f")
		s.read(1)
		s.do(1, "MSET", "x{t}", "1", "y{t}", "2")
		s.do(1, "MGET", "x{t}", "y{t}")
		s.do(1, "MULTI")
		s.do(1, "INCR", "x{t}")
		s.do(1, "GET", "y{t}")
		s.do(1, "DEL", "y{t}")
		s.do(1, "EXEC")
		s.read(1)
		s.read(1)
		s.do(1, "GET", "a")
		s.do(1, "MULTI")
		s.do(1, "FLUSHDB")
		s.do(1, "EXEC")
		s.read(1)
	}},
	{"another client's writes, RESP2 and RESP3 trackers", func(s *trackScript) {
		s.quiet(1, "HELLO", "3")
		s.do(1, "CLIENT", "TRACKING", "on")
		s.do(3, "CLIENT", "TRACKING", "on") // RESP2, no redirect: hears nothing
		s.do(2, "SET", "k", "1")
		s.do(1, "GET", "k")
		s.do(3, "GET", "k")
		s.do(1, "GET", "k") // a second read: still one invalidation
		s.do(2, "SET", "k", "2")
		s.read(1)
		s.do(2, "SET", "k", "3") // forgotten after the first change
		s.do(1, "MGET", "k", "nokey")
		s.do(2, "DEL", "nokey") // nothing deleted: no change
		s.do(2, "SET", "nokey", "1")
		s.read(1)
		s.do(2, "FLUSHALL")
		s.read(1)
		s.do(1, "CLIENT", "TRACKINGINFO")
		s.do(3, "CLIENT", "TRACKINGINFO")
	}},
	{"redirect to a RESP2 subscriber", func(s *trackScript) {
		s.do(2, "SUBSCRIBE", "__redis__:invalidate")
		s.do(1, "CLIENT", "TRACKING", "on", "REDIRECT", s.id(2))
		s.do(1, "CLIENT", "GETREDIR")
		s.do(1, "CLIENT", "TRACKINGINFO")
		s.do(3, "MSET", "a{t}", "1", "b{t}", "2")
		s.do(1, "MGET", "a{t}", "b{t}")
		s.do(3, "DEL", "a{t}", "b{t}")
		s.read(2)
		s.read(2)
		s.do(1, "GET", "a{t}")
		s.do(1, "SET", "a{t}", "own") // its own write, redirected
		s.read(2)
		s.do(1, "GET", "a{t}")
		s.do(3, "FLUSHALL")
		s.read(2)
		s.quiet(1, "HELLO", "3") // the redirect stays; the client's protocol does not matter
		s.do(1, "GET", "c")
		s.do(3, "SET", "c", "1")
		s.read(2)
		s.do(3, "FLUSHDB")
		s.read(2)
	}},
	{"redirect to a RESP3 client", func(s *trackScript) {
		s.quiet(2, "HELLO", "3")
		s.do(1, "CLIENT", "TRACKING", "on", "REDIRECT", s.id(2))
		s.do(1, "GET", "k")
		s.do(3, "SET", "k", "1")
		s.read(2)
		s.do(2, "PING")
		s.do(1, "GET", "k")
		s.do(3, "FLUSHALL")
		s.read(2)
	}},
	{"a redirect that goes away", func(s *trackScript) {
		s.quiet(1, "HELLO", "3")
		s.do(1, "CLIENT", "TRACKING", "on", "REDIRECT", s.id(2))
		s.do(4, "CLIENT", "TRACKING", "on", "REDIRECT", s.id(2)) // RESP2: not told
		s.do(1, "GET", "k")
		s.do(4, "GET", "k")
		s.do(2, "QUIT")
		s.close(2)
		s.do(3, "SET", "k", "1")
		s.read(1)
		s.do(1, "CLIENT", "TRACKINGINFO")
		s.do(4, "CLIENT", "TRACKINGINFO")
		s.do(1, "CLIENT", "GETREDIR")
		s.do(1, "CLIENT", "TRACKING", "on", "REDIRECT", "999999")
		s.do(1, "CLIENT", "TRACKING", "off")
		s.do(1, "CLIENT", "TRACKINGINFO")
	}},
	{"BCAST prefixes and NOLOOP", func(s *trackScript) {
		s.quiet(1, "HELLO", "3")
		s.do(1, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b:", "PREFIX", "a:")
		s.do(1, "CLIENT", "TRACKINGINFO")
		s.do(2, "MULTI")
		s.do(2, "INCR", "b:2{t}")
		s.do(2, "INCR", "a:1{t}")
		s.do(2, "INCR", "b:1{t}")
		s.do(2, "INCR", "c:1{t}")
		s.do(2, "INCR", "a:2{t}")
		s.do(2, "EXEC")
		s.read(1) // one push per prefix, prefixes in byte order
		s.read(1)
		s.do(1, "SET", "a:own", "1")
		s.read(1)
		s.do(1, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c:")
		s.do(1, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c")
		s.do(1, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:b")
		s.do(1, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "d", "PREFIX", "de")
		s.do(1, "CLIENT", "TRACKINGINFO")
		s.do(2, "SET", "c:x", "1")
		s.read(1)
		s.do(1, "CLIENT", "TRACKING", "on", "NOLOOP")
		s.do(1, "CLIENT", "TRACKING", "off")
		s.do(1, "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP")
		s.do(1, "CLIENT", "TRACKINGINFO")
		s.do(1, "SET", "mine", "1") // not told
		s.do(2, "SET", "theirs", "1")
		s.read(1)
		s.do(1, "SET", "short", "1", "PX", "1")
		time.Sleep(20 * time.Millisecond)
		// expired by this GET or by the server's cycle just before: nobody's
		// change, so told; the push comes before or after the reply
		s.send(1, "GET", "short")
		s.readUnordered(1, 2)
		s.do(1, "CLIENT", "TRACKING", "off")
		s.do(1, "CLIENT", "TRACKING", "on", "NOLOOP")
		s.do(1, "MGET", "mine", "theirs")
		s.do(1, "SET", "mine", "3") // not told
		s.do(2, "SET", "theirs", "2")
		s.read(1)
	}},
	{"OPTIN, OPTOUT and CLIENT CACHING", func(s *trackScript) {
		s.quiet(1, "HELLO", "3")
		s.do(1, "CLIENT", "CACHING", "yes")
		s.do(1, "CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT")
		s.do(1, "CLIENT", "TRACKING", "on", "BCAST", "OPTIN")
		s.do(1, "CLIENT", "TRACKING", "on", "PREFIX", "x")
		s.do(1, "CLIENT", "TRACKING", "on", "OPTIN")
		s.do(1, "CLIENT", "TRACKING", "on", "OPTOUT")
		s.do(1, "CLIENT", "TRACKING", "on", "BCAST")
		s.do(1, "CLIENT", "CACHING", "no")
		s.do(1, "CLIENT", "CACHING", "maybe")
		s.do(1, "GET", "a") // not cached
		s.do(1, "CLIENT", "CACHING", "yes")
		s.do(1, "CLIENT", "TRACKINGINFO")
		s.do(1, "GET", "b")
		s.do(1, "CLIENT", "TRACKINGINFO")
		s.do(2, "MSET", "a", "1", "b", "1")
		s.read(1)
		s.do(1, "CLIENT", "CACHING", "yes")
		s.do(1, "MULTI") // the choice lasts for the whole transaction
		s.do(1, "GET", "a")
		s.do(1, "GET", "b")
		s.do(1, "EXEC")
		s.do(2, "DEL", "a", "b")
		s.read(1)
		s.read(1)
		s.do(1, "CLIENT", "TRACKING", "off")
		s.do(1, "CLIENT", "TRACKING", "on", "OPTOUT")
		s.do(1, "CLIENT", "CACHING", "yes")
		s.do(1, "CLIENT", "CACHING", "no")
		s.do(1, "CLIENT", "TRACKINGINFO")
		s.do(1, "GET", "a") // not cached
		s.do(1, "GET", "b")
		s.do(2, "MSET", "a", "2", "b", "2")
		s.read(1)
		s.do(1, "CLIENT", "TRACKING", "on", "FOO")
		s.do(1, "CLIENT", "TRACKING", "maybe")
		s.do(1, "CLIENT", "TRACKING", "on", "REDIRECT", "x")
		s.do(1, "CLIENT", "TRACKING", "on", "REDIRECT")
		s.do(1, "CLIENT", "TRACKING", "on", "REDIRECT", "1", "REDIRECT", "2")
	}},
	{"scripts track their declared keys when they read", func(s *trackScript) {
		s.quiet(1, "HELLO", "3")
		s.do(1, "CLIENT", "TRACKING", "on")
		s.do(1, "EVAL", "redis.call('set', 'k3{t}', 'bar')", "2", "k1{t}", "k2{t}")
		s.do(2, "MSET", "k2{t}", "1", "k1{t}", "1")
		s.do(1, "EVAL", "redis.call('get', 'k3{t}')", "2", "k1{t}", "k2{t}")
		s.do(2, "MSET", "k2{t}", "2", "k1{t}", "2")
		s.read(1)
		s.read(1)
		s.do(1, "EVAL_RO", "redis.call('get', 'k1{t}')", "2", "k1{t}", "k2{t}")
		s.do(2, "MSET", "k2{t}", "3", "k1{t}", "3")
		s.read(1)
		s.read(1)
		s.do(1, "CLIENT", "TRACKING", "on", "NOLOOP")
		s.do(1, "GET", "k1{t}")
		s.do(1, "EVAL", "return redis.call('set', KEYS[1], '4')", "1", "k1{t}") // NOLOOP: not told
	}},
	{"a served blocked command hears after its reply", func(s *trackScript) {
		s.quiet(1, "HELLO", "3")
		s.do(1, "CLIENT", "TRACKING", "on")
		s.do(2, "RPUSH", "dst{t}", "a")
		s.do(1, "LRANGE", "dst{t}", "0", "-1")
		s.send(1, "BLMOVE", "src{t}", "dst{t}", "LEFT", "LEFT", "0")
		waitTrackBlocked(s, 2, 1)
		s.do(2, "RPUSH", "src{t}", "x")
		s.read(1)
		s.read(1)
	}},
	{"CLIENT REPLY OFF keeps the pushes", func(s *trackScript) {
		s.quiet(1, "HELLO", "3")
		s.do(1, "CLIENT", "TRACKING", "on")
		s.do(2, "SET", "foo", "bar")
		s.do(1, "GET", "foo")
		s.send(1, "CLIENT", "REPLY", "OFF")
		s.do(2, "SET", "foo", "bar2")
		s.read(1)
		s.do(1, "CLIENT", "REPLY", "ON")
	}},
	{"a key evicted before the command is announced before its reply", func(s *trackScript) {
		s.quiet(1, "HELLO", "3")
		s.do(1, "CLIENT", "TRACKING", "on")
		used := infoInt(s.t, s.conn(2), "used_memory") - infoInt(s.t, s.conn(2), "mem_not_counted_for_evict")
		s.conn(2).Do("CONFIG", "SET", "maxmemory", strconv.FormatInt(used+100*1024, 10))
		s.do(2, "CONFIG", "SET", "maxmemory-policy", "volatile-random")
		s.do(1, "SETEX", "volatile-key", "10000", "x")
		s.do(1, "GET", "volatile-key")
		s.do(1, "SETBIT", "big-key", "1600000", "0") // ~200 KB: over the limit
		s.send(1, "GETBIT", "big-key", "0")          // evicts volatile-key first
		s.read(1)                                    // the push, then the reply
		s.read(1)
		s.do(2, "CONFIG", "SET", "maxmemory", "0")
		s.do(2, "CONFIG", "SET", "maxmemory-policy", "noeviction")
	}},
}

// waitTrackBlocked polls connection n's server until want clients are blocked.
func waitTrackBlocked(s *trackScript, n, want int) {
	for range 1000 {
		if infoInt(s.t, s.conn(n), "blocked_clients") == int64(want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.t.Fatalf("%d blocked clients not reached in 10s", want)
}

// TestTrackingMatchesRedis plays each scenario on both servers and compares the
// two logs line by line.
func TestTrackingMatchesRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	realAddr, myAddr := startPair(t)
	for _, sc := range trackScenarios {
		t.Run(sc.name, func(t *testing.T) {
			var logs [2][]string
			for i, addr := range []string{realAddr, myAddr} {
				s := &trackScript{t: t, addr: addr, conns: map[int]*redistest.Conn{}, ids: map[int]string{}}
				if r := s.conn(0).Do("FLUSHALL"); r != redistest.OK {
					t.Fatalf("FLUSHALL: %q", r)
				}
				sc.play(s)
				for n := range 5 {
					if _, open := s.conns[n]; open && n > 0 {
						s.do(n, "PING")
					}
				}
				for _, c := range s.conns {
					c.Close()
				}
				logs[i] = s.log
			}
			for i := 0; i < max(len(logs[0]), len(logs[1])); i++ {
				var want, got string
				if i < len(logs[0]) {
					want = logs[0][i]
				}
				if i < len(logs[1]) {
					got = logs[1][i]
				}
				if want != got {
					t.Errorf("step %d:\n redis:   %s\n myredis: %s", i+1, want, got)
				}
			}
		})
	}
}
