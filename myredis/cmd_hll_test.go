package myredis_test

import (
	"strconv"
	"strings"
	"testing"
)

const (
	hllWrongType = "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"
	hllCorrupt   = "-INVALIDOBJ Corrupted HLL object detected\r\n"
	// emptyHLL is a new HLL as Redis stores it after PFADD: sparse, one XZERO of
	// 16384, the cached cardinality marked stale.
	emptyHLL = "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"
)

func TestHLLCommands(t *testing.T) {
	runGroup(t, []groupCase{
		{"pfadd pfcount", []step{
			do(num(1), "PFADD", "h"), // creates the key
			do(bulk(emptyHLL), "GET", "h"),
			do(simple("string"), "TYPE", "h"),
			do(num(0), "PFCOUNT", "h"),
			do(bulk(emptyHLL[:15]+"\x00\x7f\xff"), "GET", "h"), // PFCOUNT cached 0
			do(num(1), "PFADD", "h", "a", "b", "c"),
			do(num(0), "PFADD", "h", "a", "b", "c"),
			do(num(3), "PFCOUNT", "h"),
			do(bulk("\x00"), "GETRANGE", "h", "15", "15"), // cache valid
			do(num(0), "PFADD", "h", "a"),
			do(bulk("\x00"), "GETRANGE", "h", "15", "15"),
			do(num(1), "PFADD", "h", "1", "2", "3"),
			do(bulk("\x80"), "GETRANGE", "h", "15", "15"), // invalidated
			do(num(6), "PFCOUNT", "h"),
			do(num(0), "PFCOUNT", "missing"),
			do(arity("pfadd"), "PFADD"),
		}},
		{"pfmerge and union", []step{
			do(num(1), "PFADD", "a", "a", "b", "c"),
			do(num(1), "PFADD", "b", "b", "c", "d"),
			do(num(1), "PFADD", "c", "c", "d", "e"),
			do(ok, "PFMERGE", "m", "a", "b", "c"),
			do(num(5), "PFCOUNT", "m"),
			do(num(5), "PFCOUNT", "a", "b", "c", "missing"),
			do(ok, "PFMERGE", "empty", "missing"),
			do(bulk(emptyHLL), "GET", "empty"),
		}},
		{"type checks and corruption", []step{
			do(ok, "SET", "s", "bar"),
			do(hllWrongType, "PFADD", "s", "1"),
			do(hllWrongType, "PFCOUNT", "s"),
			do(hllWrongType, "PFMERGE", "x", "s"),
			do(hllWrongType, "PFMERGE", "s", "x"),
			do(num(1), "HSET", "hh", "f", "v"),
			do(wrongType, "PFADD", "hh", "1"),
			do(num(1), "PFADD", "h", "a", "b", "c"),
			do(num(32), "APPEND", "h", "hello"),
			do(hllCorrupt, "PFCOUNT", "h"),
			do(hllCorrupt, "PFCOUNT", "h", "x"),
			do(ok, "SET", "d", "HYLL\x00"+strings.Repeat("\x00", 11)), // dense of the wrong length
			do(hllWrongType, "PFCOUNT", "d"),
		}},
		{"pfdebug", []step{
			do(num(1), "PFADD", "h", "a"),
			do(simple("sparse"), "PFDEBUG", "ENCODING", "h"),
			do(num(1), "PFDEBUG", "TODENSE", "h"),
			do(num(0), "PFDEBUG", "TODENSE", "h"),
			do(simple("dense"), "PFDEBUG", "ENCODING", "h"),
			do(num(12304), "STRLEN", "h"),
			do(errRe("ERR HLL encoding is not sparse"), "PFDEBUG", "DECODE", "h"),
			do(errRe("ERR The specified key does not exist"), "PFDEBUG", "ENCODING", "missing"),
			do(errRe("ERR Unknown PFDEBUG subcommand 'foo'"), "PFDEBUG", "foo", "h"),
			do(num(1), "PFADD", "s"),
			do(bulk("Z:16384"), "PFDEBUG", "DECODE", "s"),
		}},
	})
}

// TestHLLPromotion: an HLL turns dense when its sparse code would pass
// hll-sparse-max-bytes, and counts within a few percent on either side.
func TestHLLPromotion(t *testing.T) {
	c, _, _ := start(t)
	if got := c.Do("CONFIG", "GET", "hll-sparse-max-bytes"); got != array(bulk("hll-sparse-max-bytes"), bulk("3000")) {
		t.Fatalf("CONFIG GET: %q", got)
	}
	c.Do("CONFIG", "SET", "hll-sparse-max-bytes", "500")
	n := 0
	for n < 5000 {
		args := []string{"PFADD", "h"}
		for i := 0; i < 100; i++ {
			args = append(args, "e"+strconv.Itoa(n))
			n++
		}
		c.Do(args...)
		enc := c.Do("PFDEBUG", "ENCODING", "h")
		strlen := c.Do("STRLEN", "h")
		if enc == simple("sparse") {
			if l, _ := strconv.Atoi(strings.Trim(strlen, ":\r\n")); l > 500 {
				t.Fatalf("sparse HLL of %d bytes, over the 500 allowed", l)
			}
		}
		card, _ := strconv.Atoi(strings.Trim(c.Do("PFCOUNT", "h"), ":\r\n"))
		if d := card - n; d*d*400 > n*n { // within 5%
			t.Fatalf("PFCOUNT %d after %d distinct elements", card, n)
		}
	}
	if enc := c.Do("PFDEBUG", "ENCODING", "h"); enc != simple("dense") {
		t.Fatalf("5000 elements with a 500-byte limit: %q", enc)
	}
}
