package myredis_test

import (
	"strconv"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

// RESP3 shorthands: a push of items, RESP3's null.
func push(items ...string) string {
	return ">" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}

const null3 = "_\r\n"

// hello3 is HELLO's reply in RESP3 for a client id.
func hello3(id int64) string {
	return "%7\r\n" + bulk("server") + bulk("redis") + bulk("version") + bulk("7.0.15") + bulk("proto") + num(3) +
		bulk("id") + num(id) + bulk("mode") + bulk("standalone") + bulk("role") + bulk("master") + bulk("modules") + empty
}

func TestHelloSwitchesProtocol(t *testing.T) {
	c, _, _ := start(t)
	id := clientID(t, c)
	mustDo(t, c, null, "GET", "missing")
	mustDo(t, c, hello3(id), "HELLO", "3")
	mustDo(t, c, null3, "GET", "missing")
	mustDo(t, c, hello3(id), "HELLO") // no version: stays on RESP3, says so
	if info := c.Do("CLIENT", "INFO"); !strings.Contains(info, " resp=3 ") {
		t.Fatalf("CLIENT INFO after HELLO 3: %q", info)
	}
	mustDo(t, c, errRe("NOPROTO unsupported protocol version"), "HELLO", "4")
	mustDo(t, c, null3, "GET", "missing") // a refused HELLO changes nothing
	mustDo(t, c, hello2(id), "HELLO", "2")
	mustDo(t, c, null, "GET", "missing")
	mustDo(t, c, hello3(id), "HELLO", "3", "SETNAME", "r3")
	mustDo(t, c, bulk("r3"), "CLIENT", "GETNAME")
	mustDo(t, c, simple("RESET"), "RESET") // back to RESP2
	mustDo(t, c, null, "GET", "missing")
}

// TestHelloOptionsInOrder: as Redis 7.0.15, HELLO's options act in order, so a
// SETNAME before a bad option has named the client.
func TestHelloOptionsInOrder(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, errRe("ERR Syntax error in HELLO option 'FOO'"), "HELLO", "3", "SETNAME", "first", "FOO")
	mustDo(t, c, bulk("first"), "CLIENT", "GETNAME")
	mustDo(t, c, null, "GET", "missing") // the failed HELLO did not switch
}

// TestPubSubRESP3: a RESP3 subscriber gets confirmations and messages as pushes
// and may run any command while subscribed.
func TestPubSubRESP3(t *testing.T) {
	sub, _, addr := start(t)
	pub := redistest.Dial(t, addr)
	sub.Do("HELLO", "3")
	mustDo(t, sub, push(bulk("subscribe"), bulk("a"), num(1)), "SUBSCRIBE", "a")
	mustDo(t, sub, push(bulk("psubscribe"), bulk("a*"), num(2)), "PSUBSCRIBE", "a*")
	mustDo(t, sub, null3, "GET", "k") // allowed in RESP3
	mustDo(t, sub, simple("PONG"), "PING")
	mustDo(t, pub, num(2), "PUBLISH", "a", "hi")
	want := push(bulk("message"), bulk("a"), bulk("hi")) + push(bulk("pmessage"), bulk("a*"), bulk("a"), bulk("hi"))
	got := ""
	for len(got) < len(want) {
		r, err := sub.Read()
		if err != nil {
			t.Fatalf("read: %v (so far %q)", err, got)
		}
		got += r
	}
	if got != want {
		t.Fatalf("messages:\n got %q\nwant %q", got, want)
	}
	mustDo(t, sub, push(bulk("unsubscribe"), bulk("a"), num(1)), "UNSUBSCRIBE")
	mustDo(t, sub, push(bulk("unsubscribe"), null3, num(1)), "UNSUBSCRIBE") // none left: a null name
	// a RESP2 subscriber of the same channel gets the RESP2 form
	old := redistest.Dial(t, addr)
	mustDo(t, old, subReply("psubscribe", "a*", 1), "PSUBSCRIBE", "a*")
	mustDo(t, pub, num(2), "PUBLISH", "ab", "x")
	if r, _ := old.Read(); r != bulks("pmessage", "a*", "ab", "x") {
		t.Fatalf("RESP2 pmessage: %q", r)
	}
	if r, _ := sub.Read(); r != push(bulk("pmessage"), bulk("a*"), bulk("ab"), bulk("x")) {
		t.Fatalf("RESP3 pmessage: %q", r)
	}
}
