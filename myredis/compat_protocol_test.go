// Needs redis-server (skips without it): malformed and unusual request bytes sent
// to MyRedis and to a real redis-server; the bytes each sends back, and whether
// it closes the connection, must be the same.
package myredis_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// rawCase is a byte stream a client sends, in one write or in the given pieces
// (with a pause after each, so the server reads them separately).
type rawCase struct {
	name   string
	input  string
	pieces []int // lengths of the leading pieces; the rest goes last
}

func big(n int, c string) string { return strings.Repeat(c, n) }

var rawCases = []rawCase{
	// framing Redis accepts
	{name: "multibulk", input: "*1\r\n$4\r\nPING\r\n"},
	{name: "empty multibulk is skipped", input: "*0\r\n*1\r\n$4\r\nPING\r\n"},
	{name: "negative multibulk is skipped", input: "*-1\r\n*-5\r\nPING\r\n"},
	{name: "any two bytes after a payload", input: "*1\r\n$4\r\nPINGxx*2\r\n$4\r\nECHO\r\n$1\r\nab\n"},
	{name: "any byte after a header CR", input: "*1\rX$4\rXPING\r\n"},
	{name: "inline", input: "PING\r\nECHO hello\nSET k v\r\nGET k\r\n"},
	{name: "inline blank lines", input: "\r\n\n   \r\nPING\r\n"},
	{name: "inline tabs and vertical tab", input: "ECHO\ta\r\nECHO \x0bb\r\nECHO a\x0bb\r\n"},
	{name: "inline quotes", input: "ECHO \"a b\"\r\nECHO 'c d'\r\nECHO \"\\x41\\x4a\\n\\t\\q\"\r\nECHO 'it\\'s'\r\n"},
	{name: "inline empty quotes", input: "ECHO \"\"\r\nECHO ''\r\n"},
	{name: "inline bad hex escape", input: "ECHO \"\\x4\"\r\nECHO \"\\xzz\"\r\n"},
	{name: "inline trailing quote then vertical tab", input: "ECHO \"a\"\x0b\r\n"},
	{name: "binary payload", input: "*2\r\n$4\r\nECHO\r\n$5\r\na\x00\r\nb\r\n"},
	{name: "empty bulk", input: "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"},
	{name: "lower case and mixed", input: "*1\r\n$4\r\npInG\r\n"},
	{name: "pipeline of mixed forms", input: "PING\r\n*1\r\n$4\r\nPING\r\n*0\r\nECHO x\r\n"},

	// protocol errors: the replies before, the error, then the close
	{name: "bulk length -1", input: "*1\r\n$-1\r\n"},
	{name: "bulk length not a number", input: "*1\r\n$abc\r\n"},
	{name: "bulk length with plus", input: "*1\r\n$+4\r\nPING\r\n"},
	{name: "bulk length leading zero", input: "*1\r\n$04\r\nPING\r\n"},
	{name: "bulk length space", input: "*1\r\n$ 4\r\nPING\r\n"},
	{name: "bulk over proto-max-bulk-len", input: "*1\r\n$536870913\r\n"},
	{name: "bulk far too long", input: "*1\r\n$99999999999999999999\r\n"},
	{name: "multibulk not a number", input: "*abc\r\n"},
	{name: "multibulk leading zero", input: "*01\r\n$4\r\nPING\r\n"},
	{name: "multibulk plus", input: "*+1\r\n$4\r\nPING\r\n"},
	{name: "multibulk minus zero", input: "*-0\r\n"},
	{name: "multibulk trailing space", input: "*1 \r\n$4\r\nPING\r\n"},
	{name: "multibulk over INT_MAX", input: "*2147483648\r\n"},
	{name: "multibulk far too long", input: "*99999999999999999999\r\n"},
	{name: "expected dollar", input: "*1\r\nPING\r\n"},
	// RESP3 frames a client may not send: inside a request, a protocol error;
	// first on a line, an inline command named after them
	{name: "RESP3 attribute in a request", input: "*1\r\n|1\r\n$1\r\na\r\n$1\r\nb\r\n"},
	{name: "RESP3 push in a request", input: "*2\r\n$4\r\nECHO\r\n>1\r\n$1\r\na\r\n"},
	{name: "RESP3 push and attribute frames", input: ">1\r\n$4\r\nPING\r\n|1\r\n$1\r\na\r\n$1\r\nb\r\nPING\r\n"},
	{name: "RESP3 map in a request", input: "*1\r\n%1\r\n$1\r\na\r\n$1\r\nb\r\n"},
	{name: "RESP3 null in a request", input: "*2\r\n$4\r\nECHO\r\n_\r\n"},
	{name: "RESP3 double in a request", input: "*2\r\n$4\r\nECHO\r\n,1.5\r\n"},
	{name: "RESP3 scalar and aggregate frames first on a line",
		input: "_\r\n#t\r\n,1.5\r\n(12\r\n~1\r\n%1\r\n=5\r\ntxt:a\r\n!3\r\nerr\r\nPING\r\n"},
	{name: "expected dollar got CR", input: "*1\r\n\r\n"},
	{name: "expected dollar got LF", input: "*1\r\n\n\r\n"},
	{name: "expected dollar got high byte", input: "*1\r\n\xff\r\n"},
	{name: "unbalanced quotes", input: "ECHO \"abc\r\n"},
	{name: "closing quote glued", input: "SET a \"b c\"d\r\n"},
	{name: "error after good requests", input: "PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n$-1\r\nPING\r\n"},
	{name: "newline before CR in count", input: "*1\n$4\r\nPING\r\n"},
	{name: "inline too long", input: big(70000, "a")},
	{name: "inline too long then newline", input: big(100000, "a") + "\r\n"},
	{name: "multibulk count too long", input: "*" + big(70000, "1")},
	{name: "bulk count too long", input: "*1\r\n$" + big(70000, "1")},

	// requests Redis never completes (no reply, connection open)
	{name: "incomplete multibulk", input: "*2\r\n$4\r\nECHO\r\n$5\r\nab"},
	{name: "no CR anywhere", input: "*1\n$4\nPING\n"},
	{name: "NUL in inline line stalls", input: "PI\x00NG\r\nPING\r\n"},
	{name: "NUL in count line stalls", input: "*1\x00\r\n$4\r\nPING\r\n"},
	{name: "NUL in bulk header stalls", input: "*1\r\n$4\x00\r\nPING\r\n"},
	{name: "binary junk line", input: "\x00\x01\x02\r\n"},
	{name: "stalled request errors past 64k", input: "PI\x00NG" + big(70000, "x")},
	{name: "huge multibulk count waits", input: "*2147483647\r\n$4\r\nPING\r\n"},
	{name: "bulk header without payload", input: "*2\r\n$4\r\nECHO\r\n$100000\r\n"},

	// the same, delivered in pieces
	{name: "split inside header", input: "*1\r\n$4\r\nPING\r\n", pieces: []int{1, 2, 1, 2, 1}},
	{name: "split between CR and LF", input: "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n", pieces: []int{3, 10, 9}},
	{name: "split inline", input: "ECHO \"a b\"\r\nPING\r\n", pieces: []int{3, 4, 4}},
	{name: "split empty multibulk", input: "*0\r\nPING\r\n", pieces: []int{1, 1, 1}},
	{name: "split error after good", input: "PING\r\n*1\r\n$-1\r\n", pieces: []int{6, 4, 2}},
	{name: "split payload trailer", input: "*1\r\n$4\r\nPINGxy*1\r\n$4\r\nPING\r\n", pieces: []int{12, 1}},
}

// unauthCases run against servers with requirepass.
var unauthCases = []rawCase{
	{name: "ten arguments are fine", input: "*10\r\n" + strings.Repeat("$1\r\na\r\n", 10)},
	{name: "eleven arguments before AUTH", input: "*11\r\n"},
	{name: "bulk of 16384 is fine", input: "*2\r\n$4\r\nECHO\r\n$16384\r\n" + big(16384, "x") + "\r\n"},
	{name: "bulk over 16384 before AUTH", input: "*2\r\n$4\r\nECHO\r\n$16385\r\n"},
	{name: "AUTH first in the same write", input: "AUTH secret\r\n*11\r\n" + strings.Repeat("$1\r\na\r\n", 11) + "PING\r\n"},
	{name: "AUTH then big bulk in one write", input: "*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n*2\r\n$4\r\nECHO\r\n$20000\r\n" + big(20000, "y") + "\r\n"},
	{name: "wrong AUTH then eleven", input: "AUTH nope\r\n*11\r\n"},
	{name: "inline with many words before AUTH", input: "a b c d e f g h i j k l\r\n"},
}

func TestCompatProtocol(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	runRawCases(t, real, mine, rawCases)
}

// smallBulkCases run against servers with --proto-max-bulk-len 1mb.
var smallBulkCases = []rawCase{
	{name: "bulk at the limit", input: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048576\r\n" + big(1<<20, "x") + "\r\n*2\r\n$6\r\nSTRLEN\r\n$1\r\nk\r\n"},
	{name: "bulk over the limit, header only", input: "*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n"},
}

func TestCompatProtocolSmallBulk(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t, "--proto-max-bulk-len", "1mb")
	runRawCases(t, real, mine, smallBulkCases)
}

func TestCompatProtocolUnauthenticated(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t, "--requirepass", "secret")
	runRawCases(t, real, mine, unauthCases)
}

// runRawCases plays every case against both servers, all at once (each waits for
// a quiet connection), then compares what came back and whether the connection
// was closed.
func runRawCases(t *testing.T, realAddr, myAddr string, cases []rawCase) {
	want := make([]rawResult, len(cases))
	got := make([]rawResult, len(cases))
	var wg sync.WaitGroup
	for i, rc := range cases {
		wg.Add(2)
		go func() { defer wg.Done(); want[i] = playRaw(t, realAddr, rc) }()
		go func() { defer wg.Done(); got[i] = playRaw(t, myAddr, rc) }()
	}
	wg.Wait()
	for i, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			if got[i] != want[i] {
				t.Errorf("input %.200q\n redis:   %.300q closed=%v\n myredis: %.300q closed=%v",
					rc.input, want[i].data, want[i].closed, got[i].data, got[i].closed)
			}
		})
	}
}

type rawResult struct {
	data   string
	closed bool
}

// playRaw sends rc and collects the server's bytes until it closes the
// connection or stays quiet for a while.
func playRaw(t *testing.T, addr string, rc rawCase) rawResult {
	c := redistest.Dial(t, addr)
	in := rc.input
	for _, n := range rc.pieces {
		if err := c.Write([]byte(in[:n])); err != nil {
			t.Errorf("%s: write: %v", addr, err)
		}
		in = in[n:]
		time.Sleep(30 * time.Millisecond)
	}
	if err := c.Write([]byte(in)); err != nil {
		// the server may close before reading everything; what it sent still counts
		t.Logf("%s: write: %v", addr, err)
	}
	data, closed := c.ReadAll(400 * time.Millisecond)
	if !closed && strings.Contains(data, "Protocol error") {
		// both servers close after a protocol error; on a loaded machine the
		// close can take longer than the quiet period
		more, c2 := c.ReadAll(5 * time.Second)
		data, closed = data+more, c2
	}
	return rawResult{data, closed}
}
