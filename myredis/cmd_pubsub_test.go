package myredis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitroom/myredis/redistest"
)

// psStep is one step of a pub/sub conversation: a command sent on the
// subscriber ("sub") or the publisher ("pub") with its raw reply, or ("read") a
// message the subscriber must receive next.
type psStep struct {
	on   string // sub, pub, or read (the subscriber's next pushed reply)
	args []string
	want string
}

func onSub(want string, args ...string) psStep { return psStep{"sub", args, want} }
func onPub(want string, args ...string) psStep { return psStep{"pub", args, want} }
func pushed(want string) psStep                { return psStep{on: "read", want: want} }

func subReply(kind, name string, n int64) string {
	return array(bulk(kind), bulk(name), num(n))
}

func message(ch, payload string) string { return bulks("message", ch, payload) }

const pubsubCtx = "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"

func ctxErr(cmd string) string { return errRe(strings.Replace(pubsubCtx, "%s", cmd, 1)) }

// TestPubSub plays subscriber/publisher conversations over two real sockets.
func TestPubSub(t *testing.T) {
	cases := []struct {
		name  string
		steps []psStep
	}{
		{"subscribe and publish", []psStep{
			onSub(subReply("subscribe", "a", 1), "SUBSCRIBE", "a"),
			onPub(num(1), "PUBLISH", "a", "hello"),
			onPub(num(0), "PUBLISH", "b", "nobody"),
			pushed(message("a", "hello")),
			onPub(array(bulk("a"), num(1), bulk("b"), num(0)), "PUBSUB", "NUMSUB", "a", "b"),
			onPub(bulks("a"), "PUBSUB", "CHANNELS"),
			onSub(subReply("unsubscribe", "a", 0), "UNSUBSCRIBE"),
			onPub(num(0), "PUBLISH", "a", "gone"),
			onSub(null, "GET", "k"), // out of subscribed mode
		}},
		{"patterns", []psStep{
			onSub(subReply("psubscribe", "news.*", 1), "PSUBSCRIBE", "news.*"),
			onSub(subReply("subscribe", "news.art", 2), "SUBSCRIBE", "news.art"),
			onPub(num(2), "PUBLISH", "news.art", "x"),
			pushed(message("news.art", "x")),
			pushed(bulks("pmessage", "news.*", "news.art", "x")),
			onPub(num(1), "PUBSUB", "NUMPAT"),
			onSub(subReply("punsubscribe", "news.*", 1), "PUNSUBSCRIBE", "news.*"),
			onPub(num(1), "PUBLISH", "news.art", "y"),
			pushed(message("news.art", "y")),
		}},
		{"shard channels", []psStep{
			onSub(subReply("ssubscribe", "{q}1", 1), "SSUBSCRIBE", "{q}1"),
			onPub(num(0), "PUBLISH", "{q}1", "plain publish does not reach it"),
			onPub(num(1), "SPUBLISH", "{q}1", "m"),
			pushed(bulks("smessage", "{q}1", "m")),
			onPub(bulks("{q}1"), "PUBSUB", "SHARDCHANNELS"),
			onPub(array(bulk("{q}1"), num(1)), "PUBSUB", "SHARDNUMSUB", "{q}1"),
			onSub(subReply("sunsubscribe", "{q}1", 0), "SUNSUBSCRIBE"),
		}},
		{"subscribed-state rules", []psStep{
			onSub(subReply("subscribe", "a", 1), "SUBSCRIBE", "a"),
			onSub(ctxErr("get"), "GET", "k"),
			onSub(ctxErr("client|list"), "CLIENT", "LIST"),
			onSub(bulks("pong", ""), "PING"),
			onSub(bulks("pong", "hi"), "PING", "hi"),
			onSub(arity("ping"), "PING", "a", "b"),
			onSub(arity("subscribe"), "SUBSCRIBE"),
			onSub(array(bulk("punsubscribe"), null, num(1)), "PUNSUBSCRIBE"),
			onSub(array(bulk("sunsubscribe"), null, num(0)), "SUNSUBSCRIBE"),
			onSub(simple("RESET"), "RESET"),
			onSub(simple("PONG"), "PING"),
			onPub(num(0), "PUBLISH", "a", "x"),
		}},
		{"publish from MULTI and scripts", []psStep{
			onSub(subReply("subscribe", "a", 1), "SUBSCRIBE", "a"),
			onPub(ok, "MULTI"),
			onPub(queued, "PUBLISH", "a", "1"),
			onPub(queued, "PUBLISH", "a", "2"),
			onPub(array(num(1), num(1)), "EXEC"),
			pushed(message("a", "1")),
			pushed(message("a", "2")),
			onPub(num(1), "EVAL", "return redis.call('publish', ARGV[1], ARGV[2])", "0", "a", "3"),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, _, addr := start(t)
			pub := redistest.Dial(t, addr)
			for i, s := range tc.steps {
				var got string
				var err error
				switch s.on {
				case "sub":
					got, err = sub.DoErr(s.args...)
				case "pub":
					got, err = pub.DoErr(s.args...)
				default:
					got, err = sub.Read()
				}
				if err != nil || got != s.want {
					t.Fatalf("step %d %s %q:\n got  %q (%v)\n want %q", i+1, s.on, s.args, got, err, s.want)
				}
			}
		})
	}
}

// TestPubSubMessageInsideExec: a client that publishes to its own channel from
// EXEC gets the message inside the EXEC reply, where Redis puts it.
func TestPubSubMessageInsideExec(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, queued, "SUBSCRIBE", "a")
	mustDo(t, c, queued, "PUBLISH", "a", "x")
	if err := c.Write(redistest.Encode("EXEC")); err != nil {
		t.Fatal(err)
	}
	want := "*2\r\n" + subReply("subscribe", "a", 1) + message("a", "x") + num(1)
	got, _ := c.ReadAll(300 * time.Millisecond)
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestPubSubInfo: INFO stats counts channels, patterns and shard channels;
// CLIENT LIST shows a subscriber's counts and its P flag.
func TestPubSubInfo(t *testing.T) {
	sub, _, addr := start(t)
	other := redistest.Dial(t, addr)
	sub.Do("SUBSCRIBE", "a", "b")
	sub.Do("PSUBSCRIBE", "x*")
	sub.Do("SSUBSCRIBE", "s")
	waitStat(t, other, "pubsub_channels", "2")
	waitStat(t, other, "pubsub_patterns", "1")
	waitStat(t, other, "pubsubshard_channels", "1")
	list := other.Do("CLIENT", "LIST")
	if !strings.Contains(list, "flags=P db=0 sub=2 psub=1 ssub=1 ") {
		t.Fatalf("CLIENT LIST has no subscriber line: %q", list)
	}
	sub.Close()
	waitStat(t, other, "pubsub_channels", "0")
	waitStat(t, other, "pubsub_patterns", "0")
}

// TestPubSubQuit: QUIT in subscribed mode gets its +OK before the close.
func TestPubSubQuit(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, subReply("subscribe", "a", 1), "SUBSCRIBE", "a")
	c.Write(redistest.Encode("QUIT"))
	if got, closed := c.ReadAll(5 * time.Second); got != ok || !closed {
		t.Fatalf("QUIT: %q closed=%v", got, closed)
	}
}

// TestPubSubTimeout: the idle timeout does not close a subscriber.
func TestPubSubTimeout(t *testing.T) {
	c, clk, addr := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "timeout", "10")
	sub := redistest.Dial(t, addr)
	mustDo(t, sub, subReply("subscribe", "a", 1), "SUBSCRIBE", "a")
	idle := redistest.Dial(t, addr)
	mustDo(t, idle, simple("PONG"), "PING")
	clk.Advance(20 * time.Second)
	if reply, closed := idle.ReadAll(5 * time.Second); !closed || reply != "" {
		t.Fatalf("idle client: reply %q, closed %v; want it closed", reply, closed)
	}
	pub := redistest.Dial(t, addr)
	mustDo(t, pub, num(1), "PUBLISH", "a", "still here")
	if got, err := sub.Read(); err != nil || got != message("a", "still here") {
		t.Fatalf("subscriber: %q %v", got, err)
	}
	mustDo(t, pub, ok, "CONFIG", "SET", "timeout", "0")
}

// TestClientOutputBufferLimitConfig: CONFIG SET/GET client-output-buffer-limit
// as Redis parses and prints it.
func TestClientOutputBufferLimitConfig(t *testing.T) {
	c, _, _ := start(t)
	confErr := func(msg string) string {
		return errRe("ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - " + msg)
	}
	runSteps(t, c, []step{
		do(bulks("client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
			"CONFIG", "GET", "client-output-buffer-limit"),
		do(ok, "CONFIG", "SET", "client-output-buffer-limit", "PUBSUB 1k 2kb 3 replica 1mb 1m 0"),
		do(bulks("client-output-buffer-limit", "normal 0 0 0 slave 1048576 1000000 0 pubsub 1000 2048 3"),
			"CONFIG", "GET", "client-output-buffer-limit"),
		do(confErr("Invalid client class specified in buffer limit configuration."),
			"CONFIG", "SET", "client-output-buffer-limit", "master 1 1 1"),
		do(confErr("Wrong number of arguments in buffer limit configuration."),
			"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1 1"),
		do(confErr("Error in hard, soft or soft_seconds setting in buffer limit configuration."),
			"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1 1 -1"),
		do(confErr("Error in hard, soft or soft_seconds setting in buffer limit configuration."),
			"CONFIG", "SET", "client-output-buffer-limit", "normal 5 5 5 pubsub x 1 1"),
		do(bulks("client-output-buffer-limit", "normal 0 0 0 slave 1048576 1000000 0 pubsub 1000 2048 3"),
			"CONFIG", "GET", "client-output-buffer-limit"),
	})
}

// TestGoRedisPubSub: go-redis's PubSub (Subscribe, PSubscribe, Channel) works.
func TestGoRedisPubSub(t *testing.T) {
	ctx := context.Background()
	addr := redistest.StartMyRedis(t)
	rdb := newGoRedis(t, &redis.Options{Addr: addr})
	ps := rdb.Subscribe(ctx, "orders")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscribe confirmation
		t.Fatal(err)
	}
	if err := ps.PSubscribe(ctx, "ord*"); err != nil {
		t.Fatal(err)
	}
	ch := ps.Channel()
	// PSubscribe's confirmation is read by Channel's goroutine; publish until
	// both subscriptions deliver.
	deadline := time.After(10 * time.Second)
	for {
		n, err := rdb.Publish(ctx, "orders", "o1").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("PUBLISH reached %d subscriptions", n)
		case <-time.After(10 * time.Millisecond):
		}
	}
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case m := <-ch:
			if m.Payload == "o1" {
				got[m.Channel+"|"+m.Pattern] = true
			}
		case <-deadline:
			t.Fatalf("messages received: %v", got)
		}
	}
	if !got["orders|"] || !got["orders|ord*"] {
		t.Fatalf("messages received: %v", got)
	}
	n, err := rdb.PubSubNumSub(ctx, "orders").Result()
	if err != nil || n["orders"] != 1 {
		t.Fatalf("PUBSUB NUMSUB: %v %v", n, err)
	}
}

// waitStat polls INFO stats until field has value, failing the test if that
// never happens.
func waitStat(t *testing.T, c *redistest.Conn, field, value string) {
	t.Helper()
	var got string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if got = infoFields(t, c.Do("INFO", "stats"))[field]; got == value {
			return
		}
	}
	t.Fatalf("INFO %s stayed %q, want %q", field, got, value)
}

// TestPubSubReplyOff: CLIENT REPLY OFF mutes PING but not the (un)subscribe
// confirmations nor the messages, which Redis sends as pushes.
func TestPubSubReplyOff(t *testing.T) {
	sub, _, addr := start(t)
	pub := redistest.Dial(t, addr)
	sub.Write([]byte(string(redistest.Encode("CLIENT", "REPLY", "OFF")) +
		string(redistest.Encode("SUBSCRIBE", "a")) + string(redistest.Encode("PING"))))
	waitNumSub(t, pub, "a", 1)
	mustDo(t, pub, num(1), "PUBLISH", "a", "hello")
	sub.Write([]byte(string(redistest.Encode("UNSUBSCRIBE")) + string(redistest.Encode("CLIENT", "REPLY", "ON"))))
	want := []string{subReply("subscribe", "a", 1), message("a", "hello"), subReply("unsubscribe", "a", 0), ok}
	for i, w := range want {
		if got, err := sub.Read(); err != nil || got != w {
			t.Fatalf("reply %d: %q %v, want %q", i, got, err, w)
		}
	}
}
