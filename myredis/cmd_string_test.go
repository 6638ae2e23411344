package myredis_test

import (
	"strings"
	"testing"
	"time"
)

func TestStringCommands(t *testing.T) {
	invalidExpire := func(cmd string) string { return errRe("ERR invalid expire time in '" + cmd + "' command") }
	runGroup(t, []groupCase{
		{"get set", []step{
			do(null, "GET", "k"),
			do(ok, "SET", "k", "v"),
			do(bulk("v"), "GET", "k"),
			do(ok, "set", "k", ""),
			do(bulk(""), "GET", "k"),
			do(ok, "SET", "bin\x00\r\n", "a\x00b"),
			do(bulk("a\x00b"), "GET", "bin\x00\r\n"),
			do(arity("get"), "GET"),
			do(arity("get"), "GET", "a", "b"),
			do(arity("set"), "SET", "k"),
		}},
		{"set NX XX GET", []step{
			do(ok, "SET", "k", "v", "NX"),
			do(null, "SET", "k", "v2", "NX"),
			do(ok, "SET", "k", "v3", "XX"),
			do(null, "SET", "missing", "v", "XX"),
			do(null, "GET", "missing"),
			do(bulk("v3"), "SET", "k", "v4", "GET"),
			do(null, "SET", "new", "v", "GET"),
			do(bulk("v4"), "SET", "k", "v5", "NX", "GET"),
			do(bulk("v4"), "GET", "k"),
			do(null, "SET", "other", "v", "XX", "GET"),
			do(null, "GET", "other"),
		}},
		{"set option conflicts are syntax errors", []step{
			do(syntax, "SET", "k", "v", "NX", "XX"),
			do(syntax, "SET", "k", "v", "XX", "NX"),
			do(syntax, "SET", "k", "v", "EX", "10", "PX", "100"),
			do(syntax, "SET", "k", "v", "EX", "10", "KEEPTTL"),
			do(syntax, "SET", "k", "v", "KEEPTTL", "PXAT", "10"),
			do(syntax, "SET", "k", "v", "EXAT", "10", "PXAT", "10"),
			do(syntax, "SET", "k", "v", "EX"),
			do(syntax, "SET", "k", "v", "PERSIST"),
			do(syntax, "SET", "k", "v", "FOO"),
			do(null, "GET", "k"),
		}},
		{"set expiry values", []step{
			do(invalidExpire("set"), "SET", "k", "v", "EX", "0"),
			do(invalidExpire("set"), "SET", "k", "v", "PX", "-1"),
			do(invalidExpire("set"), "SET", "k", "v", "EXAT", "0"),
			do(invalidExpire("set"), "SET", "k", "v", "EX", "9223372036854776"),
			do(notInt, "SET", "k", "v", "EX", "1.5"),
			do(notInt, "SET", "k", "v", "EX", "+5"),
			do(notInt, "SET", "k", "v", "EX", "99999999999999999999"),
			do(null, "GET", "k"),
			do(ok, "SET", "k", "v", "EX", "abc", "EX", "100"), // the last expiry wins
			do(num(100), "TTL", "k"),
		}},
		{"set TTL options", []step{
			do(ok, "SET", "k", "v", "EX", "100"),
			do(num(100), "TTL", "k"),
			do(ok, "SET", "k", "v", "KEEPTTL"),
			do(num(100), "TTL", "k"),
			do(ok, "SET", "k", "v"),
			do(num(-1), "TTL", "k"),
			do(ok, "SET", "k", "v", "PX", "1500"),
			do(num(1500), "PTTL", "k"),
			do(num(2), "TTL", "k"), // 1.5 s rounds to 2, as Redis
			do(ok, "SET", "k", "v", "EXAT", at(1000*time.Second, false)),
			do(num(1000), "TTL", "k"),
			do(ok, "SET", "k", "v", "PXAT", at(2500*time.Millisecond, true)),
			do(bulk("v"), "GET", "k"),
			do(num(2500), "PTTL", "k"),
			do(ok, "SET", "k", "v", "EXAT", "1"), // in the past: gone at once
			do(null, "GET", "k"),
		}},
		{"setnx setex psetex", []step{
			do(num(1), "SETNX", "k", "v"),
			do(num(0), "SETNX", "k", "v2"),
			do(bulk("v"), "GET", "k"),
			do(ok, "SETEX", "k", "100", "v"),
			do(num(100), "TTL", "k"),
			do(ok, "PSETEX", "k", "2500", "v"),
			do(num(2500), "PTTL", "k"),
			do(invalidExpire("setex"), "SETEX", "k", "0", "v"),
			do(invalidExpire("psetex"), "PSETEX", "k", "-5", "v"),
			do(notInt, "SETEX", "k", "x", "v"),
			do(arity("setex"), "SETEX", "k", "10"),
			do(arity("setnx"), "SETNX", "k"),
		}},
		{"getdel getset", []step{
			do(null, "GETDEL", "k"),
			do(ok, "SET", "k", "v"),
			do(bulk("v"), "GETDEL", "k"),
			do(num(0), "EXISTS", "k"),
			do(null, "GETSET", "k", "a"),
			do(num(1), "EXPIRE", "k", "100"),
			do(bulk("a"), "GETSET", "k", "b"),
			do(num(-1), "TTL", "k"), // GETSET drops the TTL
			do(arity("getdel"), "GETDEL", "a", "b"),
		}},
		{"getex", []step{
			do(null, "GETEX", "k"),
			do(null, "GETEX", "k", "EX", "0"), // the key is looked up before the expiry is checked
			do(ok, "SET", "k", "v"),
			do(bulk("v"), "GETEX", "k", "EX", "100"),
			do(num(100), "TTL", "k"),
			do(bulk("v"), "GETEX", "k", "PERSIST"),
			do(num(-1), "TTL", "k"),
			do(bulk("v"), "GETEX", "k", "PXAT", at(3*time.Second, true)),
			do(num(3000), "PTTL", "k"),
			do(invalidExpire("getex"), "GETEX", "k", "EX", "0"),
			do(notInt, "GETEX", "k", "EX", "x"),
			do(syntax, "GETEX", "k", "PERSIST", "EX", "10"),
			do(syntax, "GETEX", "k", "KEEPTTL"),
			do(syntax, "GETEX", "k", "EX"),
			do(bulk("v"), "GETEX", "k", "EXAT", "1"), // in the past: returned, then deleted
			do(num(0), "EXISTS", "k"),
		}},
		{"mget mset msetnx", []step{
			do(ok, "MSET", "a", "1", "b", "2"),
			do(array(bulk("1"), bulk("2"), null), "MGET", "a", "b", "c"),
			do(arity("mset"), "MSET", "a", "1", "b"),
			do(num(0), "MSETNX", "a", "9", "z", "9"),
			do(null, "GET", "z"),
			do(num(1), "MSETNX", "x", "1", "y", "2"),
			do(arity("msetnx"), "MSETNX", "x"),
			do(arity("mget"), "MGET"),
		}},
		{"incr decr", []step{
			do(num(1), "INCR", "n"),
			do(num(0), "DECR", "n"),
			do(num(10), "INCRBY", "n", "10"),
			do(num(7), "DECRBY", "n", "3"),
			do(num(-3), "INCRBY", "n", "-10"),
			do(notInt, "INCRBY", "n", "1.5"),
			do(notInt, "INCRBY", "n", "+1"),
			do(notInt, "INCRBY", "n", "01"),
			do(ok, "SET", "s", "abc"),
			do(notInt, "INCR", "s"),
			do(ok, "SET", "s", " 1"),
			do(notInt, "INCR", "s"),
			do(ok, "SET", "s", "-0"),
			do(notInt, "INCR", "s"),
			do(ok, "SET", "max", "9223372036854775807"),
			do(errRe("ERR increment or decrement would overflow"), "INCR", "max"),
			do(ok, "SET", "min", "-9223372036854775808"),
			do(errRe("ERR increment or decrement would overflow"), "DECR", "min"),
			do(errRe("ERR decrement would overflow"), "DECRBY", "n", "-9223372036854775808"),
			do(ok, "SET", "t", "5", "EX", "100"),
			do(num(6), "INCR", "t"),
			do(num(100), "TTL", "t"), // INCR keeps the TTL
			do(arity("incr"), "INCR"),
		}},
		{"incrbyfloat", []step{
			do(bulk("1.5"), "INCRBYFLOAT", "f", "1.5"),
			do(bulk("1001.5"), "INCRBYFLOAT", "f", "1000"),
			do(bulk("1001.59999999999999998"), "INCRBYFLOAT", "f", "0.1"), // long double, as Redis on x86
			do(bulk("17"), "INCRBYFLOAT", "g", "0x11"),
			do(bulk("1"), "INCRBYFLOAT", "z", "1e0"),
			do(notFloat, "INCRBYFLOAT", "f", "abc"),
			do(notFloat, "INCRBYFLOAT", "f", " 1"),
			do(notFloat, "INCRBYFLOAT", "f", "nan"),
			do(errRe("ERR increment would produce NaN or Infinity"), "INCRBYFLOAT", "f", "inf"),
			do(ok, "SET", "s", "x"),
			do(notFloat, "INCRBYFLOAT", "s", "1"),
			do(ok, "SET", "t", "1", "EX", "100"),
			do(bulk("2.5"), "INCRBYFLOAT", "t", "1.5"),
			do(num(100), "TTL", "t"),
		}},
		{"append strlen", []step{
			do(num(5), "APPEND", "k", "hello"),
			do(num(11), "APPEND", "k", " world"),
			do(bulk("hello world"), "GET", "k"),
			do(num(11), "STRLEN", "k"),
			do(num(0), "STRLEN", "missing"),
			do(ok, "SET", "t", "v", "EX", "100"),
			do(num(2), "APPEND", "t", "x"),
			do(num(100), "TTL", "t"),
			do(arity("append"), "APPEND", "k"),
		}},
	})
}

// TestStringExpiryWithClock moves the injected clock: keys expire at their
// deadline to the millisecond, on every read path.
func TestStringExpiryWithClock(t *testing.T) {
	c, clk, _ := start(t)
	mustDo(t, c, ok, "SET", "k", "v", "PX", "1000")
	mustDo(t, c, ok, "SET", "k2", "v", "PX", "1000")
	mustDo(t, c, ok, "SET", "k3", "1", "PX", "1000")
	clk.Advance(999 * time.Millisecond)
	mustDo(t, c, bulk("v"), "GET", "k")
	mustDo(t, c, num(1), "PTTL", "k")
	mustDo(t, c, num(0), "TTL", "k")
	clk.Advance(time.Millisecond)
	mustDo(t, c, null, "GET", "k")
	mustDo(t, c, num(-2), "PTTL", "k")
	mustDo(t, c, num(0), "STRLEN", "k2")
	mustDo(t, c, num(1), "INCR", "k3") // an expired counter starts again from 0
	mustDo(t, c, num(-1), "TTL", "k3")
	mustDo(t, c, array(null, null), "MGET", "k", "k2")
}

// TestStringLimits checks APPEND against proto-max-bulk-len.
func TestStringAppendLimit(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "proto-max-bulk-len", "1mb")
	mustDo(t, c, ok, "SET", "k", strings.Repeat("x", 1<<20))
	mustDo(t, c, errRe("ERR string exceeds maximum allowed size (proto-max-bulk-len)"), "APPEND", "k", "y")
	mustDo(t, c, num(1<<20), "STRLEN", "k")
}
