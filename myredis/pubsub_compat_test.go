package myredis_test

// Differential pub/sub tests: needs redis-server (skipped without it). Each case
// runs on a real Redis and on MyRedis with two connections, a subscriber and a
// publisher; the subscriber's whole raw byte stream and every publisher reply
// must be the same on both.

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// psDiff is one differential case: each line is a connection ("pub", or a
// subscriber: "sub", "sub2") and what to do on it:
//
//	sub CMD ...    written, not read: its replies join the subscriber's stream
//	sub read N     read N replies into the subscriber's stream now
//	sub read N unordered  the same, for replies whose order follows Redis's
//	               hash table (seeded at random per process): they join the
//	               stream sorted, each one's count (its last line) left out
//	pub CMD ...    every subscriber's stream is caught up first, then the reply compared
//	pub! CMD ...   the same without catching up (a subscriber with CLIENT REPLY OFF)
//
// resp lists the protocols the case runs in: with 3, every connection says
// HELLO 3 first.
type psDiff struct {
	name  string
	resp  []int
	steps [][]string
}

func psd(name string, lines ...string) psDiff { return psdProto(name, []int{2}, lines...) }

// psd23 is a case that runs in RESP2 and again in RESP3.
func psd23(name string, lines ...string) psDiff { return psdProto(name, []int{2, 3}, lines...) }

func psdProto(name string, resp []int, lines ...string) psDiff {
	d := psDiff{name: name, resp: resp}
	for _, l := range lines {
		args, err := splitArgs(l)
		if err != nil {
			panic(err)
		}
		d.steps = append(d.steps, args)
	}
	return d
}

var pubsubDiffCases = []psDiff{
	psd23("channels",
		"sub SUBSCRIBE a b", "pub PUBLISH a x", "pub PUBLISH b y", "pub PUBLISH c z",
		"pub PUBSUB NUMSUB a b c", "sub UNSUBSCRIBE a", "pub PUBLISH a gone", "pub PUBLISH b \"\"", "pub PUBSUB NUMSUB b",
		"sub UNSUBSCRIBE b", "sub UNSUBSCRIBE", "pub PUBLISH b none", "sub GET k"),
	psd23("patterns",
		`sub PSUBSCRIBE h?llo`, `pub PUBLISH hello 1`, `pub PUBLISH hallo 2`, `pub PUBLISH hllo 3`,
		`sub PUNSUBSCRIBE h?llo`, `sub PSUBSCRIBE h[ae]llo`, `pub PUBLISH hello 4`, `pub PUBLISH hillo 5`,
		`sub PUNSUBSCRIBE`, `sub PSUBSCRIBE "h\\*"`, `pub PUBLISH h* 6`, `pub PUBLISH hx 7`,
		`sub PUNSUBSCRIBE`, `sub PSUBSCRIBE *`, `pub PUBLISH "\x00\xff" "\r\n"`, `pub PUBSUB NUMPAT`,
		`sub SUBSCRIBE news`, `pub PUBLISH news both`, `sub PUNSUBSCRIBE nothere`, `sub UNSUBSCRIBE news`,
		`sub PUNSUBSCRIBE`, `sub PING`),
	psd23("shard",
		"sub SSUBSCRIBE {s}1", "pub SPUBLISH {s}1 m", "pub PUBLISH {s}1 not-shard", "pub PUBSUB SHARDCHANNELS",
		"pub PUBSUB SHARDCHANNELS {s}*", "pub PUBSUB SHARDCHANNELS x*", "pub PUBSUB SHARDNUMSUB {s}1 x",
		"pub PUBSUB SHARDNUMSUB", "sub SUBSCRIBE c", "sub SUNSUBSCRIBE nope", "sub SUNSUBSCRIBE",
		"sub UNSUBSCRIBE", "sub SUNSUBSCRIBE", "sub PING"),
	// Redis's unit pubsubshard (tagged external:skip, so its suite never runs
	// it against an external server), case by case
	psd23("shard: SPUBLISH/SSUBSCRIBE basics",
		"sub SSUBSCRIBE chan1", "sub SSUBSCRIBE chan2", "pub SPUBLISH chan1 hello", "pub SPUBLISH chan2 world",
		"sub SUNSUBSCRIBE chan1", "pub SPUBLISH chan1 hello", "pub SPUBLISH chan2 world",
		"sub SUNSUBSCRIBE chan2", "pub SPUBLISH chan1 hello", "pub SPUBLISH chan2 world", "pub PUBSUB SHARDCHANNELS"),
	psd23("shard: two clients",
		"sub SSUBSCRIBE chan1", "sub2 SSUBSCRIBE chan1", "pub SPUBLISH chan1 hello",
		"pub PUBSUB SHARDNUMSUB chan1", "pub PUBSUB SHARDCHANNELS", "sub2 SUNSUBSCRIBE", "pub SPUBLISH chan1 again",
		"pub PUBSUB SHARDNUMSUB chan1"),
	psd23("shard: SUNSUBSCRIBE without arguments",
		"sub SSUBSCRIBE chan1", "sub SSUBSCRIBE chan2", "sub SSUBSCRIBE chan3", "pub PUBSUB SHARDNUMSUB chan1 chan2 chan3",
		"sub SUNSUBSCRIBE", "sub read 3 unordered", "pub SPUBLISH chan1 hello", "pub SPUBLISH chan2 hello",
		"pub SPUBLISH chan3 hello", "pub PUBSUB SHARDCHANNELS", "pub PUBSUB SHARDNUMSUB chan1 chan2 chan3"),
	psd23("shard: SSUBSCRIBE to one channel more than once",
		"sub SSUBSCRIBE chan1 chan1 chan1", "pub SPUBLISH chan1 hello", "pub PUBSUB SHARDNUMSUB chan1",
		"sub SUNSUBSCRIBE chan1 chan1"),
	psd23("shard: SUNSUBSCRIBE from non-subscribed channels",
		"sub SUNSUBSCRIBE foo", "sub SUNSUBSCRIBE bar", "sub SUNSUBSCRIBE quux", "sub SUNSUBSCRIBE a b",
		"sub SSUBSCRIBE x", "sub SUNSUBSCRIBE y x y"),
	psd23("shard: PUBSUB SHARDNUMSUB and SHARDCHANNELS",
		"pub PUBSUB SHARDNUMSUB abc def", "pub PUBSUB SHARDNUMSUB", "pub PUBSUB SHARDCHANNELS",
		"pub PUBSUB SHARDCHANNELS *", "pub PUBSUB SHARDCHANNELS a b", "pub PUBSUB SHARDNUMSUB x x"),
	psd23("shard: beside PUBLISH/SUBSCRIBE",
		"sub SSUBSCRIBE chan1", "sub2 SUBSCRIBE chan1", "pub SPUBLISH chan1 hello", "pub PUBLISH chan1 hello",
		"pub PUBSUB SHARDNUMSUB chan1", "pub PUBSUB NUMSUB chan1", "pub PUBSUB SHARDCHANNELS", "pub PUBSUB CHANNELS",
		"sub2 PSUBSCRIBE chan*", "pub SPUBLISH chan1 sharded", "pub PUBLISH chan1 both", "pub PUBSUB NUMPAT",
		"sub SUBSCRIBE chan1", "pub PUBLISH chan1 three", "sub UNSUBSCRIBE", "pub SPUBLISH chan1 still",
		"sub SUNSUBSCRIBE", "sub2 PUNSUBSCRIBE", "sub2 UNSUBSCRIBE"),
	psd23("shard: subscribed-state rules",
		"sub SSUBSCRIBE s", "sub GET k", "sub PING", "sub SUBSCRIBE c", "sub SUNSUBSCRIBE s", "sub GET k",
		"sub UNSUBSCRIBE c", "sub GET k", "sub SSUBSCRIBE s2", "sub RESET", "sub GET k"),
	psd23("shard: arity and errors",
		"pub SPUBLISH", "pub SPUBLISH a", "pub SPUBLISH a b c", "sub SSUBSCRIBE", "pub PUBSUB SHARDNUMSUB",
		"pub PUBSUB SHARDCHANNELS a b"),
	psdProto("shard: CLIENT REPLY OFF", []int{3},
		"sub CLIENT REPLY OFF", "sub PING", "sub SSUBSCRIBE channel", "sub read 1",
		"sub CLIENT REPLY OFF", "sub PING", "pub! SPUBLISH channel hello", "sub read 1",
		"sub CLIENT REPLY OFF", "sub PING", "sub SUNSUBSCRIBE channel", "sub read 1",
		"sub CLIENT REPLY ON", "pub SPUBLISH channel gone"),
	psd("subscribed-state rules",
		"sub SUBSCRIBE a", "sub GET k", "sub SET k v", "sub MULTI", "sub CLIENT LIST", "sub CLIENT NOSUCH",
		"sub NOSUCH", "sub PING", "sub PING hi", "sub PING a b", "sub SUBSCRIBE", "sub PSUBSCRIBE",
		"sub EVAL \"return 1\" 0", "sub SELECT 1", "sub AUTH x", "sub HELLO", "sub RESET", "sub GET k",
		"sub PSUBSCRIBE p", "sub ECHO x", "sub PUNSUBSCRIBE p", "sub ECHO y"),
	psd23("transactions and scripts",
		"sub SUBSCRIBE a", "pub MULTI", "pub PUBLISH a 1", "pub SPUBLISH a 2", "pub PUBLISH a 3", "pub EXEC",
		"pub EVAL \"return redis.call('publish', ARGV[1], ARGV[2])\" 0 a 4",
		"pub EVAL \"return redis.call('subscribe', 'x')\" 0",
		"pub EVAL \"return redis.call('spublish', 'a', '5')\" 0",
		"sub UNSUBSCRIBE", "sub MULTI", "sub SUBSCRIBE m", "sub PUBLISH m inside", "sub EXEC",
		"pub PUBLISH m after", "sub UNSUBSCRIBE"),
	psd23("pubsub command",
		"sub SUBSCRIBE only", "pub PUBSUB CHANNELS", "pub PUBSUB CHANNELS o*", "pub PUBSUB CHANNELS x*",
		"pub PUBSUB CHANNELS a b", "pub PUBSUB NUMSUB", "pub PUBSUB NUMPAT", "pub PUBSUB NUMPAT x",
		"pub PUBSUB HELP", "pub PUBSUB nosuch", "pub PUBSUB", "pub PUBLISH", "pub PUBLISH a",
		"pub SPUBLISH a", "pub PUBLISH a b c"),
	psd("output buffer limit config",
		"pub CONFIG GET client-output-buffer-limit",
		"pub CONFIG SET client-output-buffer-limit \"pubsub 1mb 512kb 10 normal 0 0 0\"",
		"pub CONFIG GET client-output-buffer-limit",
		"pub CONFIG SET client-output-buffer-limit \"master 1 1 1\"",
		"pub CONFIG SET client-output-buffer-limit \"pubsub 1 1\"",
		"pub CONFIG SET client-output-buffer-limit \"pubsub 1 1 x\"",
		"pub CONFIG SET client-output-buffer-limit \"pubsub 1x 1 1\"",
		"pub CONFIG SET client-output-buffer-limit \"replica 1GB 2g 0 slave 3 4 5\"",
		"pub CONFIG GET client-output-buffer-limit",
		"pub CONFIG SET client-output-buffer-limit \"pubsub 32mb 8mb 60 slave 256mb 64mb 60\""),
}

func TestCompatPubSub(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	realAddr, myAddr := startPair(t)
	for _, dc := range pubsubDiffCases {
		for _, proto := range dc.resp {
			t.Run(fmt.Sprintf("%s/RESP%d", dc.name, proto), func(t *testing.T) {
				wantSubs, wantPub := playPubSub(t, realAddr, dc, proto)
				gotSubs, gotPub := playPubSub(t, myAddr, dc, proto)
				for name, want := range wantSubs {
					if gotSubs[name] != want {
						t.Errorf("%s's stream differs:\n redis:   %q\n myredis: %q", name, want, gotSubs[name])
					}
				}
				for i := range wantPub {
					if gotPub[i] != wantPub[i] {
						t.Errorf("publisher reply %d differs:\n redis:   %q\n myredis: %q", i, wantPub[i], gotPub[i])
					}
				}
			})
		}
	}
}

// psSub is a subscriber connection and the stream it has received.
type psSub struct {
	conn   *redistest.Conn
	rd     *bufio.Reader
	stream strings.Builder
}

// readOne reads one reply into the stream and returns it.
func (s *psSub) readOne(t *testing.T, addr, name string) string {
	t.Helper()
	s.conn.NetConn().SetReadDeadline(time.Now().Add(redistest.Timeout))
	var r strings.Builder
	if err := redistest.ReadReply(s.rd, &r); err != nil {
		t.Fatalf("%s: %s's stream so far %q: %v", addr, name, s.stream.String(), err)
	}
	s.stream.WriteString(r.String())
	return r.String()
}

// readUnordered reads n confirmations and adds them to the stream sorted, each
// without its count.
func (s *psSub) readUnordered(t *testing.T, addr, name string, n int) {
	t.Helper()
	mark := s.stream.Len()
	var got []string
	for range n {
		r := s.readOne(t, addr, name)
		got = append(got, r[:strings.LastIndex(r, ":")])
	}
	rest := s.stream.String()[:mark]
	s.stream.Reset()
	s.stream.WriteString(rest)
	slices.Sort(got)
	for _, r := range got {
		s.stream.WriteString(r)
	}
}

// playPubSub runs dc on addr in protocol proto. Subscriber commands are only
// written (their replies interleave with messages); before each publisher
// command and at the end, a PING with a unique argument on every subscriber
// marks how far its stream has got, so both servers' streams are cut at the
// same places.
func playPubSub(t *testing.T, addr string, dc psDiff, proto int) (streams map[string]string, pubReplies []string) {
	t.Helper()
	pub := redistest.Dial(t, addr)
	defer pub.Close()
	subs := map[string]*psSub{}
	var order []string // subscribers in order of first use
	sub := func(name string) *psSub {
		if s, ok := subs[name]; ok {
			return s
		}
		c := redistest.Dial(t, addr)
		t.Cleanup(func() { c.Close() })
		if proto == 3 {
			c.Do("HELLO", "3") // its reply (with the client's id) is not compared
		}
		s := &psSub{conn: c, rd: bufio.NewReader(c.NetConn())}
		subs[name] = s
		order = append(order, name)
		return s
	}
	if proto == 3 {
		pub.Do("HELLO", "3")
	}
	marks := 0
	syncSubs := func() {
		for _, name := range order {
			s := subs[name]
			marks++
			mark := "mark-" + strconv.Itoa(marks)
			if err := s.conn.Write(redistest.Encode("PING", mark)); err != nil {
				t.Fatal(err)
			}
			for !strings.Contains(s.readOne(t, addr, name), mark) {
			}
		}
	}
	for _, step := range dc.steps {
		who, args := step[0], step[1:]
		switch {
		case strings.HasPrefix(who, "sub") && len(args) >= 2 && args[0] == "read":
			s := sub(who)
			n, _ := strconv.Atoi(args[1])
			if len(args) == 3 && args[2] == "unordered" {
				s.readUnordered(t, addr, who, n)
				continue
			}
			for range n {
				s.readOne(t, addr, who)
			}
		case strings.HasPrefix(who, "sub"):
			if err := sub(who).conn.Write(redistest.Encode(args...)); err != nil {
				t.Fatal(err)
			}
		case who == "pub":
			syncSubs()
			pubReplies = append(pubReplies, pub.Do(args...))
		case who == "pub!":
			pubReplies = append(pubReplies, pub.Do(args...))
		default:
			t.Fatalf("case %q: unknown connection %q", dc.name, who)
		}
	}
	syncSubs()
	streams = map[string]string{}
	for name, s := range subs {
		streams[name] = s.stream.String()
	}
	return streams, pubReplies
}
