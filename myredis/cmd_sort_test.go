package myredis_test

import "testing"

const notDouble = "-ERR One or more scores can't be converted into double\r\n"

func TestSortCommands(t *testing.T) {
	runGroup(t, []groupCase{
		{"numeric alpha limit", []step{
			do(num(4), "SADD", "s", "3", "1", "2", "10"),
			do(bulks("1", "2", "3", "10"), "SORT", "s"),
			do(bulks("10", "3", "2", "1"), "SORT", "s", "DESC"),
			do(bulks("1", "10", "2", "3"), "SORT", "s", "ALPHA"),
			do(bulks("2", "3"), "SORT", "s", "LIMIT", "1", "2"),
			do(bulks("1", "2", "3", "10"), "SORT_RO", "s"),
			do(notInt, "SORT", "s", "LIMIT", "x", "1"),
			do(syntax, "SORT", "s", "LIMIT", "1"),
			do(syntax, "SORT_RO", "s", "STORE", "d"),
			do(syntax, "SORT", "s", "FOO"),
			do(arity("sort"), "SORT"),
		}},
		{"scores that are not doubles", []step{
			do(num(3), "SADD", "s", "1", "2", "x"),
			do(notDouble, "SORT", "s"),
			do(bulks("1", "2", "x"), "SORT", "s", "ALPHA"),
			do(num(2), "SADD", "o", "1", "1e400"), // overflow: ERANGE
			do(notDouble, "SORT", "o"),
			do(num(2), "SADD", "u", "1", "1e-400"), // underflow: ERANGE too
			do(notDouble, "SORT", "u"),
			do(num(2), "SADD", "n", "1", "nan"),
			do(notDouble, "SORT", "n"),
			do(num(3), "SADD", "e", "1", "", "-1"), // an empty string reads as 0
			do(bulks("-1", "", "1"), "SORT", "e"),
		}},
		{"by get hash", []step{
			do(num(3), "SADD", "s", "1", "2", "3"),
			do(ok, "MSET", "w_1", "30", "w_2", "10", "w_3", "20"),
			do(num(1), "HSET", "h_1", "f", "b"),
			do(num(1), "HSET", "h_3", "f", "a"),
			do(bulks("2", "3", "1"), "SORT", "s", "BY", "w_*"),
			do(array(bulk("2"), bulk("10"), bulk("3"), bulk("20"), bulk("1"), bulk("30")), "SORT", "s", "BY", "w_*", "GET", "#", "GET", "w_*"),
			do(array(null, bulk("a"), bulk("b")), "SORT", "s", "BY", "h_*->f", "ALPHA", "GET", "h_*->f"),
			do(array(null, null, null), "SORT", "s", "GET", "nostar"),
			do(array(null, null, null), "SORT", "s", "GET", "w_*->f"), // a string is no hash
			do(bulks("1", "2", "3"), "SORT", "s", "BY", "nosort"),
		}},
		{"sorted set by rank", []step{
			do(num(3), "ZADD", "z", "3", "a", "1", "b", "2", "c"),
			do(bulks("b", "c", "a"), "SORT", "z", "BY", "nosort"),
			do(bulks("a", "c"), "SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2"),
			do(bulks("a", "b", "c"), "SORT", "z", "ALPHA"),
		}},
		{"store", []step{
			do(num(1), "SADD", "s", "1"),
			do(ok, "SET", "d", "x"),
			do(num(0), "SORT", "s", "STORE", "d", "LIMIT", "0", "0"),
			do(num(0), "EXISTS", "d"),
			do(num(0), "SORT", "nokey", "STORE", "d"),
			do(ok, "SET", "str", "x"),
			do(wrongType, "SORT", "str", "STORE", "d"),
			do(wrongType, "SORT_RO", "str"),
		}},
	})
}
