package myredis_test

// Differential pub/sub tests: needs redis-server (skipped without it). Each case
// runs on a real Redis and on MyRedis with two connections, a subscriber and a
// publisher; the subscriber's whole raw byte stream and every publisher reply
// must be the same on both.

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// psDiff is one differential case: each line is "sub ..." or "pub ..." followed by
// the command's arguments.
type psDiff struct {
	name  string
	steps [][]string
}

func psd(name string, lines ...string) psDiff {
	d := psDiff{name: name}
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
	psd("channels",
		"sub SUBSCRIBE a b", "pub PUBLISH a x", "pub PUBLISH b y", "pub PUBLISH c z",
		"pub PUBSUB NUMSUB a b c", "sub UNSUBSCRIBE a", "pub PUBLISH a gone", "pub PUBLISH b \"\"", "pub PUBSUB NUMSUB b",
		"sub UNSUBSCRIBE b", "sub UNSUBSCRIBE", "pub PUBLISH b none", "sub GET k"),
	psd("patterns",
		`sub PSUBSCRIBE h?llo`, `pub PUBLISH hello 1`, `pub PUBLISH hallo 2`, `pub PUBLISH hllo 3`,
		`sub PUNSUBSCRIBE h?llo`, `sub PSUBSCRIBE h[ae]llo`, `pub PUBLISH hello 4`, `pub PUBLISH hillo 5`,
		`sub PUNSUBSCRIBE`, `sub PSUBSCRIBE "h\\*"`, `pub PUBLISH h* 6`, `pub PUBLISH hx 7`,
		`sub PUNSUBSCRIBE`, `sub PSUBSCRIBE *`, `pub PUBLISH "\x00\xff" "\r\n"`, `pub PUBSUB NUMPAT`,
		`sub SUBSCRIBE news`, `pub PUBLISH news both`, `sub PUNSUBSCRIBE nothere`, `sub UNSUBSCRIBE news`,
		`sub PUNSUBSCRIBE`, `sub PING`),
	psd("shard",
		"sub SSUBSCRIBE {s}1", "pub SPUBLISH {s}1 m", "pub PUBLISH {s}1 not-shard", "pub PUBSUB SHARDCHANNELS",
		"pub PUBSUB SHARDCHANNELS {s}*", "pub PUBSUB SHARDCHANNELS x*", "pub PUBSUB SHARDNUMSUB {s}1 x",
		"pub PUBSUB SHARDNUMSUB", "sub SUBSCRIBE c", "sub SUNSUBSCRIBE nope", "sub SUNSUBSCRIBE",
		"sub UNSUBSCRIBE", "sub SUNSUBSCRIBE", "sub PING"),
	psd("subscribed-state rules",
		"sub SUBSCRIBE a", "sub GET k", "sub SET k v", "sub MULTI", "sub CLIENT LIST", "sub CLIENT NOSUCH",
		"sub NOSUCH", "sub PING", "sub PING hi", "sub PING a b", "sub SUBSCRIBE", "sub PSUBSCRIBE",
		"sub EVAL \"return 1\" 0", "sub SELECT 1", "sub AUTH x", "sub HELLO", "sub RESET", "sub GET k",
		"sub PSUBSCRIBE p", "sub ECHO x", "sub PUNSUBSCRIBE p", "sub ECHO y"),
	psd("transactions and scripts",
		"sub SUBSCRIBE a", "pub MULTI", "pub PUBLISH a 1", "pub SPUBLISH a 2", "pub PUBLISH a 3", "pub EXEC",
		"pub EVAL \"return redis.call('publish', ARGV[1], ARGV[2])\" 0 a 4",
		"pub EVAL \"return redis.call('subscribe', 'x')\" 0",
		"pub EVAL \"return redis.call('spublish', 'a', '5')\" 0",
		"sub UNSUBSCRIBE", "sub MULTI", "sub SUBSCRIBE m", "sub PUBLISH m inside", "sub EXEC",
		"pub PUBLISH m after", "sub UNSUBSCRIBE"),
	psd("pubsub command",
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
		t.Run(dc.name, func(t *testing.T) {
			wantSub, wantPub := playPubSub(t, realAddr, dc)
			gotSub, gotPub := playPubSub(t, myAddr, dc)
			if gotSub != wantSub {
				t.Errorf("subscriber stream differs:\n redis:   %q\n myredis: %q", wantSub, gotSub)
			}
			for i := range wantPub {
				if gotPub[i] != wantPub[i] {
					t.Errorf("publisher reply %d differs:\n redis:   %q\n myredis: %q", i, wantPub[i], gotPub[i])
				}
			}
		})
	}
}

// playPubSub runs dc on addr: subscriber commands are only written (their
// replies interleave with messages); before each publisher command and at the
// end, a PING with a unique argument on the subscriber marks how far its stream
// has got, so both servers' streams are cut at the same places.
func playPubSub(t *testing.T, addr string, dc psDiff) (subStream string, pubReplies []string) {
	t.Helper()
	sub, pub := redistest.Dial(t, addr), redistest.Dial(t, addr)
	defer sub.Close()
	defer pub.Close()
	rd := bufio.NewReader(sub.NetConn())
	var stream strings.Builder
	marks := 0
	syncSub := func() {
		marks++
		mark := "mark-" + strconv.Itoa(marks)
		if err := sub.Write(redistest.Encode("PING", mark)); err != nil {
			t.Fatal(err)
		}
		for {
			sub.NetConn().SetReadDeadline(time.Now().Add(redistest.Timeout))
			var r strings.Builder
			if err := redistest.ReadReply(rd, &r); err != nil {
				t.Fatalf("%s: subscriber stream so far %q: %v", addr, stream.String(), err)
			}
			stream.WriteString(r.String())
			if strings.Contains(r.String(), mark) {
				return
			}
		}
	}
	for _, step := range dc.steps {
		args := step[1:]
		if step[0] == "sub" {
			if err := sub.Write(redistest.Encode(args...)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		syncSub()
		pubReplies = append(pubReplies, pub.Do(args...))
	}
	syncSub()
	return stream.String(), pubReplies
}
