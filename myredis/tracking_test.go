package myredis_test

import (
	"strconv"
	"testing"

	"waitroom/myredis/redistest"
)

// readPush reads the next reply c receives unasked (an invalidation).
func readPush(t *testing.T, c *redistest.Conn, want string) {
	t.Helper()
	got, err := c.Read()
	if err != nil {
		t.Fatalf("reading a push: %v", err)
	}
	if got != want {
		t.Fatalf("push:\n got %q\nwant %q", got, want)
	}
}

func invalidate(keys ...string) string { return push(bulk("invalidate"), bulks(keys...)) }

func TestTrackingRESP3(t *testing.T) {
	c, _, addr := start(t)
	other := redistest.Dial(t, addr)
	c.Do("HELLO", "3")
	mustDo(t, c, ok, "CLIENT", "TRACKING", "on")
	mustDo(t, c, ok, "SET", "a", "1")
	mustDo(t, c, bulk("1"), "GET", "a")
	mustDo(t, c, ok, "SET", "a", "2") // its own write: reply first, then the push
	readPush(t, c, invalidate("a"))
	mustDo(t, c, bulk("2"), "GET", "a")
	mustDo(t, other, num(1), "DEL", "a")
	readPush(t, c, invalidate("a"))
	mustDo(t, other, num(0), "DEL", "a") // forgotten after one invalidation: no push
	mustDo(t, c, null3, "GET", "a")
	mustDo(t, other, ok, "FLUSHALL")
	readPush(t, c, push(bulk("invalidate"), null3))
	if info := c.Do("CLIENT", "TRACKINGINFO"); info != "%3\r\n"+bulk("flags")+"~1\r\n"+bulk("on")+bulk("redirect")+num(0)+bulk("prefixes")+empty {
		t.Fatalf("TRACKINGINFO: %q", info)
	}
	mustDo(t, c, num(0), "CLIENT", "GETREDIR")
	mustDo(t, c, ok, "CLIENT", "TRACKING", "off")
	mustDo(t, c, num(-1), "CLIENT", "GETREDIR")
}

func TestTrackingRedirectRESP2(t *testing.T) {
	c, _, addr := start(t)
	redir := redistest.Dial(t, addr)
	id := clientID(t, redir)
	mustDo(t, redir, subReply("subscribe", "__redis__:invalidate", 1), "SUBSCRIBE", "__redis__:invalidate")
	mustDo(t, c, ok, "CLIENT", "TRACKING", "on", "REDIRECT", strconv.FormatInt(id, 10))
	mustDo(t, c, num(int64(id)), "CLIENT", "GETREDIR")
	mustDo(t, c, null, "GET", "k")
	mustDo(t, c, ok, "SET", "k", "v")
	readPush(t, redir, array(bulk("message"), bulk("__redis__:invalidate"), bulks("k")))
}

func TestTrackingBcastAndOptions(t *testing.T) {
	c, _, addr := start(t)
	other := redistest.Dial(t, addr)
	c.Do("HELLO", "3")
	mustDo(t, c, errRe("ERR PREFIX option requires BCAST mode to be enabled"), "CLIENT", "TRACKING", "on", "PREFIX", "a")
	mustDo(t, c, errRe("ERR OPTIN and OPTOUT are not compatible with BCAST"), "CLIENT", "TRACKING", "on", "BCAST", "OPTIN")
	mustDo(t, c, errRe("ERR Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap."),
		"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a")
	mustDo(t, c, errRe("ERR The client ID you want redirect to does not exist"), "CLIENT", "TRACKING", "on", "REDIRECT", "999999")
	mustDo(t, c, errRe("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"), "CLIENT", "CACHING", "yes")
	mustDo(t, c, ok, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:")
	mustDo(t, other, ok, "MSET", "user:2", "x", "user:1", "y", "other", "z")
	readPush(t, c, invalidate("user:1", "user:2")) // one push per batch, keys in order
	mustDo(t, c, ok, "CLIENT", "TRACKING", "off")

	mustDo(t, c, ok, "CLIENT", "TRACKING", "on", "OPTIN")
	mustDo(t, c, errRe("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."), "CLIENT", "CACHING", "no")
	mustDo(t, c, bulk("x"), "GET", "user:2") // not cached: no CACHING yes before it
	mustDo(t, c, ok, "CLIENT", "CACHING", "yes")
	mustDo(t, c, bulk("y"), "GET", "user:1")
	mustDo(t, other, num(2), "DEL", "user:2", "user:1")
	readPush(t, c, invalidate("user:1"))
}

func TestTrackingTableLimit(t *testing.T) {
	c, _, addr := start(t)
	other := redistest.Dial(t, addr)
	c.Do("HELLO", "3")
	mustDo(t, c, ok, "CLIENT", "TRACKING", "on")
	mustDo(t, c, array(null3, null3), "MGET", "k1", "k2")
	mustDo(t, other, ok, "CONFIG", "SET", "tracking-table-max-keys", "1")
	r, err := c.Read() // one of the two keys is invalidated to get under the limit
	if err != nil || (r != invalidate("k1") && r != invalidate("k2")) {
		t.Fatalf("eviction from the tracking table: %q %v", r, err)
	}
}
