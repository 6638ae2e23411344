package myredis

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
)

// chunkConn is a socket that delivers fixed pieces, then EOF, and records writes.
type chunkConn struct {
	net.Conn
	chunks [][]byte
	wrote  bytes.Buffer
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

func (c *chunkConn) Write(p []byte) (int, error) { return c.wrote.Write(p) }

// guardResult is what redcon would read through the guard: the complete requests
// (an unfinished one may trail; it dies with the connection), and the error the
// client would be sent.
type guardResult struct {
	out, sent string
}

// completeRequests parses out as the query buffer does and re-renders the complete
// requests; a protocol error there means the guard let bad bytes through.
func completeRequests(out string) (string, error) {
	reqs, err := readRequests([][]byte{[]byte(out)}, 0) // the query buffer's parser (querybuf.go)
	if err == io.EOF {
		err = nil
	}
	return reqs, err
}

// runGuard feeds input through a guard in the given pieces, reading with buffers
// of readSize bytes, as redcon does.
func runGuard(input string, pieces []int, readSize int, limits *liveSettings, authed bool) guardResult {
	var chunks [][]byte
	rest := []byte(input)
	for _, n := range pieces {
		n = min(n, len(rest))
		if n > 0 {
			chunks = append(chunks, rest[:n])
		}
		rest = rest[n:]
	}
	if len(rest) > 0 {
		chunks = append(chunks, rest)
	}
	cc := &chunkConn{chunks: chunks}
	gc := &guardConn{Conn: cc}
	gc.g.limits = limits
	gc.g.authed = &gc.authed
	gc.authed.Store(authed)
	var out bytes.Buffer
	p := make([]byte, readSize)
	for {
		n, err := gc.Read(p)
		out.Write(p[:n])
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, errGuardClosed) {
				panic(err)
			}
			break
		}
	}
	reqs, err := completeRequests(out.String())
	if err != nil {
		panic("redcon cannot read the guard's output " + strconv.Quote(out.String()) + ": " + err.Error())
	}
	return guardResult{reqs, cc.wrote.String()}
}

func defaultLimits() *liveSettings {
	l := &liveSettings{}
	l.set(DefaultConfig())
	return l
}

func TestGuardRewrites(t *testing.T) {
	tests := []struct {
		name, in, out, sent string
	}{
		{"canonical passes", "*1\r\n$4\r\nPING\r\n", "*1\r\n$4\r\nPING\r\n", ""},
		{"inline becomes multibulk", "SET k \"a b\"\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na b\r\n", ""},
		{"inline escapes", "ECHO \"\\x41\\n\" 'it\\'s'\n", "*3\r\n$4\r\nECHO\r\n$2\r\nA\n\r\n$4\r\nit's\r\n", ""},
		{"blank lines vanish", "\r\n \t\r\n*0\r\n*-1\r\n", "", ""},
		{"trailer bytes repaired", "*1\r\n$4\r\nPINGxy", "*1\r\n$4\r\nPING\r\n", ""},
		{"header LF repaired", "*1\rx$4\ryPING\r\n", "*1\r\n$4\r\nPING\r\n", ""},
		{"error drops the bad request only", "PING\r\n*1\r\n$-1\r\nPING\r\n", "*1\r\n$4\r\nPING\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"bulk over the limit", "*1\r\n$536870913\r\n", "", "-ERR Protocol error: invalid bulk length\r\n"},
		{"count over INT_MAX", "*2147483648\r\n", "", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"expected dollar", "*1\r\n:1\r\n", "", "-ERR Protocol error: expected '$', got ':'\r\n"},
		{"unbalanced", "ECHO \"a\r\n", "", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"NUL stalls", "PI\x00NG\r\nPING\r\n", "", ""},
		{"stall errors past 64k", "PI\x00NG" + strings.Repeat("x", 70000), "", "-ERR Protocol error: too big inline request\r\n"},
		{"inline too big", strings.Repeat("x", 70000), "", "-ERR Protocol error: too big inline request\r\n"},
		{"count line too big", "*" + strings.Repeat("1", 70000), "", "-ERR Protocol error: too big mbulk count string\r\n"},
		{"bulk line too big", "*1\r\n$" + strings.Repeat("1", 70000), "", "-ERR Protocol error: too big bulk count string\r\n"},
		{"big request held until complete", "*1025\r\n" + strings.Repeat("$1\r\na\r\n", 1024), "", ""},
		{"big request released when complete", "*1025\r\n" + strings.Repeat("$1\r\na\r\n", 1025),
			"*1025\r\n" + strings.Repeat("$1\r\na\r\n", 1025), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runGuard(tc.in, nil, 4096, defaultLimits(), true)
			if got.out != tc.out || got.sent != tc.sent {
				t.Errorf("input %.80q\n got  out=%.120q sent=%q\n want out=%.120q sent=%q", tc.in, got.out, got.sent, tc.out, tc.sent)
			}
		})
	}
}

func TestGuardUnauthenticated(t *testing.T) {
	limits := defaultLimits()
	limits.hasPass.Store(true)
	got := runGuard("*11\r\n", nil, 4096, limits, false)
	if got.sent != "-ERR Protocol error: unauthenticated multibulk length\r\n" {
		t.Errorf("11 args before AUTH: sent %q", got.sent)
	}
	got = runGuard("*2\r\n$4\r\nECHO\r\n$16385\r\n", nil, 4096, limits, false)
	if got.sent != "-ERR Protocol error: unauthenticated bulk length\r\n" {
		t.Errorf("bulk of 16385 before AUTH: sent %q", got.sent)
	}
	if got := runGuard("*11\r\n", nil, 4096, limits, true); got.sent != "" {
		t.Errorf("authenticated client refused: %q", got.sent)
	}
	// Two requests in one read while unauthenticated: the guard hands over the
	// first alone, so an AUTH in it can take effect before the second is judged.
	gotOut := runGuard("AUTH x\r\nPING\r\n", nil, 4096, limits, false)
	if gotOut.out != "*2\r\n$4\r\nAUTH\r\n$1\r\nx\r\n*1\r\n$4\r\nPING\r\n" {
		t.Errorf("out %q", gotOut.out)
	}
}

// TestGuardChunking checks that how the bytes arrive changes nothing: every
// input, split at every point and read with tiny buffers, gives the output and
// error it gives in one piece.
func TestGuardChunking(t *testing.T) {
	inputs := []string{
		"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\nPING\r\n*0\r\nECHO \"a b\"\r\n",
		"*1\rx$4\ryPINGab*1\r\n$4\r\nPING\r\n",
		"PING\r\n*1\r\n$-1\r\nPING\r\n",
		"*1\r\n\r\n",
		"ECHO 'x\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n\n\n",
		"*1025\r\n" + strings.Repeat("$1\r\na\r\n", 1025) + "PING\r\n",
	}
	for _, in := range inputs {
		whole := runGuard(in, nil, 1<<16, defaultLimits(), true)
		step := max(1, len(in)/200) // long inputs: a sample of cuts
		for cut := 1; cut < len(in); cut += step {
			for _, readSize := range []int{1, 3, 4096} {
				if readSize == 1 && len(in) > 1000 {
					continue
				}
				got := runGuard(in, []int{cut, 1, 2}, readSize, defaultLimits(), true)
				if got != whole {
					t.Fatalf("input %.60q cut at %d read %d:\n got  %+v\n want %+v", in, cut, readSize, got, whole)
				}
			}
		}
	}
}

// FuzzRESPGuard feeds arbitrary bytes through the guard in arbitrary pieces: it
// must not panic, what it hands redcon must parse without a protocol error (see
// runGuard), and the requests and error must not depend on how the bytes split.
func FuzzRESPGuard(f *testing.F) {
	f.Add([]byte("*1\r\n$4\r\nPING\r\n"), uint16(3), uint8(7))
	f.Add([]byte("PING\r\nECHO \"a\\x41\" 'b'\r\n"), uint16(5), uint8(1))
	f.Add([]byte("*2\r\n$4\r\nECHO\r\n$3\r\na\x00bxy*0\r\n"), uint16(9), uint8(2))
	f.Add([]byte("*1\rX$-1\r\n"), uint16(1), uint8(1))
	f.Add([]byte("\x00\xff*\r\n$"), uint16(2), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, readSize uint8) {
		limits := &liveSettings{}
		limits.maxBulk.Store(1 << 20)
		in := string(data)
		whole := runGuard(in, nil, 1<<16, limits, true)
		split := runGuard(in, []int{int(cut) % (len(in) + 1), 1}, int(readSize)%64+1, limits, true)
		if split != whole {
			t.Fatalf("split result differs:\n split %+v\n whole %+v", split, whole)
		}
		if whole.sent != "" && !strings.HasPrefix(whole.sent, "-ERR Protocol error: ") {
			t.Fatalf("unexpected error text %q", whole.sent)
		}
	})
}
