package myredis

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
)

// The query buffer. Each connection reads its requests into one buffer, as
// Redis's client->querybuf, and gives memory back the way Redis's
// clientsCronResizeQueryBuffer does (redcon's reader, used before, kept the
// biggest buffer it ever grew for the connection's life: a client that once sent
// a 100 MB MSET held 100 MB while it idled):
//
//   - a buffer wasting more than qbufWasteMin is trimmed to its content when the
//     client has read nothing for more than two seconds (an empty one is freed:
//     the idle read waits in a few bytes inside the connection's structure);
//   - a buffer bigger than qbufResizeMin and more than twice the recent peak is
//     cut down to that peak (or to the request being read, if bigger). The peak
//     starts again from what the buffer holds at every check (each cron tick).
//
// The buffer belongs to the connection goroutine. An idle client's goroutine sits
// in a read that holds the buffer, so the cron (its own goroutine) asks it to let
// go by a read deadline in the past (trimAsk); the reader trims and reads again.
//
// The guard (protoguard.go) hands this reader canonical RESP only: "*N\r\n" and N
// times "$L\r\n<L bytes>\r\n". Requests are parsed here (parseRequest), each
// copied out whole (redcon.Command's Raw) so that the buffer can be reused and
// resized while commands keep their arguments.

const (
	// qbufFirst is a new buffer's size. Redis starts at PROTO_IOBUF_LEN (16 KiB);
	// most clients' requests fit in far less (and the buffer counts in
	// used_memory, which maxmemory evicts keys for), so the buffer starts small
	// and doubles each time a read fills it.
	qbufFirst     = 1 << 10
	qbufResizeMin = 32 << 10 // PROTO_RESIZE_THRESHOLD
	qbufWasteMin  = 4 << 10  // a buffer with less free space is left alone
	qbufIdleAfter = 2 * time.Second
	qbufIdleArea  = 256 // where an idle client's next bytes land, without a buffer
)

// errQueryProtocol: the bytes were not the guard's canonical RESP.
var errQueryProtocol = errors.New(msgProtoInvalidMulti[len("ERR "):])

// queryBuf is a connection's query buffer and request parser.
type queryBuf struct {
	nc    net.Conn       // the socket, behind its protocol guard
	epoch *atomic.Uint64 // the server's cron ticks: the peak rule runs once per tick

	// connection goroutine only
	buf   []byte // buf[from:end] is held, buf[pos:end] not parsed yet
	from  int    // the first byte of the batch running now (Redis keeps it until the batch ends)
	pos   int
	end   int
	need  int // bytes the request at pos needs at least, 0 if unknown
	peak  int // the most bytes held since the last check (querybuf_peak)
	seen  uint64
	inIdl bool // buf is idleArea: the buffer was freed
	marks []int
	area  [qbufIdleArea]byte

	// shared with the cron and CLIENT LIST
	held  atomic.Int64  // end-from: the batch running or waiting to run, and what follows it
	ran   atomic.Int64  // bytes of the batch the executor has run (set as it ends; 0 from the next read)
	size  atomic.Int64  // the buffer's allocation: qbuf + qbuf-free
	reads atomic.Uint64 // reads that returned bytes
	mu    sync.Mutex    // orders parked against trimAsk
	// parked: the reader waits in a read (under mu); asked: the cron set a
	// past read deadline to make it trim (under mu)
	parked, asked bool

	// cron goroutine only
	cronReads uint64
	cronSeen  time.Time // when reads last moved
}

func (q *queryBuf) init(nc net.Conn, epoch *atomic.Uint64) {
	q.nc, q.epoch = nc, epoch
	q.seen = epoch.Load()
	q.useIdleArea()
}

// useIdleArea frees the buffer: the next read lands in area.
func (q *queryBuf) useIdleArea() {
	q.buf, q.inIdl = q.area[:], true
	q.from, q.pos, q.end = 0, 0, 0
	q.size.Store(0)
	q.held.Store(0)
}

// readBatch appends the complete requests the buffer holds to cmds, reading
// the socket until there is at least one. Connection goroutine.
func (q *queryBuf) readBatch(cmds []redcon.Command) ([]redcon.Command, error) {
	q.from = q.pos // the last batch has run: its bytes can go
	q.held.Store(int64(q.end - q.from))
	q.ran.Store(0)
	for {
		if q.need == 0 || q.end-q.pos >= q.need {
			var err error
			if cmds, err = q.parse(cmds); err != nil || len(cmds) > 0 {
				q.held.Store(int64(q.end - q.from))
				return cmds, err
			}
		}
		if err := q.fill(); err != nil {
			return cmds, err
		}
	}
}

// parse appends the complete requests at pos to cmds: each request's bytes are
// copied (its Raw), the arguments of all of them share one slice. marks holds,
// per request, its start, its end, its argument count and each argument's
// bounds. Connection goroutine.
func (q *queryBuf) parse(cmds []redcon.Command) ([]redcon.Command, error) {
	marks := q.marks[:0]
	defer func() { q.marks = marks[:0] }()
	p, nargs := q.pos, 0
	for p < q.end {
		h := len(marks)
		marks = append(marks, p, 0, 0)
		n, need, m, err := parseRequest(q.buf[p:q.end], p, marks)
		marks = m
		if err != nil {
			if p > q.pos { // the requests before it run first; the next parse fails
				marks = marks[:h]
				break
			}
			return cmds, err
		}
		if n == 0 {
			marks = marks[:h]
			q.need = need
			break
		}
		k := (len(marks) - h - 3) / 2
		marks[h+1], marks[h+2] = p+n, k
		nargs += k
		p += n
		q.need = 0
	}
	if p == q.pos {
		return cmds, nil
	}
	// A big request alone in the buffer becomes its own Raw, and the client
	// starts again without a buffer: no copy, nothing kept (Redis likewise
	// makes a big argument of the query buffer itself).
	handOver := len(marks) == 3+2*nargs && marks[0] == 0 && p == q.end && p >= qbufResizeMin && !q.inIdl
	args := make([][]byte, nargs)
	for i := 0; i < len(marks); {
		start, stop, k := marks[i], marks[i+1], marks[i+2]
		i += 3
		var raw []byte
		if handOver {
			raw = q.buf[:stop:stop]
		} else {
			raw = append([]byte(nil), q.buf[start:stop]...)
		}
		a := args[:k:k]
		args = args[k:]
		for j := range a {
			s, e := marks[i]-start, marks[i+1]-start
			a[j] = raw[s:e:e]
			i += 2
		}
		cmds = append(cmds, redcon.Command{Raw: raw, Args: a})
	}
	q.pos = p
	if handOver {
		q.useIdleArea()
	}
	return cmds, nil
}

// fill reads more bytes, after the trims that are due. Connection goroutine.
func (q *queryBuf) fill() error {
	if e := q.epoch.Load(); e != q.seen {
		q.seen = e
		q.peakCheck()
	}
	q.makeRoom()
	for {
		q.mu.Lock()
		q.parked = true
		q.mu.Unlock()
		n, err := q.nc.Read(q.buf[q.end:cap(q.buf)])
		q.mu.Lock()
		q.parked = false
		asked := q.asked
		q.asked = false
		q.mu.Unlock()
		if asked {
			q.nc.SetReadDeadline(time.Time{})
			if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				q.trimIdle()
				q.makeRoom()
				continue
			}
		}
		if n > 0 {
			q.end += n
			q.reads.Add(1)
			q.peak = max(q.peak, q.end-q.from)
			q.held.Store(int64(q.end - q.from))
			return nil
		}
		if err == nil {
			continue
		}
		return err
	}
}

// makeRoom moves the bytes held to the front and, when the buffer is full,
// doubles it. It never grows past what the request being read needs, as far as
// its headers tell, and never more than twice what was received: an announced
// bulk of 512 MB takes no memory until its bytes come (unlike Redis 7.0's
// exact-size hint). Connection goroutine.
func (q *queryBuf) makeRoom() {
	held := q.end - q.from
	if q.from > 0 {
		copy(q.buf, q.buf[q.from:q.end])
		q.pos -= q.from
		q.end, q.from = held, 0
	}
	if q.end < cap(q.buf) && !(q.inIdl && q.end > 0) {
		return // (the idle area only waits: a request under way gets a buffer)
	}
	size := qbufFirst
	if !q.inIdl { // the idle area is not a buffer to double
		size = max(2*cap(q.buf), qbufFirst)
	}
	if q.need > 0 { // bytes the request at pos still lacks
		size = max(min(size, q.pos+q.need), q.end+1)
	}
	q.resize(size)
}

// resize moves the bytes held into a buffer of size bytes (size >= end).
func (q *queryBuf) resize(size int) {
	old := cap(q.buf)
	if q.inIdl {
		old = 0
	}
	nb := make([]byte, size)
	copy(nb, q.buf[:q.end])
	q.buf, q.inIdl = nb, false
	q.size.Store(int64(size))
	if old >= replyReleaseMin && size < old {
		releaseMemorySoon() // replybuf.go: give a big buffer back to the OS
	}
}

// trimIdle is the idle rule: drop the free space, all of it when nothing is held.
// Connection goroutine, after the cron asked.
func (q *queryBuf) trimIdle() {
	held := q.end - q.from
	if q.inIdl || cap(q.buf)-held <= qbufWasteMin {
		return
	}
	old := cap(q.buf)
	if held == 0 {
		q.useIdleArea()
	} else {
		nb := make([]byte, held)
		copy(nb, q.buf[q.from:q.end])
		q.buf = nb
		q.pos -= q.from
		q.from, q.end = 0, held
		q.size.Store(int64(held))
	}
	if old >= replyReleaseMin {
		releaseMemorySoon()
	}
}

// peakCheck is the peak rule, once per cron tick, then the peak starts again
// from what is held (or the size of the request being read). Connection goroutine.
func (q *queryBuf) peakCheck() {
	held := q.end - q.from
	size := cap(q.buf)
	bulk := 0 // the request being read, as far as its headers tell
	if q.need > 0 {
		bulk = q.pos + q.need - q.from
	}
	if keep := max(held, q.peak, bulk); !q.inIdl && size-held > qbufWasteMin && size > qbufResizeMin && size/2 > q.peak && keep < size {
		if q.from > 0 {
			copy(q.buf, q.buf[q.from:q.end])
			q.pos -= q.from
			q.end, q.from = held, 0
		}
		q.resize(keep)
	}
	q.peak = min(max(held, bulk), size) // the peak a buffer of this size can see
}

// trimAsk is the cron's part of the idle rule: a client that has read nothing
// for qbufIdleAfter while its buffer wastes space is woken from its read to trim
// it. now is the cron's time. Cron goroutine.
func (q *queryBuf) trimAsk(now time.Time) {
	if r := q.reads.Load(); r != q.cronReads || q.cronSeen.IsZero() {
		q.cronReads, q.cronSeen = r, now
		return
	}
	if now.Sub(q.cronSeen) <= qbufIdleAfter || q.size.Load()-q.held.Load() <= qbufWasteMin {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.parked && !q.asked {
		q.asked = true
		q.nc.SetReadDeadline(time.Unix(1, 0))
	}
}

// queued is CLIENT LIST's qbuf: the bytes held, but not the requests a batch
// already ran, which Redis cuts off its query buffer once it has run them.
func (q *queryBuf) queued() int64 { return max(q.held.Load()-q.ran.Load(), 0) }

// free is qbuf-free: the room left in the buffer.
func (q *queryBuf) free() int64 { return max(q.size.Load()-q.queued(), 0) }

// parseRequest parses one request of canonical RESP at the start of b, as the
// guard emits it, appending each argument's bounds (offsets in b, plus base)
// to marks. n is the request's length, 0 while b holds only part of it; need
// is then the length it has at least, as far as its headers tell.
func parseRequest(b []byte, base int, marks []int) (n, need int, _ []int, err error) {
	count, i, ok := parseHeader(b, 0, '*')
	if !ok {
		return 0, 0, marks, errQueryProtocol
	}
	if i == 0 {
		return 0, 0, marks, nil
	}
	if count <= 0 {
		return 0, 0, marks, errQueryProtocol
	}
	mark := len(marks)
	for ; count > 0; count-- {
		l, j, ok := parseHeader(b, i, '$')
		if !ok || l < 0 {
			return 0, 0, marks[:mark], errQueryProtocol
		}
		if j == 0 {
			return 0, 0, marks[:mark], nil
		}
		if l > int64(len(b)-j)-2 {
			if l > int64(maxInt-j-2) {
				return 0, 0, marks[:mark], errQueryProtocol
			}
			return 0, j + int(l) + 2, marks[:mark], nil
		}
		end := j + int(l)
		if b[end] != '\r' || b[end+1] != '\n' {
			return 0, 0, marks[:mark], errQueryProtocol
		}
		marks = append(marks, base+j, base+end)
		i = end + 2
	}
	return i, 0, marks, nil
}

const maxInt = int(^uint(0) >> 1)

// parseHeader reads "<kind><integer>\r\n" at b[i:]. next is the offset after it,
// 0 when the line is not complete yet; ok is false when it is not such a line.
func parseHeader(b []byte, i int, kind byte) (v int64, next int, ok bool) {
	if i >= len(b) {
		return 0, 0, true
	}
	if b[i] != kind {
		return 0, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		if b[j] != '\r' {
			if j-i > 21 { // no integer is that long
				return 0, 0, false
			}
			continue
		}
		if j+1 == len(b) {
			return 0, 0, true
		}
		if b[j+1] != '\n' {
			return 0, 0, false
		}
		v, ok := parseRedisInt(b[i+1 : j])
		return v, j + 2, ok
	}
	return 0, 0, true
}

// queryBufCron starts a new tick for the peak rule and asks the clients idle
// for long enough to trim their buffers. Cron goroutine (clientsCron).
func (s *Server) queryBufCron(now time.Time) {
	s.qbufEpoch.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		if c.qb != nil {
			c.qb.trimAsk(now)
		}
	}
}
