package myredis_test

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	notPosErr  = "-ERR value is out of range, must be positive\r\n"
	numkeysErr = "-ERR numkeys should be greater than 0\r\n"
	limitErr   = "-ERR LIMIT can't be negative\r\n"
)

func TestSetCommands(t *testing.T) {
	runGroup(t, []groupCase{
		{"sadd srem scard", []step{
			do(num(3), "SADD", "s", "3", "1", "2"),
			do(num(1), "SADD", "s", "1", "a", "a"),
			do(num(4), "SCARD", "s"),
			do(num(0), "SCARD", "nokey"),
			do(num(2), "SREM", "s", "a", "1", "zz"),
			do(num(0), "SREM", "nokey", "a"),
			do(num(2), "SREM", "s", "2", "3", "9"),
			do(num(0), "EXISTS", "s"),
			do(simple("none"), "TYPE", "s"),
			do(arity("sadd"), "SADD", "s"),
			do(arity("srem"), "SREM", "s"),
			do(arity("scard"), "SCARD"),
		}},
		{"intset order", []step{
			do(num(5), "SADD", "s", "10", "-5", "3", "0", "9223372036854775807"),
			do(bulks("-5", "0", "3", "10", "9223372036854775807"), "SMEMBERS", "s"),
			do(array(bulk("0"), bulks("-5", "0", "3", "10", "9223372036854775807")), "SSCAN", "s", "0", "COUNT", "1"),
			do(array(bulk("0"), bulks("0", "3", "10")), "SSCAN", "s", "0", "MATCH", "*[03]"),
			do(bulks("-5", "0", "3", "10", "9223372036854775807"), "SRANDMEMBER", "s", "5"),
			do(simple("set"), "TYPE", "s"),
		}},
		{"membership", []step{
			do(num(2), "SADD", "s", "a", "1"),
			do(num(1), "SISMEMBER", "s", "a"),
			do(num(0), "SISMEMBER", "s", "b"),
			do(num(0), "SISMEMBER", "nokey", "a"),
			do(array(":1\r\n", ":0\r\n", ":1\r\n"), "SMISMEMBER", "s", "a", "b", "1"),
			do(array(":0\r\n"), "SMISMEMBER", "nokey", "a"),
			do(arity("smismember"), "SMISMEMBER", "s"),
			do(arity("sismember"), "SISMEMBER", "s"),
			do(empty, "SMEMBERS", "nokey"),
		}},
		{"wrong type", []step{
			do(ok, "SET", "str", "x"),
			do(num(1), "SADD", "s", "a"),
			do(wrongType, "SADD", "str", "a"),
			do(wrongType, "SREM", "str", "a"),
			do(wrongType, "SCARD", "str"),
			do(wrongType, "SISMEMBER", "str", "a"),
			do(wrongType, "SMISMEMBER", "str", "a"),
			do(wrongType, "SMEMBERS", "str"),
			do(wrongType, "SRANDMEMBER", "str"),
			do(wrongType, "SPOP", "str"),
			do(wrongType, "SSCAN", "str", "0"),
			do(wrongType, "SINTER", "s", "nokey", "str"),
			do(wrongType, "SUNION", "s", "str"),
			do(wrongType, "SDIFF", "nokey", "str"),
			do(wrongType, "SINTERCARD", "2", "s", "str"),
			do(wrongType, "SMOVE", "s", "str", "a"),
			do(num(0), "SMOVE", "nokey", "str", "a"),
			do(wrongType, "SINTERSTORE", "d", "str"),
			do(num(1), "SINTERSTORE", "str", "s"),
			do(simple("set"), "TYPE", "str"),
		}},
		{"spop srandmember arguments", []step{
			do(num(3), "SADD", "s", "1", "2", "3"),
			do(notPosErr, "SPOP", "s", "-1"),
			do(notPosErr, "SPOP", "s", "x"),
			do(notPosErr, "SPOP", "s", "01"),
			do(syntax, "SPOP", "s", "1", "2"),
			do(empty, "SPOP", "s", "0"),
			do(empty, "SPOP", "nokey", "5"),
			do(null, "SPOP", "nokey"),
			do(null, "SRANDMEMBER", "nokey"),
			do(empty, "SRANDMEMBER", "nokey", "3"),
			do(empty, "SRANDMEMBER", "s", "0"),
			do(notInt, "SRANDMEMBER", "s", "x"),
			do("-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n",
				"SRANDMEMBER", "s", "-9223372036854775808"),
			do(syntax, "SRANDMEMBER", "s", "1", "2"),
			do(bulks("1", "2", "3"), "SRANDMEMBER", "s", "100"),
			do(bulks("1", "2", "3"), "SPOP", "s", "3"),
			do(num(0), "EXISTS", "s"),
		}},
		{"smove", []step{
			do(num(2), "SADD", "a", "x", "y"),
			do(num(1), "SMOVE", "a", "b", "x"),
			do(num(0), "SMOVE", "a", "b", "x"),
			do(num(1), "SMOVE", "a", "a", "y"),
			do(num(0), "SMOVE", "a", "a", "x"),
			do(num(1), "SMOVE", "a", "b", "y"),
			do(num(0), "EXISTS", "a"),
			do(bulks("x", "y"), "SMEMBERS", "b"),
			do(arity("smove"), "SMOVE", "a", "b"),
		}},
		{"set algebra", []step{
			do(num(5), "SADD", "a", "1", "2", "3", "4", "5"),
			do(num(3), "SADD", "b", "2", "3", "9"),
			do(bulks("2", "3"), "SINTER", "a", "b"),
			do(empty, "SINTER", "a", "nokey"),
			do(bulks("1", "2", "3", "4", "5", "9"), "SUNION", "a", "b", "nokey"),
			do(bulks("1", "4", "5"), "SDIFF", "a", "b"),
			do(empty, "SDIFF", "nokey", "a"),
			do(empty, "SDIFF", "a", "a"),
			do(num(2), "SINTERSTORE", "d", "a", "b"),
			do(bulks("2", "3"), "SMEMBERS", "d"),
			do(num(6), "SUNIONSTORE", "d", "a", "b"),
			do(num(3), "SDIFFSTORE", "d", "a", "b"),
			do(bulks("1", "4", "5"), "SMEMBERS", "d"),
			do(num(1), "EXPIRE", "d", "100"),
			do(num(0), "SINTERSTORE", "d", "a", "nokey"),
			do(num(0), "EXISTS", "d"),
			do(num(2), "SINTERCARD", "2", "a", "b"),
			do(num(1), "SINTERCARD", "2", "a", "b", "LIMIT", "1"),
			do(num(2), "SINTERCARD", "2", "a", "b", "limit", "0"),
			do(num(0), "SINTERCARD", "2", "a", "nokey"),
			do(numkeysErr, "SINTERCARD", "0", "a"),
			do(numkeysErr, "SINTERCARD", "x", "a"),
			do("-ERR Number of keys can't be greater than number of args\r\n", "SINTERCARD", "3", "a", "b"),
			do(limitErr, "SINTERCARD", "1", "a", "LIMIT", "-1"),
			do(limitErr, "SINTERCARD", "1", "a", "LIMIT", "x"),
			do(syntax, "SINTERCARD", "1", "a", "LIMIT"),
			do(syntax, "SINTERCARD", "1", "a", "FOO", "1"),
			do(arity("sinterstore"), "SINTERSTORE", "d"),
			do(arity("sinter"), "SINTER"),
		}},
		{"sscan errors", []step{
			do(num(1), "SADD", "s", "a"),
			do("-ERR invalid cursor\r\n", "SSCAN", "s", "x"),
			do(syntax, "SSCAN", "s", "0", "COUNT", "0"),
			do(notInt, "SSCAN", "s", "0", "COUNT", "x"),
			do(syntax, "SSCAN", "s", "0", "MATCH"),
			do(array(bulk("0"), empty), "SSCAN", "nokey", "0"),
		}},
	})
}

// TestSetHashtable covers the hashtable encoding, whose order differs
// from Redis's: replies are compared as sorted lists.
func TestSetHashtable(t *testing.T) {
	c, _, _ := start(t)
	var want []string
	args := []string{"SADD", "s"}
	for i := range 1000 {
		m := fmt.Sprintf("m%d", i)
		want = append(want, m)
		args = append(args, m)
	}
	sort.Strings(want)
	mustDo(t, c, num(1000), args...)
	got := sortedBulks(t, c.Do("SMEMBERS", "s"))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("SMEMBERS: %d members", len(got))
	}
	// SSCAN in steps of 10 returns every member
	seen := map[string]bool{}
	cursor := "0"
	for {
		reply := c.Do("SSCAN", "s", cursor, "COUNT", "10")
		var items []string
		cursor, items = parseScanReply(t, reply)
		for _, m := range items {
			seen[m] = true
		}
		if cursor == "0" {
			break
		}
	}
	if len(seen) != 1000 {
		t.Fatalf("SSCAN returned %d distinct members", len(seen))
	}
	// SPOP with a count pops distinct members and leaves the rest
	popped := sortedBulks(t, c.Do("SPOP", "s", "300"))
	mustDo(t, c, num(700), "SCARD", "s")
	for _, m := range popped {
		mustDo(t, c, num(0), "SISMEMBER", "s", m)
	}
	popped = sortedBulks(t, c.Do("SPOP", "s", "650")) // most of it: the rebuild path
	if len(popped) != 650 {
		t.Fatalf("SPOP 650 popped %d", len(popped))
	}
	mustDo(t, c, num(50), "SCARD", "s")
	if got := sortedBulks(t, c.Do("SRANDMEMBER", "s", "20")); len(got) != 20 || hasDup(got) {
		t.Fatalf("SRANDMEMBER 20: %v", got)
	}
	if got := sortedBulks(t, c.Do("SRANDMEMBER", "s", "-200")); len(got) != 200 {
		t.Fatalf("SRANDMEMBER -200: %d", len(got))
	}
}

func hasDup(sorted []string) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

// sortedBulks parses a flat array of bulk strings and sorts it.
func sortedBulks(t *testing.T, reply string) []string {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(reply))
	items, err := readBulks(rd)
	if err != nil {
		t.Fatalf("%q: %v", reply, err)
	}
	sort.Strings(items)
	return items
}

// parseScanReply splits a [cursor, [items]] reply.
func parseScanReply(t *testing.T, reply string) (string, []string) {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(reply))
	head, _ := rd.ReadString('\n')
	cursor, err := readBulk(rd)
	if head != "*2\r\n" || err != nil {
		t.Fatalf("not a scan reply: %q", reply)
	}
	items, err := readBulks(rd)
	if err != nil {
		t.Fatalf("%q: %v", reply, err)
	}
	return cursor, items
}

func readBulks(rd *bufio.Reader) ([]string, error) {
	head, err := rd.ReadString('\n')
	if err != nil || head[0] != '*' {
		return nil, fmt.Errorf("not an array: %q", head)
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil {
		return nil, err
	}
	items := make([]string, n)
	for i := range items {
		if items[i], err = readBulk(rd); err != nil {
			return nil, err
		}
	}
	return items, nil
}

func readBulk(rd *bufio.Reader) (string, error) {
	head, err := rd.ReadString('\n')
	if err != nil || head[0] != '$' {
		return "", fmt.Errorf("not a bulk string: %q", head)
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil || n < 0 {
		return "", fmt.Errorf("bad bulk length %q", head)
	}
	b := make([]byte, n+2)
	_, err = io.ReadFull(rd, b)
	return string(b[:n]), err
}
