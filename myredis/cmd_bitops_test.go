package myredis_test

import (
	"strings"
	"testing"
)

const (
	bitOffsetErr = "-ERR bit offset is not an integer or out of range\r\n"
	wrongType    = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
)

func TestBitCommands(t *testing.T) {
	runGroup(t, []groupCase{
		{"setbit getbit", []step{
			do(num(0), "SETBIT", "k", "7", "1"),
			do(bulk("\x01"), "GET", "k"),
			do(num(1), "SETBIT", "k", "7", "0"),
			do(num(0), "SETBIT", "k", "17", "1"),
			do(bulk("\x00\x00\x40"), "GET", "k"),
			do(num(1), "GETBIT", "k", "17"),
			do(num(0), "GETBIT", "k", "18"),
			do(num(0), "GETBIT", "k", "1000000"),
			do(num(0), "GETBIT", "missing", "3"),
			do(num(0), "EXISTS", "missing"),
			do(bitOffsetErr, "SETBIT", "k", "-1", "1"),
			do(bitOffsetErr, "SETBIT", "k", "4294967296", "1"), // 512 MB: one past the last bit
			do(bitOffsetErr, "GETBIT", "k", "x"),
			do(errRe("ERR bit is not an integer or out of range"), "SETBIT", "k", "1", "2"),
			do(errRe("ERR bit is not an integer or out of range"), "SETBIT", "k", "1", "x"),
			do(num(3), "STRLEN", "k"),
			do(ok, "SET", "n", "5"), // "5" is 0x35 = 00110101
			do(num(1), "GETBIT", "n", "2"),
			do(num(0), "SETBIT", "n", "6", "1"),
			do(bulk("7"), "GET", "n"),
			do(num(1), "HSET", "h", "f", "v"),
			do(wrongType, "SETBIT", "h", "0", "1"),
			do(wrongType, "GETBIT", "h", "0"),
			do(arity("setbit"), "SETBIT", "k", "1"),
		}},
		{"setbit keeps the ttl", []step{
			do(ok, "SET", "k", "a", "EX", "100"),
			do(num(0), "SETBIT", "k", "100", "1"),
			do(num(100), "TTL", "k"),
			do(num(13), "STRLEN", "k"),
		}},
		{"bitcount", []step{
			do(num(0), "BITCOUNT", "missing"),
			do(num(0), "BITCOUNT", "missing", "x", "y"), // the key is looked up first
			do(ok, "SET", "k", "foobar"),
			do(num(26), "BITCOUNT", "k"),
			do(num(4), "BITCOUNT", "k", "0", "0"),
			do(num(6), "BITCOUNT", "k", "1", "1"),
			do(num(7), "BITCOUNT", "k", "-2", "-1"),
			do(num(0), "BITCOUNT", "k", "-1", "-2"),
			do(num(17), "BITCOUNT", "k", "5", "30", "BIT"),
			do(num(26), "BITCOUNT", "k", "0", "47", "bit"),
			do(num(6), "BITCOUNT", "k", "1", "1", "BYTE"),
			do(syntax, "BITCOUNT", "k", "1"),
			do(syntax, "BITCOUNT", "k", "1", "1", "BITS"),
			do(notInt, "BITCOUNT", "k", "a", "1"),
			do(num(1), "HSET", "h", "f", "v"),
			do(wrongType, "BITCOUNT", "h"),
		}},
		{"bitpos", []step{
			do(num(0), "BITPOS", "missing", "0"),
			do(num(-1), "BITPOS", "missing", "1"),
			do(errRe("ERR The bit argument must be 1 or 0."), "BITPOS", "k", "2"),
			do(ok, "SET", "k", "\xff\xf0\x00"),
			do(num(12), "BITPOS", "k", "0"),
			do(num(0), "BITPOS", "k", "1"),
			do(num(16), "BITPOS", "k", "0", "2"),
			do(num(-1), "BITPOS", "k", "1", "2"),
			do(num(12), "BITPOS", "k", "0", "7", "15", "BIT"),
			do(num(-1), "BITPOS", "k", "0", "0", "11", "BIT"),
			do(num(-1), "BITPOS", "k", "0", "0", "0"), // an end given: no padding past it
			do(ok, "SET", "ones", "\xff\xff"),
			do(num(16), "BITPOS", "ones", "0"), // the first bit past the string
			do(num(-1), "BITPOS", "ones", "0", "0", "-1"),
			do(syntax, "BITPOS", "k", "0", "0", "0", "foo"),
			do(syntax, "BITPOS", "k", "0", "0", "0", "BIT", "x"),
		}},
		{"bitop", []step{
			do(ok, "SET", "a", "\xf0\x0f"),
			do(ok, "SET", "b", "\xff"),
			do(num(2), "BITOP", "AND", "d", "a", "b"),
			do(bulk("\xf0\x00"), "GET", "d"),
			do(num(2), "BITOP", "or", "d", "a", "b"),
			do(bulk("\xff\x0f"), "GET", "d"),
			do(num(2), "BITOP", "XOR", "d", "a", "b"),
			do(bulk("\x0f\x0f"), "GET", "d"),
			do(num(2), "BITOP", "NOT", "d", "a"),
			do(bulk("\x0f\xf0"), "GET", "d"),
			do(errRe("ERR BITOP NOT must be called with a single source key."), "BITOP", "NOT", "d", "a", "b"),
			do(syntax, "BITOP", "NAND", "d", "a"),
			do(num(0), "BITOP", "AND", "d", "missing"), // an empty result deletes the target
			do(num(0), "EXISTS", "d"),
			do(num(1), "HSET", "h", "f", "v"),
			do(wrongType, "BITOP", "AND", "d", "a", "h"),
			do(num(2), "BITOP", "AND", "h", "a"), // the target may hold any type
			do(simple("string"), "TYPE", "h"),
		}},
		{"bitfield", []step{
			do(array(num(0)), "BITFIELD", "k", "SET", "i8", "0", "-100"),
			do(array(num(-100), num(156), num(12), num(-4)), "BITFIELD", "k", "GET", "i8", "0", "GET", "u8", "0", "GET", "u4", "4", "GET", "i4", "4"),
			do(array(num(0), num(100)), "BITFIELD", "k2", "SET", "u8", "#1", "100", "GET", "u8", "8"),
			do(bulk("\x00d"), "GET", "k2"),
			do(array(num(127), num(-128)), "BITFIELD", "w", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "200", "INCRBY", "i8", "0", "-1000"),
			do(array(num(-56)), "BITFIELD", "w2", "INCRBY", "i8", "0", "200"),
			do(array(num(3), null), "BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "3", "INCRBY", "u2", "0", "1"),
			do(array(num(0)), "BITFIELD", "missing", "GET", "i64", "100"),
			do(num(0), "EXISTS", "missing"),
			do(empty, "BITFIELD", "k"),
			do(errRe("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."), "BITFIELD", "k", "GET", "u64", "0"),
			do(errRe("ERR Invalid OVERFLOW type specified"), "BITFIELD", "k", "OVERFLOW", "x"),
			do(bitOffsetErr, "BITFIELD", "k", "GET", "u8", "#-1"),
			do(syntax, "BITFIELD", "k", "GET", "u8"),
			do(notInt, "BITFIELD", "k", "SET", "u8", "0", "x"),
			do(syntax, "BITFIELD", "nk", "SET", "u8", "0", "1", "BAD"),
			do(num(0), "EXISTS", "nk"), // parsed in full before anything is written
			do(array(num(156)), "BITFIELD_RO", "k", "GET", "u8", "0"),
			do(errRe("ERR BITFIELD_RO only supports the GET subcommand"), "BITFIELD_RO", "k", "SET", "u8", "0", "1"),
		}},
	})
}

func TestStringRangeCommands(t *testing.T) {
	runGroup(t, []groupCase{
		{"setrange", []step{
			do(num(5), "SETRANGE", "k", "0", "hello"),
			do(num(11), "SETRANGE", "k", "6", "world"),
			do(bulk("hello\x00world"), "GET", "k"),
			do(num(11), "SETRANGE", "k", "100", ""),
			do(num(0), "SETRANGE", "missing", "5", ""),
			do(num(0), "EXISTS", "missing"),
			do(errRe("ERR offset is out of range"), "SETRANGE", "k", "-1", "x"),
			do(errRe("ERR string exceeds maximum allowed size (proto-max-bulk-len)"), "SETRANGE", "k", "536870912", "x"),
			do(errRe("ERR string exceeds maximum allowed size (proto-max-bulk-len)"), "SETRANGE", "k", "9223372036854775807", "x"),
			do(notInt, "SETRANGE", "k", "x", "x"),
			do(num(1), "HSET", "h", "f", "v"),
			do(wrongType, "SETRANGE", "h", "0", "x"),
			do(ok, "SET", "t", "abc", "EX", "100"),
			do(num(5), "SETRANGE", "t", "1", "XYZW"),
			do(bulk("aXYZW"), "GET", "t"),
			do(num(100), "TTL", "t"),
		}},
		{"getrange", []step{
			do(ok, "SET", "k", "This is a string"),
			do(bulk("This"), "GETRANGE", "k", "0", "3"),
			do(bulk("ing"), "GETRANGE", "k", "-3", "-1"),
			do(bulk("This is a string"), "GETRANGE", "k", "0", "-1"),
			do(bulk("string"), "GETRANGE", "k", "10", "100"),
			do(bulk(""), "GETRANGE", "k", "5", "3"),
			do(bulk("This"), "SUBSTR", "k", "0", "3"),
			do(bulk(""), "GETRANGE", "missing", "0", "-1"),
			do(notInt, "GETRANGE", "missing", "x", "1"),
			do(num(1), "HSET", "h", "f", "v"),
			do(wrongType, "GETRANGE", "h", "0", "1"),
		}},
		{"lcs", []step{
			do(ok, "SET", "a", "ohmytext"),
			do(ok, "SET", "b", "mynewtext"),
			do(bulk("mytext"), "LCS", "a", "b"),
			do(num(6), "LCS", "a", "b", "LEN"),
			do(array(bulk("matches"), array(
				array(array(num(4), num(7)), array(num(5), num(8)), num(4)),
				array(array(num(2), num(3)), array(num(0), num(1)), num(2))),
				bulk("len"), num(6)), "LCS", "a", "b", "IDX", "WITHMATCHLEN"),
			do(array(bulk("matches"), array(
				array(array(num(4), num(7)), array(num(5), num(8)))),
				bulk("len"), num(6)), "LCS", "a", "b", "IDX", "MINMATCHLEN", "4"),
			do(errRe("ERR If you want both the length and indexes, please just use IDX."), "LCS", "a", "b", "LEN", "IDX"),
			do(syntax, "LCS", "a", "b", "FOO"),
			do(bulk(""), "LCS", "a", "missing"),
			do(num(1), "HSET", "h", "f", "v"),
			do(errRe("ERR The specified keys must contain string values"), "LCS", "a", "h"),
		}},
	})
}

// TestLCSLimit: the table LCS needs is refused before it is allocated when it
// would exceed proto-max-bulk-len.
func TestLCSLimit(t *testing.T) {
	c, _, _ := start(t)
	big := strings.Repeat("a", 20000)
	runSteps(t, c, []step{
		do(ok, "SET", "a", big),
		do(ok, "SET", "b", big),
		do(errRe("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"), "LCS", "a", "b"),
		do(ok, "SET", "b", "xa"),
		do(bulk("a"), "LCS", "a", "b"),
	})
}

// TestBitsDirty: SETBIT and BITFIELD count a change only when a bit changes
// or the string grows, as Redis's dirty counter does.
func TestBitsDirty(t *testing.T) {
	c, _, _ := start(t)
	changes := func() string {
		info := c.Do("INFO", "persistence")
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "rdb_changes_since_last_save:"); ok {
				return v
			}
		}
		t.Fatal("no rdb_changes_since_last_save")
		return ""
	}
	before := changes()
	c.Do("SETBIT", "k", "0", "0") // created: a change
	c.Do("SETBIT", "k", "0", "0") // no change
	c.Do("BITFIELD", "k", "SET", "u1", "0", "0")
	after := changes()
	if before != "0" || after != "1" {
		t.Fatalf("changes %s then %s, want 0 then 1", before, after)
	}
}
