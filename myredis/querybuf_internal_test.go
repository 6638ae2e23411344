package myredis

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidwall/redcon"
)

// testQueryBuf is a query buffer reading chunks, one per read.
func testQueryBuf(chunks ...[]byte) (*queryBuf, *atomic.Uint64) {
	q := &queryBuf{}
	epoch := &atomic.Uint64{}
	q.init(&chunkConn{chunks: chunks}, epoch)
	return q, epoch
}

// readBatchOK reads one batch and fails the test on an error.
func readBatchOK(t *testing.T, q *queryBuf) []redcon.Command {
	t.Helper()
	cmds, err := q.readBatch(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cmds
}

// TestQueryBufPeakRule: a buffer far bigger than the requests of late (one
// grown for a pipeline of big requests) is cut down once a whole cron tick has
// passed with small requests only, and not in the tick that saw it big.
func TestQueryBufPeakRule(t *testing.T) {
	ping := encodeRequest([][]byte{[]byte("PING")})
	q, epoch := testQueryBuf(ping, ping, ping, ping)
	q.resize(300 << 10) // as a pipeline of big requests left it
	q.peak = 300 << 10
	if cmds := readBatchOK(t, q); len(cmds) != 1 {
		t.Fatalf("first batch: %d requests", len(cmds))
	}
	epoch.Add(1) // the tick that saw the buffer full: the peak starts again
	readBatchOK(t, q)
	if q.size.Load() != 300<<10 {
		t.Fatalf("resized to %d in the tick of the big peak", q.size.Load())
	}
	epoch.Add(1)
	readBatchOK(t, q)
	if n := q.size.Load(); n >= qbufResizeMin || n != int64(cap(q.buf)) {
		t.Fatalf("after a quiet tick the buffer is %d (cap %d), want under %d", n, cap(q.buf), qbufResizeMin)
	}
	if cmds := readBatchOK(t, q); len(cmds) != 1 || string(cmds[0].Raw) != string(ping) {
		t.Fatalf("after the resize: %q", cmds)
	}
}

// TestQueryBufIdleTrim: the idle rule keeps the bytes of an unfinished
// request and drops only the free space; a big request alone in the buffer
// takes the buffer along (Raw) and leaves none.
func TestQueryBufIdleTrim(t *testing.T) {
	req := encodeRequest([][]byte{[]byte("ECHO"), bytes.Repeat([]byte("y"), 100<<10)})
	const got = 20 << 10 // received before the client went quiet
	q, _ := testQueryBuf(req[:200], req[200:got], req[got:])
	for q.end < got {
		q.makeRoom()
		n, err := q.nc.Read(q.buf[q.end:cap(q.buf)])
		if err != nil {
			t.Fatal(err)
		}
		q.end += n
		if _, err := q.parse(nil); err != nil || q.need != len(req) {
			t.Fatalf("need %d, want %d (%v)", q.need, len(req), err)
		}
	}
	if cap(q.buf) <= got+qbufWasteMin || cap(q.buf) > 2*got {
		t.Fatalf("a buffer of %d for %d bytes received", cap(q.buf), got)
	}
	q.trimIdle()
	if q.size.Load() != got || q.end != got {
		t.Fatalf("trimmed to %d holding %d", q.size.Load(), q.end)
	}
	cmds := readBatchOK(t, q)
	if len(cmds) != 1 || !bytes.Equal(cmds[0].Raw, req) {
		t.Fatal("the request changed across the trim")
	}
	if q.size.Load() != 0 || !q.inIdl {
		t.Fatalf("a big request alone should take the buffer along: size %d", q.size.Load())
	}
	q.trimIdle() // nothing to trim
	if _, err := q.readBatch(nil); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last chunk: %v", err)
	}
}

// readRequests reads everything from chunks through a query buffer, trimming
// (idle rule) after every trimEvery-th batch and passing a cron tick after
// every batch. It returns the requests' bytes and the error that ended it.
func readRequests(chunks [][]byte, trimEvery int) (string, error) {
	q, epoch := testQueryBuf(chunks...)
	var out strings.Builder
	for i := 1; ; i++ {
		cmds, err := q.readBatch(nil)
		for _, c := range cmds {
			if !bytes.Equal(c.Raw, encodeRequest(c.Args)) {
				panic("request " + string(c.Raw) + " has other arguments")
			}
			out.Write(c.Raw)
		}
		if err != nil {
			return out.String(), err
		}
		if q.end-q.from != int(q.held.Load()) || q.size.Load() > int64(cap(q.buf)) {
			panic("held or size published wrong")
		}
		epoch.Add(1)
		if trimEvery > 0 && i%trimEvery == 0 {
			q.trimIdle()
		}
	}
}

// FuzzQueryBuf: the request parser and the buffer's resizing never panic,
// every request's arguments are its bytes, and neither the requests read nor
// the error depends on how the input was split into reads or when the buffer
// was trimmed.
func FuzzQueryBuf(f *testing.F) {
	f.Add([]byte("*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\n"), uint16(5), uint8(3), uint8(1))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$40000\r\n"+strings.Repeat("z", 40000)+"\r\n*1\r\n$4\r\nPI"), uint16(17), uint8(200), uint8(2))
	f.Add([]byte("*1\r\n$-1\r\n"), uint16(2), uint8(1), uint8(0))
	f.Add([]byte("*0\r\n"), uint16(1), uint8(1), uint8(0))
	f.Add([]byte("*1\r\n$3\r\nabcXY"), uint16(1), uint8(1), uint8(0))
	f.Add([]byte("*3\r\n$1\r\na\r\n$9223372036854775807\r\n"), uint16(9), uint8(4), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, step uint8, trimEvery uint8) {
		whole, werr := readRequests([][]byte{data}, 0)
		var chunks [][]byte
		first := int(cut) % (len(data) + 1)
		chunks = append(chunks, data[:first])
		for rest, n := data[first:], int(step)%64+1; len(rest) > 0; {
			k := min(n, len(rest))
			chunks = append(chunks, rest[:k])
			rest = rest[k:]
		}
		split, serr := readRequests(chunks, int(trimEvery)%4)
		if split != whole || (werr == nil) != (serr == nil) || errors.Is(werr, errQueryProtocol) != errors.Is(serr, errQueryProtocol) {
			t.Fatalf("split read %q (%v), whole %q (%v)", split, serr, whole, werr)
		}
		if werr != nil && !errors.Is(werr, io.EOF) && !errors.Is(werr, errQueryProtocol) {
			t.Fatalf("error %v", werr)
		}
	})
}
