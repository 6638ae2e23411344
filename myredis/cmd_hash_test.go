package myredis

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tests for the hash commands through a real connection: each step sends a command
// and compares the raw RESP reply byte for byte. The expected replies were taken
// from redis-server 7.0.15; hash_compat_test.go replays testdata/compat/hashes.txt
// against a live one.

func TestHashCommands(t *testing.T) {
	wrongType := []step{
		{"SET s v", rOK},
		{"HSET s f v", rWrongType},
		{"HMSET s f v", rWrongType},
		{"HSETNX s f v", rWrongType},
		{"HGET s f", rWrongType},
		{"HMGET s f", rWrongType},
		{"HGETALL s", rWrongType},
		{"HKEYS s", rWrongType},
		{"HVALS s", rWrongType},
		{"HDEL s f", rWrongType},
		{"HLEN s", rWrongType},
		{"HEXISTS s f", rWrongType},
		{"HSTRLEN s f", rWrongType},
		{"HINCRBY s f 1", rWrongType},
		{"HINCRBYFLOAT s f 1", rWrongType},
		{"HRANDFIELD s", rWrongType},
		{"HRANDFIELD s 0", rWrongType},
		{"HSCAN s 0", rWrongType},
		{"HSCAN s 0 NOSUCHOPTION", rWrongType}, // the type is checked before the options
		// argument errors come before the type check
		{"HSET s f v g", rArity("hset")},
		{"HINCRBY s f x", rErr(msgNotInt)},
		{"HINCRBYFLOAT s f x", rErr(msgNotFloat)},
		{"HINCRBYFLOAT s f inf", rErr(msgHashIncrNaN)},
		{"HRANDFIELD s x", rErr(msgNotInt)},
		{"HRANDFIELD s 1 foo", rErr(msgSyntax)},
		{"HSCAN s x", rErr(msgInvalidCursor)},
		{"GET s", rBulk("v")},
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"wrong type", wrongType},
		{"arity", []step{
			{"HSET h", rArity("hset")},
			{"HSET h f", rArity("hset")},
			{"HSET h f v g", rArity("hset")},
			{"HMSET h f v g", rArity("hmset")},
			{"HSETNX h f", rArity("hsetnx")},
			{"HGET h", rArity("hget")},
			{"HGET h a b", rArity("hget")},
			{"HMGET h", rArity("hmget")},
			{"HGETALL", rArity("hgetall")},
			{"HKEYS h x", rArity("hkeys")},
			{"HVALS", rArity("hvals")},
			{"HDEL h", rArity("hdel")},
			{"HLEN h x", rArity("hlen")},
			{"HEXISTS h", rArity("hexists")},
			{"HSTRLEN h", rArity("hstrlen")},
			{"HINCRBY h f", rArity("hincrby")},
			{"HINCRBYFLOAT h f 1 2", rArity("hincrbyfloat")},
			{"HRANDFIELD", rArity("hrandfield")},
			{"HSCAN h", rArity("hscan")},
			{"EXISTS h", rInt(0)}, // nothing was created
		}},
		{"hset hget", []step{
			{"HSET h f v", rInt(1)},
			{"HGET h f", rBulk("v")},
			{"TYPE h", "+hash\r\n"},
			{"HSET h f v2 g w f v3", rInt(1)}, // f set twice, g new
			{"HGET h f", rBulk("v3")},
			{"HSET h f v3", rInt(0)},
			{"HSET h2 a 1 a 2", rInt(1)},
			{"HGET h2 a", rBulk("2")},
			{"HGET h nosuch", rNull},
			{"HGET nokey f", rNull},
			{`HSET h e ""`, rInt(1)},
			{"HGET h e", rBulk("")},
			{"HSTRLEN h e", rInt(0)},
			{"HEXISTS h e", rInt(1)},
			{"HMSET h a 1 b 2", rOK},
			{"HMGET h a b nosuch f", rArr(rBulk("1"), rBulk("2"), rNull, rBulk("v3"))},
			{"HMGET nokey a b", rArr(rNull, rNull)},
			{"HLEN h", rInt(5)},
			{"HLEN nokey", rInt(0)},
			{"hset H f v", rInt(1)}, // keys and fields are case-sensitive, names are not
			{"HGET H F", rNull},
		}},
		{"hsetnx", []step{
			{"HSETNX h f v", rInt(1)},
			{"HSETNX h f w", rInt(0)},
			{"HGET h f", rBulk("v")},
			{"HSETNX h g w", rInt(1)},
			{"HGETALL h", rBulks("f", "v", "g", "w")},
		}},
		{"order", []step{
			// insertion order; an update keeps the place, delete and re-add moves to the end
			{"HSET h a 1 b 2 c 3 d 4 e 5", rInt(5)},
			{"HDEL h b d", rInt(2)},
			{"HSET h b 22 a 11 z 26", rInt(2)},
			{"HGETALL h", rBulks("a", "11", "c", "3", "e", "5", "b", "22", "z", "26")},
			{"HKEYS h", rBulks("a", "c", "e", "b", "z")},
			{"HVALS h", rBulks("11", "3", "5", "22", "26")},
			{"HGETALL nokey", rEmpty},
			{"HKEYS nokey", rEmpty},
			{"HVALS nokey", rEmpty},
		}},
		{"hdel and the empty hash", []step{
			{"HSET h a 1 b 2 c 3", rInt(3)},
			{"HDEL h nosuch", rInt(0)},
			{"HDEL h a a nosuch", rInt(1)},
			{"HDEL nokey a", rInt(0)},
			{"HDEL h b c d", rInt(2)},
			{"EXISTS h", rInt(0)},
			{"TYPE h", "+none\r\n"},
			{"HLEN h", rInt(0)},
			{"HGETALL h", rEmpty},
			{"HSET h a 1", rInt(1)},
			{"HGETALL h", rBulks("a", "1")},
		}},
		{"hexists hstrlen", []step{
			{"HSET h f hello n 12345", rInt(2)},
			{"HEXISTS h f", rInt(1)},
			{"HEXISTS h g", rInt(0)},
			{"HEXISTS nokey f", rInt(0)},
			{"HSTRLEN h f", rInt(5)},
			{"HSTRLEN h n", rInt(5)},
			{"HSTRLEN h g", rInt(0)},
			{"HSTRLEN nokey g", rInt(0)},
		}},
		{"hincrby", []step{
			{"HINCRBY h f 5", rInt(5)},
			{"HINCRBY h f -10", rInt(-5)},
			{"HINCRBY h f 9223372036854775807", rInt(9223372036854775802)},
			{"HINCRBY h f x", rErr(msgNotInt)},
			{"HINCRBY h f 1.5", rErr(msgNotInt)},
			{"HINCRBY h f +1", rErr(msgNotInt)},
			{"HINCRBY h f 99999999999999999999", rErr(msgNotInt)},
			{`HINCRBY h f ""`, rErr(msgNotInt)},
			{"HSET h big 9223372036854775807 neg -9223372036854775808", rInt(2)},
			{"HINCRBY h big 1", rErr(msgIncrOverflow)},
			{"HINCRBY h big 0", rInt(9223372036854775807)},
			{"HINCRBY h neg -1", rErr(msgIncrOverflow)},
			{"HINCRBY h neg 9223372036854775807", rInt(-1)},
			{"HSET h s abc z1 01 z2 -0 z3 1.0", rInt(4)},
			{"HINCRBY h s 1", rErr(msgHashNotInt)},
			{"HINCRBY h z1 1", rErr(msgHashNotInt)},
			{"HINCRBY h z2 1", rErr(msgHashNotInt)},
			{"HINCRBY h z3 1", rErr(msgHashNotInt)},
			{`HSET h e ""`, rInt(1)},
			{"HINCRBY h e 1", rErr(msgHashNotInt)},
			{"HGET h z1", rBulk("01")},
			{"HINCRBY new f -3", rInt(-3)},
			{"HGET new f", rBulk("-3")},
		}},
		{"hincrbyfloat", []step{
			{"HINCRBYFLOAT h f 1.5", rBulk("1.5")},
			{"HINCRBYFLOAT h f 0.1", rBulk("1.6")},
			{"HINCRBYFLOAT h f 1e3", rBulk("1001.59999999999999998")}, // long double, as Redis
			{"HINCRBYFLOAT h f -1003.6", rBulk("-2")},
			{"HGET h f", rBulk("-2")},
			{"HINCRBYFLOAT h f inf", rErr(msgHashIncrNaN)},
			{"HINCRBYFLOAT h f -inf", rErr(msgHashIncrNaN)},
			{"HINCRBYFLOAT h f nan", rErr(msgNotFloat)},
			{"HINCRBYFLOAT h f abc", rErr(msgNotFloat)},
			{`HINCRBYFLOAT h f ""`, rErr(msgNotFloat)},
			{"HSET h s abc i inf x 0x10 e 1e2", rInt(4)},
			{"HINCRBYFLOAT h s 1", rErr(msgHashNotFloat)},
			{"HINCRBYFLOAT h i 1", rErr(msgIncrFloatNaN)},
			{"HINCRBYFLOAT h x 1", rBulk("17")},
			{"HINCRBYFLOAT h e 1", rBulk("101")},
			{"HINCRBYFLOAT h z 1003", rBulk("1003")},
			{"HINCRBYFLOAT h z 0.1", rBulk("1003.09999999999999998")},
			{"HINCRBYFLOAT h v -0.0", rBulk("0")},
			{"HINCRBYFLOAT h m 1.7976931348623157e308", rBulk("179769313486231569995921046774104434048386446944329178485314420765176628523124396354701868608387085564428793419425520689308708363451136055357897278026477617073498977686288394835618163294045594434929537447290627480669417384648879122776218333598953852832103282504751611691208117720159985926376802466863339536384")},
			{"HINCRBYFLOAT h m 1.7976931348623157e308", rBulk("359538626972463139991842093548208868096772893888658356970628841530353257046248792709403737216774171128857586838851041378617416726902272110715794556052955234146997955372576789671236326588091188869859074894581254961338834769297758245552436667197907705664206565009503223382416235440319971852753604933726679072768")},
			{"HINCRBYFLOAT h u 1e400", rBulk("10000000000000000000281880683947586514586453433629052038625910693539685534008629862039363994848324160522094053927317616200295822777259255734023828976593340661017797447434546173917862448116674971723778943824391593338047470675026246684401359237513603830343735485505244955964979021825038280091068414947402456898653040951017512658092615827588920183472511643316591362664138176309734806343732497430221946880")},
		}},
		{"hrandfield", []step{
			{"HRANDFIELD nokey", rNull},
			{"HRANDFIELD nokey 3", rEmpty},
			{"HRANDFIELD nokey -3 WITHVALUES", rEmpty},
			{"HRANDFIELD nokey x", rErr(msgNotInt)},
			{"HRANDFIELD nokey 1 foo", rErr(msgSyntax)},
			{"HRANDFIELD nokey 1 WITHVALUES foo", rErr(msgSyntax)},
			{"HSET h a 1 b 2 c 3", rInt(3)},
			{"HRANDFIELD h 0", rEmpty},
			{"HRANDFIELD h 0 WITHVALUES", rEmpty},
			{"HRANDFIELD h 3", rBulks("a", "b", "c")},
			{"HRANDFIELD h 5 withvalues", rBulks("a", "1", "b", "2", "c", "3")},
			{"HRANDFIELD h 1.5", rErr(msgNotInt)},
			{"HRANDFIELD h -9223372036854775808", rErr(msgRandCountRange)},
			{"HRANDFIELD h -9223372036854775807 WITHVALUES", rErr(msgOutOfRange)},
			{"HRANDFIELD h -4611686018427387904 WITHVALUES", rErr(msgOutOfRange)},
			{"HRANDFIELD h 4611686018427387904 WITHVALUES", rErr(msgOutOfRange)},
			// past what MyRedis builds (Redis would try and stall every client)
			{"HRANDFIELD h -16777217", rErr(msgOutOfRange)},
		}},
		{"hscan", []step{
			{"HSCAN nokey 0", rScan("0")},
			{"HSCAN nokey 0 COUNT 0", rScan("0")}, // options are not read for a missing key
			{"HSCAN nokey x", rErr(msgInvalidCursor)},
			{"HSET h a 1 b 2 ab 3", rInt(3)},
			{"HSCAN h 0", rScan("0", "a", "1", "b", "2", "ab", "3")},
			{"HSCAN h 0 MATCH a*", rScan("0", "a", "1", "ab", "3")},
			{"HSCAN h 0 match a* count 1", rScan("0", "a", "1", "ab", "3")}, // small: whole
			{"HSCAN h 0 MATCH *", rScan("0", "a", "1", "b", "2", "ab", "3")},
			{"HSCAN h 5", rScan("0", "a", "1", "b", "2", "ab", "3")},
			{"HSCAN h -1", rScan("0", "a", "1", "b", "2", "ab", "3")},
			{`HSCAN h ""`, rScan("0", "a", "1", "b", "2", "ab", "3")},
			{"HSCAN h 18446744073709551615", rScan("0", "a", "1", "b", "2", "ab", "3")},
			{"HSCAN h 18446744073709551616", rErr(msgInvalidCursor)},
			{"HSCAN h -", rErr(msgInvalidCursor)},
			{"HSCAN h 1x", rErr(msgInvalidCursor)},
			{"HSCAN h 0 COUNT 0", rErr(msgSyntax)},
			{"HSCAN h 0 COUNT -1", rErr(msgSyntax)},
			{"HSCAN h 0 COUNT x", rErr(msgNotInt)},
			{"HSCAN h 0 MATCH", rErr(msgSyntax)},
			{"HSCAN h 0 TYPE string", rErr(msgSyntax)},
			{"HSCAN h 0 NOVALUES", rErr(msgSyntax)},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, addr := startHashServer(t)
			playHash(t, dialRaw(t, addr), tc.steps)
		})
	}
}

// TestHashExpiry: a hash keeps its TTL through writes, expires like any key, and a
// write after expiry starts a new hash.
func TestHashExpiry(t *testing.T) {
	_, clk, addr := startHashServer(t)
	c := dialRaw(t, addr)
	playHash(t, c, []step{
		{"HSET h a 1 b 2", rInt(2)},
		{"EXPIRE h 10", rInt(1)},
		{"HSET h c 3", rInt(1)},
		{"HINCRBY h a 1", rInt(2)},
		{"HINCRBYFLOAT h a 1", rBulk("3")},
		{"HDEL h b", rInt(1)},
		{"TTL h", rInt(10)},
	})
	clk.advance(10 * time.Second)
	playHash(t, c, []step{
		{"HGET h a", rNull},
		{"EXISTS h", rInt(0)},
		{"HSETNX h a 9", rInt(1)},
		{"HGETALL h", rBulks("a", "9")},
		{"TTL h", rInt(-1)},
	})
}

// TestHashWatch: a change to a watched hash fails the watcher's EXEC; a command that
// changes nothing (HSETNX on a present field, HDEL of an absent one) does not, as in
// Redis.
func TestHashWatch(t *testing.T) {
	_, _, addr := startHashServer(t)
	c1, c2 := dialRaw(t, addr), dialRaw(t, addr)
	playHash(t, c2, []step{{"HSET h f 1", rInt(1)}})
	writes := []struct {
		cmd   string
		fails bool
	}{
		{"HSET h f 1", true}, // even with the same value, as Redis's signalModifiedKey
		{"HSET h g 2", true},
		{"HMSET h g 3", true},
		{"HSETNX h f 9", false},
		{"HSETNX h n 9", true},
		{"HDEL h nosuch", false},
		{"HDEL h n", true},
		{"HINCRBY h f 1", true},
		{"HINCRBYFLOAT h f 1", true},
		{"HINCRBY h s x", false}, // refused
		{"HGET h f", false},
		{"HDEL h f g", true}, // the last fields: the key goes
		{"HSET h f 1", true}, // and comes back
	}
	for _, w := range writes {
		playHash(t, c1, []step{{"WATCH h", rOK}, {"MULTI", rOK}, {"HLEN h", "+QUEUED\r\n"}})
		c2.do(hashArgs(w.cmd)...)
		got := c1.do("EXEC")
		if failed := got == "*-1\r\n"; failed != w.fails {
			t.Errorf("%s by another client: EXEC = %q, want failed=%v", w.cmd, got, w.fails)
		}
	}
}

// TestHashTransaction: the hash commands queue and run inside MULTI; HSET's odd
// argument count passes the queueing arity check (-4) and fails at EXEC, as in Redis.
func TestHashTransaction(t *testing.T) {
	_, _, addr := startHashServer(t)
	playHash(t, dialRaw(t, addr), []step{
		{"MULTI", rOK},
		{"HSET h a 1 b", "+QUEUED\r\n"},
		{"HSET h a 1", "+QUEUED\r\n"},
		{"HINCRBY h a 2", "+QUEUED\r\n"},
		{"HGETALL h", "+QUEUED\r\n"},
		{"EXEC", rArr(rArity("hset"), rInt(1), rInt(3), rBulks("a", "3"))},
	})
}

// TestHashPropagation checks what reaches the AOF: writes that change something,
// HINCRBYFLOAT as an HSET of its result, nothing for no-ops.
func TestHashPropagation(t *testing.T) {
	s, _, addr := startHashServer(t)
	var got []string
	s.submit(func() {
		s.hooks = append(s.hooks, func(db *DB, args [][]byte) {
			parts := make([]string, len(args))
			for i, a := range args {
				parts[i] = string(a)
			}
			got = append(got, strings.Join(parts, " "))
		})
	})
	c := dialRaw(t, addr)
	for _, cmd := range []string{
		"HSET h a 1 b 2",
		"HSETNX h a 3", // no-op
		"HSETNX h c 3",
		"HDEL h nosuch", // no-op
		"HDEL h c",
		"HINCRBY h a 5",
		"HINCRBYFLOAT h f 0.1",
		"HINCRBYFLOAT h f 1003",
		"HINCRBY h b x", // refused
		"HGET h a",      // read
		"HMSET h x 1",
		"HDEL h a b f x",
	} {
		c.do(hashArgs(cmd)...)
	}
	var log []string
	s.submit(func() { log = append(log, got...) })
	want := []string{
		"HSET h a 1 b 2",
		"HSETNX h c 3",
		"HDEL h c",
		"HINCRBY h a 5",
		"HSET h f 0.1",
		"HSET h f 1003.09999999999999998",
		"HMSET h x 1",
		"HDEL h a b f x",
	}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("propagated:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
}

// TestHashRandfield checks HRANDFIELD's promises over many draws: a positive count
// gives distinct fields in hash order, a negative one exactly |count| fields, each
// with its own value, and every field turns up.
func TestHashRandfield(t *testing.T) {
	_, _, addr := startHashServer(t)
	c := dialRaw(t, addr)
	for _, size := range []int{5, 700} { // within and past Redis's listpack limit
		key := "h" + strconv.Itoa(size)
		args := []string{"HSET", key}
		pos := map[string]int{}
		for i := range size {
			f := fmt.Sprintf("f%d", i)
			args = append(args, f, "v"+f)
			pos[f] = i
		}
		c.do(args...)
		seen := map[string]bool{}
		for _, count := range []int{1, 2, 3, size - 1, size, size + 3, -1, -4, -2 * size} {
			for range 30 {
				fields, values := parseRandfield(t, c.do("HRANDFIELD", key, strconv.Itoa(count), "WITHVALUES"))
				want := min(count, size)
				if count < 0 {
					want = -count
				}
				if len(fields) != want {
					t.Fatalf("HRANDFIELD %s %d: %d fields, want %d", key, count, len(fields), want)
				}
				for i, f := range fields {
					if _, ok := pos[f]; !ok || values[i] != "v"+f {
						t.Fatalf("HRANDFIELD %s %d: pair %q %q", key, count, f, values[i])
					}
					seen[f] = true
					if count > 1 && i > 0 && pos[fields[i-1]] >= pos[f] {
						t.Fatalf("HRANDFIELD %s %d: %q before %q: not distinct in hash order", key, count, fields[i-1], f)
					}
				}
			}
		}
		if len(seen) != size {
			t.Errorf("%s: %d of %d fields ever drawn", key, len(seen), size)
		}
		one := c.do("HRANDFIELD", key)
		if _, ok := pos[strings.Split(one, "\r\n")[1]]; !ok {
			t.Errorf("HRANDFIELD %s = %q", key, one)
		}
	}
}

// parseRandfield splits a flat field/value array reply.
func parseRandfield(t *testing.T, reply string) (fields, values []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(reply, "\r\n"), "\r\n")
	n, err := strconv.Atoi(strings.TrimPrefix(lines[0], "*"))
	if err != nil || n%2 != 0 || len(lines) != 1+2*n {
		t.Fatalf("not a field/value array: %q", reply)
	}
	for i := 0; i < n; i += 2 {
		fields = append(fields, lines[2+2*i])
		values = append(values, lines[4+2*i])
	}
	return fields, values
}

// TestHashScanBig walks a hash past the listpack limit with HSCAN while another
// client deletes most of it (so the holes are squeezed out and fields move) and adds
// new fields between calls: every field present from start to end comes back exactly
// once, the cursor ends at 0, and COUNT bounds each page.
func TestHashScanBig(t *testing.T) {
	_, _, addr := startHashServer(t)
	c, other := dialRaw(t, addr), dialRaw(t, addr)
	const n = 3000
	args := []string{"HSET", "h"}
	stays := map[string]int{} // every third field stays; the others go during the walk
	var goes [][]string
	for i := range n {
		f := "f" + strconv.Itoa(i)
		args = append(args, f, "v")
		if i%3 == 0 {
			stays[f] = 0
			continue
		}
		if len(goes) == 0 || len(goes[len(goes)-1]) == 400 {
			goes = append(goes, []string{"HDEL", "h"})
		}
		goes[len(goes)-1] = append(goes[len(goes)-1], f)
	}
	c.do(args...)
	cursor, pages := "0", 0
	for {
		reply := c.do("HSCAN", "h", cursor, "COUNT", "37")
		lines := strings.Split(reply, "\r\n")
		cursor = lines[2]
		nItems, _ := strconv.Atoi(strings.TrimPrefix(lines[3], "*"))
		if nItems > 2*37 {
			t.Fatalf("page of %d items with COUNT 37", nItems/2)
		}
		for i := 0; i < nItems; i += 2 {
			if _, ok := stays[lines[5+2*i]]; ok {
				stays[lines[5+2*i]]++
			}
		}
		pages++
		if pages%4 == 0 && len(goes) > 0 {
			other.do(goes[0]...)
			goes = goes[1:]
		}
		other.do("HSET", "h", "new"+strconv.Itoa(pages), "v")
		if cursor == "0" {
			break
		}
		if pages > n {
			t.Fatal("HSCAN does not end")
		}
	}
	if len(goes) > 0 {
		t.Fatalf("the walk ended after %d pages, before the deletes", pages)
	}
	for f, times := range stays {
		if times != 1 {
			t.Fatalf("%s returned %d times", f, times)
		}
	}
	// MATCH filters within the page it walks
	c.do("DEL", "h")
	c.do(args...)
	if got, want := c.do("HSCAN", "h", "0", "MATCH", "f1?", "COUNT", "20"), rScan("21", "f10", "v", "f11", "v", "f12", "v", "f13", "v", "f14", "v", "f15", "v", "f16", "v", "f17", "v", "f18", "v", "f19", "v"); got != want {
		t.Errorf("HSCAN MATCH:\n got %q\nwant %q", got, want)
	}
}

// TestHashBigValues: a field or value past 64 bytes turns a small hash into a paged
// one for HSCAN, as Redis converts a listpack to a hash table.
func TestHashBigValues(t *testing.T) {
	_, _, addr := startHashServer(t)
	c := dialRaw(t, addr)
	long := strings.Repeat("x", 65)
	c.do("HSET", "h", "a", strings.Repeat("x", 64), "b", "1", "c", "2")
	if got, want := c.do("HSCAN", "h", "0", "COUNT", "1"), rScan("0", "a", strings.Repeat("x", 64), "b", "1", "c", "2"); got != want {
		t.Errorf("small hash: %q", got)
	}
	c.do("HSET", "h", "b", long)
	c.do("HDEL", "h", "b") // the conversion sticks, as in Redis
	if got, want := c.do("HSCAN", "h", "0", "COUNT", "1"), rScan("3", "a", strings.Repeat("x", 64)); got != want {
		t.Errorf("converted hash: %q want %q", got, want)
	}
}

// TestHashGoRedis runs the queue engine's hash traffic through go-redis v9 with its
// default options: settings written with HSETNX per field in a pipeline and read
// with HGETALL, overwritten with one HSET, a per-second rate bucket bumped with
// HINCRBY next to an INCRBY and trimmed with HDEL; then the iterator over HSCAN.
func TestHashGoRedis(t *testing.T) {
	_, _, addr := startHashServer(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })

	settings := "wr:{q}:settings"
	for range 2 { // a second instance finds the first one's values
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.HSetNX(ctx, settings, "slot", 100)
			p.HSetNX(ctx, settings, "session_ms", int64(300000))
			p.HSetNX(ctx, settings, "ticket_ttl_ms", int64(600000))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.HSet(ctx, settings, "slot", 5).Err(); err != nil {
		t.Fatal(err)
	}
	m, err := rdb.HGetAll(ctx, settings).Result()
	want := map[string]string{"slot": "5", "session_ms": "300000", "ticket_ttl_ms": "600000"}
	if err != nil || !maps.Equal(m, want) {
		t.Fatalf("HGETALL = %v, %v; want %v", m, err, want)
	}
	if n, err := rdb.HSet(ctx, settings, "slot", 7, "session_ms", 1000, "new", "x").Result(); n != 1 || err != nil {
		t.Fatalf("HSET = %d, %v", n, err)
	}

	rate := "wr:{q}:rate"
	for sec, n := range map[string]int64{"1000": 3, "1001": 4, "1002": 5} {
		var total *redis.IntCmd
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			total = p.IncrBy(ctx, "wr:{q}:admitted", n)
			p.HIncrBy(ctx, rate, sec, n)
			p.HIncrBy(ctx, rate, sec, n)
			return nil
		})
		if err != nil || total.Val() == 0 {
			t.Fatal(total.Val(), err)
		}
	}
	if n, err := rdb.HDel(ctx, rate, "1000", "1001", "nosuch").Result(); n != 2 || err != nil {
		t.Fatalf("HDEL = %d, %v", n, err)
	}
	if v, err := rdb.HGet(ctx, rate, "1002").Int64(); v != 10 || err != nil {
		t.Fatalf("HGET = %d, %v", v, err)
	}
	if _, err := rdb.HGet(ctx, rate, "1000").Result(); err != redis.Nil {
		t.Fatalf("HGET of a deleted field: %v, want redis.Nil", err)
	}
	if f, err := rdb.HIncrByFloat(ctx, rate, "f", 0.5).Result(); f != 0.5 || err != nil {
		t.Fatalf("HINCRBYFLOAT = %v, %v", f, err)
	}
	if vals, err := rdb.HMGet(ctx, settings, "slot", "nosuch").Result(); err != nil || vals[0] != "7" || vals[1] != nil {
		t.Fatalf("HMGET = %v, %v", vals, err)
	}

	for i := range 1000 {
		rdb.HSet(ctx, "big", "f"+strconv.Itoa(i), i)
	}
	seen := map[string]bool{}
	it := rdb.HScan(ctx, "big", 0, "f1*", 50).Iterator()
	for it.Next(ctx) {
		f := it.Val()
		if !it.Next(ctx) {
			t.Fatal("HSCAN: a field without its value")
		}
		if "f"+it.Val() != f {
			t.Fatalf("HSCAN: %s = %s", f, it.Val())
		}
		seen[f] = true
	}
	if err := it.Err(); err != nil || len(seen) != 111 { // f1, f10-f19, f100-f199
		t.Fatalf("HSCAN MATCH f1*: %d fields, %v", len(seen), err)
	}
	if fs, err := rdb.HRandField(ctx, "big", 5).Result(); len(fs) != 5 || err != nil {
		t.Fatalf("HRANDFIELD = %v, %v", fs, err)
	}
}
