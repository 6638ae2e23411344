package myredis

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Tests for the sorted-set commands through a real connection: each step sends a
// command and compares the raw RESP reply byte for byte. The expected replies
// were checked against redis-server 7.0.15 (zset_compat_test.go replays the same
// ground against a live one).

// startTestServer serves a MyRedis on a free loopback port until the test ends.
func startTestServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{Bind: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port})
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

// rconn is a raw RESP connection.
type rconn struct {
	t  testing.TB
	nc net.Conn
	rd *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rconn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rconn{t: t, nc: nc, rd: bufio.NewReader(nc)}
}

func encodeCmd(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}

// send writes a command without waiting for its reply.
func (c *rconn) send(args ...string) {
	c.t.Helper()
	if _, err := c.nc.Write(encodeCmd(args...)); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next raw reply.
func (c *rconn) read() string {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	if err := readRaw(c.rd, &b); err != nil {
		c.t.Fatalf("reading a reply: %v (so far %q)", err, b.String())
	}
	return b.String()
}

func (c *rconn) do(args ...string) string {
	c.t.Helper()
	c.send(args...)
	return c.read()
}

// readRaw copies one RESP2 reply from rd to w.
func readRaw(rd *bufio.Reader, w *strings.Builder) error {
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	w.WriteString(line)
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	switch line[0] {
	case '$':
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return err
		}
		w.Write(buf)
	case '*':
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		for range max(n, 0) {
			if err := readRaw(rd, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// Reply builders.
func rInt(n int) string     { return ":" + strconv.Itoa(n) + "\r\n" }
func rBulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
func rErr(msg string) string {
	return "-" + msg + "\r\n"
}
func rArr(items ...string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}

// rBulks is an array of bulk strings.
func rBulks(items ...string) string {
	for i, s := range items {
		items[i] = rBulk(s)
	}
	return rArr(items...)
}

const (
	rNull      = "$-1\r\n"
	rNullArr   = "*-1\r\n"
	rEmpty     = "*0\r\n"
	rOK        = "+OK\r\n"
	rWrongType = "-" + msgWrongType + "\r\n"
)

// step is one command (split on blanks) and its expected raw reply.
type step struct {
	cmd  string
	want string
}

// play runs steps in order on a fresh server.
func play(t *testing.T, steps []step) {
	t.Helper()
	c := dialRaw(t, startTestServer(t))
	playOn(t, c, steps)
}

func playOn(t *testing.T, c *rconn, steps []step) {
	t.Helper()
	for _, s := range steps {
		if got := c.do(strings.Fields(s.cmd)...); got != s.want {
			t.Errorf("%s\n got: %q\nwant: %q", s.cmd, got, s.want)
		}
	}
}

func TestZaddCommand(t *testing.T) {
	play(t, []step{
		{"ZADD z 1 a 2 b", rInt(2)},
		{"ZADD z 3 a 2 b 4 c", rInt(1)},
		{"ZRANGE z 0 -1 WITHSCORES", rBulks("b", "2", "a", "3", "c", "4")},
		{"ZADD z CH 1 a 2 b 5 d", rInt(2)},
		{"ZADD z NX 9 a 6 e", rInt(1)},
		{"ZSCORE z a", rBulk("1")},
		{"ZADD z XX 7 a 7 nope", rInt(0)},
		{"ZSCORE z a", rBulk("7")},
		{"ZSCORE z nope", rNull},
		{"ZADD z XX CH 8 a", rInt(1)},
		// GT/LT only update in their direction, but never stop new members
		{"ZADD z GT CH 1 a 9 b 1 f", rInt(2)},
		{"ZMSCORE z a b f", rBulks("8", "9", "1")},
		{"ZADD z LT CH 10 a 3 b 1 g", rInt(2)},
		{"ZMSCORE z a b g", rBulks("8", "3", "1")},
		{"ZADD z XX GT 100 a", rInt(0)},
		{"ZSCORE z a", rBulk("100")},
		// INCR
		{"ZADD z INCR 1.5 a", rBulk("101.5")},
		{"ZADD z INCR 0.1 new", rBulk("0.10000000000000001")},
		{"ZADD z NX INCR 1 a", rNull},
		{"ZADD z XX INCR 1 missing", rNull},
		{"ZADD z GT INCR -1 a", rNull},
		{"ZADD z INCR inf a", rBulk("inf")},
		{"ZADD z INCR -inf a", rErr(msgZaddNaN)},
		{"ZSCORE z a", rBulk("inf")},
		// scores: strtod's syntax, no NaN, no overflow
		{"ZADD s +inf p -INF m 0x10 h 1e-310 d", rInt(4)},
		{"ZRANGE s 0 -1 WITHSCORES", rBulks("m", "-inf", "d", "9.9999999999999694e-311", "h", "16", "p", "inf")},
		{"ZADD s 1e400 x", rErr(msgNotFloat)},
		{"ZADD s nan x", rErr(msgNotFloat)},
		{"ZADD s 1 a 2 b x c", rErr(msgNotFloat)},
		{"ZCARD s", rInt(4)}, // nothing written: every score is parsed first
		// option errors
		{"ZADD z NX XX 1 a", rErr(msgZaddNXAndXX)},
		{"ZADD z GT NX 1 a", rErr(msgZaddGTLTNX)},
		{"ZADD z GT LT 1 a", rErr(msgZaddGTLTNX)},
		{"ZADD z INCR 1 a 2 b", rErr(msgZaddIncrPair)},
		{"ZADD z 1 a 2", rErr(msgSyntax)},
		{"ZADD z NX CH", rErr(msgSyntax)},
		{"ZADD z 1", rErr(errArity("zadd"))},
		// XX on a missing key creates nothing
		{"ZADD none XX 1 a", rInt(0)},
		{"EXISTS none", rInt(0)},
		{"SET str v", rOK},
		{"ZADD str 1 a", rWrongType},
		{"ZADD str x a", rErr(msgNotFloat)}, // scores are checked before the type
	})
}

func TestZincrbyCommand(t *testing.T) {
	play(t, []step{
		{"ZINCRBY z 1 a", rBulk("1")},
		{"ZINCRBY z 1.1 a", rBulk("2.1000000000000001")},
		{"ZINCRBY z -2.1000000000000001 a", rBulk("0")},
		{"ZINCRBY z inf a", rBulk("inf")},
		{"ZINCRBY z -inf a", rErr(msgZaddNaN)},
		{"ZINCRBY z x a", rErr(msgNotFloat)},
		{"ZINCRBY z nx a", rErr(msgSyntax)}, // NX is read as ZADD's option
		{"ZINCRBY z 1", rErr(errArity("zincrby"))},
		{"SET s v", rOK},
		{"ZINCRBY s 1 a", rWrongType},
	})
}

func TestZremZcardZscore(t *testing.T) {
	play(t, []step{
		{"ZADD z 1 a 2 b 3 c", rInt(3)},
		{"ZCARD z", rInt(3)},
		{"ZCARD nokey", rInt(0)},
		{"ZREM z a nope a", rInt(1)},
		{"ZREM nokey a", rInt(0)},
		{"ZSCORE z b", rBulk("2")},
		{"ZSCORE z a", rNull},
		{"ZSCORE nokey a", rNull},
		{"ZMSCORE z c a b", rArr(rBulk("3"), rNull, rBulk("2"))},
		{"ZMSCORE nokey a b", rArr(rNull, rNull)},
		{"ZREM z b c", rInt(2)},
		{"EXISTS z", rInt(0)}, // the key goes with its last member
		{"SET s v", rOK},
		{"ZREM s a", rWrongType},
		{"ZCARD s", rWrongType},
		{"ZSCORE s a", rWrongType},
		{"ZMSCORE s a", rWrongType},
		{"ZMSCORE z", rErr(errArity("zmscore"))},
	})
}

func TestZrankCommand(t *testing.T) {
	play(t, []step{
		{"ZADD z 1 a 2 b 2 c 3 d", rInt(4)},
		{"ZRANK z a", rInt(0)},
		{"ZRANK z c", rInt(2)},
		{"ZREVRANK z a", rInt(3)},
		{"ZREVRANK z b", rInt(2)},
		{"ZRANK z nope", rNull},
		{"ZRANK nokey a", rNull},
		{"ZRANK z c WITHSCORE", rErr(errArity("zrank"))}, // Redis 7.2's option; 7.0 has none
		{"ZREVRANK z d withscore", rErr(errArity("zrevrank"))},
		{"ZRANK z", rErr(errArity("zrank"))},
		{"SET s v", rOK},
		{"ZRANK s a", rWrongType},
	})
}

func TestZrangeCommand(t *testing.T) {
	play(t, []step{
		{"ZADD z 1 a 2 b 3 c 4 d 5 e", rInt(5)},
		// by rank
		{"ZRANGE z 0 -1", rBulks("a", "b", "c", "d", "e")},
		{"ZRANGE z 1 2 WITHSCORES", rBulks("b", "2", "c", "3")},
		{"ZRANGE z -2 100", rBulks("d", "e")},
		{"ZRANGE z 3 1", rEmpty},
		{"ZRANGE z 5 10", rEmpty},
		{"ZRANGE z 0 1 REV", rBulks("e", "d")},
		{"ZREVRANGE z 0 1 WITHSCORES", rBulks("e", "5", "d", "4")},
		{"ZRANGE nokey 0 -1", rEmpty},
		// by score
		{"ZRANGE z (1 3 BYSCORE", rBulks("b", "c")},
		{"ZRANGE z -inf +inf BYSCORE LIMIT 1 2", rBulks("b", "c")},
		{"ZRANGE z +inf -inf BYSCORE REV LIMIT 0 2 WITHSCORES", rBulks("e", "5", "d", "4")},
		{"ZRANGE z 4 2 BYSCORE", rEmpty}, // min > max is empty, not an error
		{"ZRANGEBYSCORE z 2 (4 WITHSCORES", rBulks("b", "2", "c", "3")},
		{"ZRANGEBYSCORE z -inf inf LIMIT 3 -1", rBulks("d", "e")},
		{"ZRANGEBYSCORE z -inf inf LIMIT -1 2", rEmpty},
		{"ZRANGEBYSCORE z -inf inf LIMIT 5 2", rEmpty},
		{"ZRANGEBYSCORE z -inf inf LIMIT 0 0", rEmpty},
		{"ZREVRANGEBYSCORE z (5 2 LIMIT 1 10", rBulks("c", "b")},
		// errors, in Redis's order
		{"ZRANGE z 0 -1 LIMIT 0 1", rErr(msgZrangeLimit)},
		{"ZRANGE z - + BYLEX WITHSCORES", rErr(msgZrangeLexScores)},
		{"ZRANGE z 0 1 BYSCORE BYLEX", rErr(msgSyntax)},
		{"ZRANGE z 0 1 REV REV", rErr(msgSyntax)},
		{"ZRANGE z 0 1 LIMIT 1", rErr(msgSyntax)},
		{"ZRANGEBYSCORE z 0 1 REV", rErr(msgSyntax)},
		{"ZREVRANGE z 0 1 REV", rErr(msgSyntax)},
		{"ZRANGE z a b", rErr(msgNotInt)},
		{"ZRANGE z 0 1 BYSCORE LIMIT x 1", rErr(msgNotInt)},
		{"ZRANGEBYSCORE z x 1", rErr(msgMinMaxNotFloat)},
		{"ZRANGEBYSCORE z [1 2", rErr(msgMinMaxNotFloat)},
		{"ZRANGEBYLEX z a b", rErr(msgLexRange)},
		{"ZRANGE z", rErr(errArity("zrange"))},
		{"SET s v", rOK},
		{"ZRANGE s 0 -1", rWrongType},
		{"ZRANGE s x y", rErr(msgNotInt)}, // arguments first, then the type
	})
}

func TestZrangeByLex(t *testing.T) {
	play(t, []step{
		{"ZADD l 0 a 0 b 0 c 0 d 0 e", rInt(5)},
		{"ZRANGEBYLEX l - +", rBulks("a", "b", "c", "d", "e")},
		{"ZRANGEBYLEX l [b (d", rBulks("b", "c")},
		{"ZRANGEBYLEX l (b [d LIMIT 1 1", rBulks("d")},
		{"ZREVRANGEBYLEX l + - LIMIT 0 2", rBulks("e", "d")},
		{"ZRANGE l [e [a BYLEX REV", rBulks("e", "d", "c", "b", "a")},
		{"ZRANGEBYLEX l + -", rEmpty},
		{"ZRANGEBYLEX l [c (c", rEmpty},
		{"ZLEXCOUNT l - +", rInt(5)},
		{"ZLEXCOUNT l (a [c", rInt(2)},
		{"ZLEXCOUNT nokey - +", rInt(0)},
		{"ZLEXCOUNT l a +", rErr(msgLexRange)},
		{"ZRANGEBYLEX l - + WITHSCORES", rErr(msgZrangeLexScores)},
	})
}

func TestZcountCommand(t *testing.T) {
	play(t, []step{
		{"ZADD z -inf m 1 a 2 b 3 c +inf p", rInt(5)},
		{"ZCOUNT z -inf +inf", rInt(5)},
		{"ZCOUNT z (-inf (+inf", rInt(3)},
		{"ZCOUNT z (1 3", rInt(2)},
		{"ZCOUNT z 3 1", rInt(0)},
		{"ZCOUNT z 1e400 inf", rInt(1)}, // a range bound may overflow to inf
		{"ZCOUNT nokey 0 1", rInt(0)},
		{"ZCOUNT z x 1", rErr(msgMinMaxNotFloat)},
		{"ZCOUNT z 1 nan", rErr(msgMinMaxNotFloat)},
	})
}

func TestZrangestoreCommand(t *testing.T) {
	play(t, []step{
		{"ZADD z 1 a 2 b 3 c", rInt(3)},
		{"ZRANGESTORE dst z 0 1", rInt(2)},
		{"ZRANGE dst 0 -1 WITHSCORES", rBulks("a", "1", "b", "2")},
		{"ZRANGESTORE dst z +inf (1 BYSCORE REV LIMIT 0 1", rInt(1)},
		{"ZRANGE dst 0 -1 WITHSCORES", rBulks("c", "3")},
		{"SET s v", rOK},
		{"ZRANGESTORE s z 0 -1", rInt(3)}, // the destination is replaced, whatever it held
		{"TYPE s", "+zset\r\n"},
		{"ZRANGESTORE s z 10 20", rInt(0)}, // an empty result deletes the destination
		{"EXISTS s", rInt(0)},
		{"ZRANGESTORE dst nokey 0 -1", rInt(0)},
		{"EXISTS dst", rInt(0)},
		{"ZRANGESTORE dst z 0 -1 WITHSCORES", rErr(msgSyntax)},
		{"ZRANGESTORE dst z 0", rErr(errArity("zrangestore"))},
	})
}

func TestZremrangeCommands(t *testing.T) {
	play(t, []step{
		{"ZADD z 1 a 2 b 3 c 4 d 5 e", rInt(5)},
		{"ZREMRANGEBYRANK z 1 2", rInt(2)},
		{"ZRANGE z 0 -1", rBulks("a", "d", "e")},
		{"ZREMRANGEBYRANK z 5 10", rInt(0)},
		{"ZREMRANGEBYSCORE z (1 4", rInt(1)},
		{"ZREMRANGEBYSCORE z 10 1", rInt(0)},
		{"ZREMRANGEBYRANK z -1 -1", rInt(1)},
		{"ZREMRANGEBYSCORE z -inf +inf", rInt(1)},
		{"EXISTS z", rInt(0)},
		{"ZADD l 0 a 0 b 0 c", rInt(3)},
		{"ZREMRANGEBYLEX l (a +", rInt(2)},
		{"ZRANGE l 0 -1", rBulks("a")},
		{"ZREMRANGEBYLEX l - +", rInt(1)},
		{"EXISTS l", rInt(0)},
		{"ZREMRANGEBYSCORE nokey 0 1", rInt(0)},
		{"ZREMRANGEBYRANK z x 1", rErr(msgNotInt)},
		{"ZREMRANGEBYSCORE z x 1", rErr(msgMinMaxNotFloat)},
		{"ZREMRANGEBYLEX z x 1", rErr(msgLexRange)},
		{"SET s v", rOK},
		{"ZREMRANGEBYSCORE s 0 1", rWrongType},
		{"ZREMRANGEBYSCORE s x 1", rErr(msgMinMaxNotFloat)},
	})
}

func TestZpopCommands(t *testing.T) {
	play(t, []step{
		{"ZADD z 1 a 2 b 3 c 4 d", rInt(4)},
		{"ZPOPMIN z", rBulks("a", "1")},
		{"ZPOPMAX z", rBulks("d", "4")},
		{"ZPOPMIN z 0", rEmpty},
		{"ZPOPMAX z 10", rBulks("c", "3", "b", "2")},
		{"EXISTS z", rInt(0)},
		{"ZPOPMIN z", rEmpty},
		{"ZPOPMIN z -1", rErr(msgNotPositive)},
		{"ZPOPMIN z x", rErr(msgNotPositive)},
		{"ZPOPMIN z 1 2", rErr(msgSyntax)},
		{"SET s v", rOK},
		{"ZPOPMIN s", rWrongType},
		{"ZPOPMIN s x", rErr(msgNotPositive)},
	})
}

func TestZrandmemberCommand(t *testing.T) {
	c := dialRaw(t, startTestServer(t))
	playOn(t, c, []step{
		{"ZADD z 1 a 2 b 3 c", rInt(3)},
		{"ZRANDMEMBER z 5 WITHSCORES", rBulks("c", "3", "b", "2", "a", "1")}, // all, highest first
		{"ZRANDMEMBER z 3", rBulks("c", "b", "a")},
		{"ZRANDMEMBER z 0", rEmpty},
		{"ZRANDMEMBER nokey", rNull},
		{"ZRANDMEMBER nokey 3", rEmpty},
		{"ZRANDMEMBER z x", rErr(msgNotInt)},
		{"ZRANDMEMBER z 1 WITHSCORES x", rErr(msgSyntax)},
		{"ZRANDMEMBER z 1 x", rErr(msgSyntax)},
		{"ZRANDMEMBER z -9223372036854775808", rErr(msgRandCountRange)},
		{"ZRANDMEMBER z 9223372036854775807 WITHSCORES", rErr(msgOutOfRange)},
		// MyRedis only: a reply this long would hold the executor (Redis sends it)
		{"ZRANDMEMBER z -100000000", rErr(msgOutOfRange)},
	})
	members := map[string]bool{rBulk("a"): true, rBulk("b"): true, rBulk("c"): true}
	if got := c.do("ZRANDMEMBER", "z"); !members[got] {
		t.Errorf("ZRANDMEMBER z = %q", got)
	}
	// a negative count repeats members; a positive one never does
	for _, tc := range []struct {
		count    string
		n        int
		distinct bool
	}{{"-7", 7, false}, {"2", 2, true}, {"1", 1, true}} {
		got := c.do("ZRANDMEMBER", "z", tc.count)
		rd := bufio.NewReader(strings.NewReader(got))
		head, _ := rd.ReadString('\n')
		if head != "*"+strconv.Itoa(tc.n)+"\r\n" {
			t.Fatalf("ZRANDMEMBER z %s = %q", tc.count, got)
		}
		seen := map[string]bool{}
		for range tc.n {
			var b strings.Builder
			readRaw(rd, &b)
			if !members[b.String()] || (tc.distinct && seen[b.String()]) {
				t.Fatalf("ZRANDMEMBER z %s = %q", tc.count, got)
			}
			seen[b.String()] = true
		}
	}
}

func TestZscanCommand(t *testing.T) {
	c := dialRaw(t, startTestServer(t))
	playOn(t, c, []step{
		{"ZADD z 1 a 2 b 3 ab", rInt(3)},
		// a small set comes whole, as Redis's listpack does
		{"ZSCAN z 0 COUNT 1", rArr(rBulk("0"), rBulks("a", "1", "b", "2", "ab", "3"))},
		{"ZSCAN z 0 MATCH a*", rArr(rBulk("0"), rBulks("a", "1", "ab", "3"))},
		{"ZSCAN nokey 0", rArr(rBulk("0"), rEmpty)},
		{"ZSCAN z x", rErr(msgInvalidCursor)},
		{"ZSCAN z -1", rArr(rBulk("0"), rBulks("a", "1", "b", "2", "ab", "3"))},
		{"ZSCAN z 0 COUNT 0", rErr(msgSyntax)},
		{"ZSCAN z 0 COUNT x", rErr(msgNotInt)},
		{"ZSCAN z 0 MATCH", rErr(msgSyntax)},
		{"SET s v", rOK},
		{"ZSCAN s 0", rWrongType},
	})
	// a large set is walked COUNT members at a time, every member once
	args := []string{"ZADD", "big"}
	for i := range 300 {
		args = append(args, strconv.Itoa(i), fmt.Sprintf("m%03d", i))
	}
	c.do(args...)
	seen := map[string]int{}
	cursor := "0"
	for calls := 0; ; calls++ {
		if calls > 100 {
			t.Fatal("ZSCAN does not finish")
		}
		rd := bufio.NewReader(strings.NewReader(c.do("ZSCAN", "big", cursor, "COUNT", "25")))
		rd.ReadString('\n')
		rd.ReadString('\n')
		cursor, _ = rd.ReadString('\n')
		cursor = strings.TrimSpace(cursor)
		head, _ := rd.ReadString('\n')
		n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
		for i := 0; i < n; i += 2 {
			m, _ := rd.ReadString('\n')
			m, _ = rd.ReadString('\n')
			seen[strings.TrimSpace(m)]++
			rd.ReadString('\n')
			rd.ReadString('\n')
		}
		if cursor == "0" {
			break
		}
	}
	if len(seen) != 300 {
		t.Fatalf("ZSCAN saw %d members, want 300", len(seen))
	}
}

func TestZsetOpCommands(t *testing.T) {
	play(t, []step{
		{"ZADD a 1 x 2 y 3 z", rInt(3)},
		{"ZADD b 10 y 20 z 30 w", rInt(3)},
		{"ZUNION 2 a b WITHSCORES", rBulks("x", "1", "y", "12", "z", "23", "w", "30")},
		{"ZUNION 2 a b WEIGHTS 2 -1 AGGREGATE MIN WITHSCORES", rBulks("w", "-30", "z", "-20", "y", "-10", "x", "2")},
		{"ZUNION 2 a nokey", rBulks("x", "y", "z")},
		{"ZINTER 2 a b WITHSCORES", rBulks("y", "12", "z", "23")},
		{"ZINTER 2 a b AGGREGATE MAX WITHSCORES", rBulks("y", "10", "z", "20")},
		{"ZINTER 2 a nokey", rEmpty},
		{"ZDIFF 2 a b WITHSCORES", rBulks("x", "1")},
		{"ZDIFF 2 a a", rEmpty},
		{"ZDIFF 1 nokey", rEmpty},
		{"ZINTERCARD 2 a b", rInt(2)},
		{"ZINTERCARD 2 a b LIMIT 1", rInt(1)},
		{"ZINTERCARD 2 a b LIMIT 0", rInt(2)},
		{"ZUNIONSTORE dst 2 a b WEIGHTS 1 0.5", rInt(4)},
		{"ZRANGE dst 0 -1 WITHSCORES", rBulks("x", "1", "y", "7", "z", "13", "w", "15")},
		{"ZINTERSTORE dst 2 a b", rInt(2)},
		{"ZDIFFSTORE dst 2 b a", rInt(1)},
		{"ZRANGE dst 0 -1 WITHSCORES", rBulks("w", "30")},
		{"ZINTERSTORE dst 2 a nokey", rInt(0)},
		{"EXISTS dst", rInt(0)},
		// inf - inf sums to 0, 0 * inf weighs 0, as in Redis
		{"ZADD i inf m", rInt(1)},
		{"ZADD j -inf m", rInt(1)},
		{"ZUNION 2 i j WITHSCORES", rBulks("m", "0")},
		{"ZUNION 1 i WEIGHTS 0 WITHSCORES", rBulks("m", "0")},
		// errors
		{"ZUNION 0 a", rErr(fmt.Sprintf(msgNumkeys, "zunion"))},
		{"ZINTERSTORE dst -1 a", rErr(fmt.Sprintf(msgNumkeys, "zinterstore"))},
		{"ZUNION 3 a b", rErr(msgSyntax)},
		{"ZUNION x a", rErr(msgNotInt)},
		{"ZUNION 1 a WEIGHTS x", rErr(msgWeightNotFloat)},
		{"ZUNION 1 a WEIGHTS 1 2", rErr(msgSyntax)},
		{"ZUNION 1 a AGGREGATE avg", rErr(msgSyntax)},
		{"ZUNIONSTORE dst 1 a WITHSCORES", rErr(msgSyntax)},
		{"ZDIFF 1 a WEIGHTS 1", rErr(msgSyntax)},
		{"ZINTERCARD 1 a LIMIT -1", rErr(msgLimitNegative)},
		{"ZINTERCARD 1 a WITHSCORES", rErr(msgSyntax)},
		{"SET s v", rOK},
		{"ZUNION 2 a s", rWrongType},
		{"ZUNION 2 s a WEIGHTS x", rWrongType}, // the types are checked before the options
	})
}

// TestBzpop covers BZPOPMIN/BZPOPMAX: at once when there is a member, blocked
// waiters served in arrival order by a later ZADD, timeouts, and no blocking
// inside MULTI.
func TestBzpop(t *testing.T) {
	addr := startTestServer(t)
	c := dialRaw(t, addr)
	playOn(t, c, []step{
		{"ZADD z 1 a 2 b", rInt(2)},
		{"BZPOPMIN nokey z 0", rBulks("z", "a", "1")},
		{"BZPOPMAX z 0", rBulks("z", "b", "2")},
		{"EXISTS z", rInt(0)},
		{"BZPOPMIN z 0.01", rNullArr},
		{"BZPOPMIN z x", rErr(msgTimeoutNotFloat)},
		{"BZPOPMIN z -1", rErr(msgTimeoutNegative)},
		{"BZPOPMIN z inf", rErr(msgTimeoutNegative)},
		{"SET s v", rOK},
		{"BZPOPMIN s 0", rWrongType},
		{"MULTI", rOK},
		{"BZPOPMIN q 0", "+QUEUED\r\n"},
		{"EXEC", rArr(rNullArr)},
	})

	// Three clients wait on q; the executor keeps serving everyone else.
	waiters := make([]*rconn, 3)
	for i := range waiters {
		waiters[i] = dialRaw(t, addr)
		waiters[i].send("BZPOPMIN", "q", "other", "0")
		// each must be blocked before the next arrives: CLIENT LIST shows them
		waitFor(t, func() bool {
			return strings.Count(c.do("CLIENT", "LIST"), "flags=b") == i+1
		})
	}
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING while clients block: %q", got)
	}
	playOn(t, c, []step{{"ZADD q 3 m3 1 m1 2 m2", rInt(3)}})
	for i, w := range waiters {
		want := rBulks("q", "m"+strconv.Itoa(i+1), strconv.Itoa(i+1))
		if got := w.read(); got != want {
			t.Errorf("waiter %d got %q, want %q", i, got, want)
		}
	}
	playOn(t, c, []step{{"EXISTS q", rInt(0)}})

	// A waiter served from its second key; one that finds nothing keeps waiting.
	w1, w2 := dialRaw(t, addr), dialRaw(t, addr)
	w1.send("BZPOPMAX", "q1", "q2", "0")
	waitFor(t, func() bool { return strings.Count(c.do("CLIENT", "LIST"), "flags=b") == 1 })
	w2.send("BZPOPMAX", "q2", "1")
	waitFor(t, func() bool { return strings.Count(c.do("CLIENT", "LIST"), "flags=b") == 2 })
	playOn(t, c, []step{{"ZADD q2 5 five", rInt(1)}})
	if got, want := w1.read(), rBulks("q2", "five", "5"); got != want {
		t.Errorf("first waiter got %q, want %q", got, want)
	}
	if got := w2.read(); got != rNullArr {
		t.Errorf("second waiter got %q, want a timeout", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached in 5s")
}

func TestParseTimeout(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"0", 0, ""},
		{"1", time.Second, ""},
		{"0.5", 500 * time.Millisecond, ""},
		{"0.0001", time.Millisecond, ""}, // rounded up
		{"-0.0001", 0, ""},               // rounds to 0: wait forever, as 7.0 does
		{"1e-400", time.Millisecond, ""},
		{"0x10", 16 * time.Second, ""},
		{"-1", 0, msgTimeoutNegative},
		{"inf", 0, msgTimeoutNegative},
		{"1e400", 0, msgTimeoutNegative}, // a long double holds it; a long long does not
		{"1e5000", 0, msgTimeoutNotFloat},
		{"x", 0, msgTimeoutNotFloat},
		{" 1", 0, msgTimeoutNotFloat},
		{"1 ", 0, msgTimeoutNotFloat},
		{"nan", 0, msgTimeoutNotFloat},
		{"", 0, msgTimeoutNotFloat},
	} {
		got, err := parseTimeout([]byte(tc.in))
		if got != tc.want || err != tc.err {
			t.Errorf("parseTimeout(%q) = %v %q, want %v %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseScanCursor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"", 0, true}, {"42", 42, true}, {"+5", 5, true}, {"-1", 1<<64 - 1, true},
		{"18446744073709551615", 1<<64 - 1, true}, {"18446744073709551616", 0, false},
		{" 1", 0, false}, {"1 ", 0, false}, {"x", 0, false}, {"-", 0, false}, {"1\x00x", 1, true},
	} {
		got, ok := parseScanCursorString(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseScanCursorString(%q) = %d %v, want %d %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSortedSetCommandsModel drives random ZADD, ZINCRBY, ZREM, ZPOPMIN and
// ZREMRANGEBY* commands against a sorted-slice model and checks ZRANGE
// WITHSCORES, ZCARD, ZRANK and ZSCORE of every member after each step.
func TestSortedSetCommandsModel(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	do := func(args ...string) string { return string(s.Do(args...)) }
	rapid.Check(t, func(t *rapid.T) {
		do("FLUSHALL")
		var m zmodel
		members := rapid.SampledFrom([]string{"a", "b", "c", "d", "e", "f", "aa"})
		scores := rapid.IntRange(-3, 3)
		oneScore := rapid.Bool().Draw(t, "oneScore") // makes ZREMRANGEBYLEX meaningful
		score := func(t *rapid.T) int {
			if oneScore {
				return 0
			}
			return scores.Draw(t, "score")
		}
		t.Repeat(map[string]func(*rapid.T){
			"ZADD": func(t *rapid.T) {
				mem, sc := members.Draw(t, "member"), score(t)
				want := rInt(1)
				if m.find(mem) >= 0 {
					want = rInt(0)
				}
				if got := do("ZADD", "z", strconv.Itoa(sc), mem); got != want {
					t.Fatalf("ZADD = %q, want %q", got, want)
				}
				m.add(mem, float64(sc))
			},
			"ZINCRBY": func(t *rapid.T) {
				if oneScore {
					t.Skip("scores stay equal")
				}
				mem, by := members.Draw(t, "member"), scores.Draw(t, "by")
				cur := 0.0
				if i := m.find(mem); i >= 0 {
					cur = m[i].score
				}
				if got, want := do("ZINCRBY", "z", strconv.Itoa(by), mem), rBulk(formatScore(cur+float64(by))); got != want {
					t.Fatalf("ZINCRBY = %q, want %q", got, want)
				}
				m.add(mem, cur+float64(by))
			},
			"ZREM": func(t *rapid.T) {
				mem := members.Draw(t, "member")
				i := m.find(mem)
				if got, want := do("ZREM", "z", mem), rInt(btoi(i >= 0)); got != want {
					t.Fatalf("ZREM = %q, want %q", got, want)
				}
				if i >= 0 {
					m = slices.Delete(m, i, i+1)
				}
			},
			"ZPOPMIN": func(t *rapid.T) {
				n := rapid.IntRange(0, 3).Draw(t, "n")
				k := min(n, len(m))
				var want []string
				for _, it := range m[:k] {
					want = append(want, it.member, formatScore(it.score))
				}
				if got := do("ZPOPMIN", "z", strconv.Itoa(n)); got != rBulks(want...) {
					t.Fatalf("ZPOPMIN %d = %q, want %q", n, got, rBulks(want...))
				}
				m = slices.Delete(m, 0, k)
			},
			"ZREMRANGEBYSCORE": func(t *rapid.T) {
				lo, hi := scores.Draw(t, "min"), scores.Draw(t, "max")
				minEx, maxEx := rapid.Bool().Draw(t, "minEx"), rapid.Bool().Draw(t, "maxEx")
				r := scoreRange{float64(lo), float64(hi), minEx, maxEx}
				a, b := strconv.Itoa(lo), strconv.Itoa(hi)
				if minEx {
					a = "(" + a
				}
				if maxEx {
					b = "(" + b
				}
				s, e := m.span(func(it zItem) bool { return r.aboveMin(it.score) && !r.aboveMax(it.score) })
				if got := do("ZREMRANGEBYSCORE", "z", a, b); got != rInt(e-s) {
					t.Fatalf("ZREMRANGEBYSCORE %s %s = %q, want %d", a, b, got, e-s)
				}
				m = slices.Delete(m, s, e)
			},
			"ZREMRANGEBYRANK": func(t *rapid.T) {
				start, stop := rapid.IntRange(-5, 5).Draw(t, "start"), rapid.IntRange(-5, 5).Draw(t, "stop")
				z := newZSet()
				for _, it := range m {
					z.Add(it.member, it.score)
				}
				s, e := z.RankSpan(start, stop, false)
				if got := do("ZREMRANGEBYRANK", "z", strconv.Itoa(start), strconv.Itoa(stop)); got != rInt(e-s) {
					t.Fatalf("ZREMRANGEBYRANK %d %d = %q, want %d", start, stop, got, e-s)
				}
				m = slices.Delete(m, s, e)
			},
			"ZREMRANGEBYLEX": func(t *rapid.T) {
				if !oneScore {
					t.Skip("lex ranges need equal scores")
				}
				b := rapid.SampledFrom([]string{"-", "+", "[a", "(a", "[b", "(c", "[e", "(aa"})
				lo, hi := b.Draw(t, "min"), b.Draw(t, "max")
				r, _ := parseLexRange(lo, hi)
				s, e := m.span(func(it zItem) bool { return r.aboveMin(it.member) && !r.aboveMax(it.member) })
				if got := do("ZREMRANGEBYLEX", "z", lo, hi); got != rInt(e-s) {
					t.Fatalf("ZREMRANGEBYLEX %s %s = %q, want %d", lo, hi, got, e-s)
				}
				m = slices.Delete(m, s, e)
			},
			"": func(t *rapid.T) {
				var want []string
				for _, it := range m {
					want = append(want, it.member, formatScore(it.score))
				}
				if got := do("ZRANGE", "z", "0", "-1", "WITHSCORES"); got != rBulks(want...) {
					t.Fatalf("ZRANGE = %q, want %q", got, rBulks(want...))
				}
				if got := do("ZCARD", "z"); got != rInt(len(m)) {
					t.Fatalf("ZCARD = %q, want %d", got, len(m))
				}
				if got := do("EXISTS", "z"); got != rInt(btoi(len(m) > 0)) {
					t.Fatalf("EXISTS = %q with %d members", got, len(m))
				}
				for i, it := range m {
					if got := do("ZRANK", "z", it.member); got != rInt(i) {
						t.Fatalf("ZRANK %s = %q, want %d", it.member, got, i)
					}
					if got := do("ZSCORE", "z", it.member); got != rBulk(formatScore(it.score)) {
						t.Fatalf("ZSCORE %s = %q, want %v", it.member, got, it.score)
					}
				}
			},
		})
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
