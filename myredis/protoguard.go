package myredis

import (
	"bytes"
	"errors"
	"net"
	"os"
	"strconv"
	"sync/atomic"
)

// The guard sits between the socket and the query buffer (querybuf.go), whose
// parser reads canonical RESP only (redcon's, used before, did not parse as Redis
// does: it refused "*0", read inline commands differently, insisted on CRLF where
// Redis skips any two bytes). It follows the request stream byte for byte the way
// Redis's processInputBuffer does (processInlineBuffer, processMultibulkBuffer)
// and hands the query buffer the same requests in canonical RESP:
//
//   - inline commands are split as sdssplitargs splits them (quotes, \xHH escapes,
//     tabs) and re-encoded as multibulk; blank lines, "*0" and "*-1" vanish;
//   - the byte after a header's '\r' and the two bytes after a payload are taken
//     whatever they are, as Redis takes them;
//   - what Redis refuses gets Redis's "-ERR Protocol error: ..." and the connection
//     closes, after the replies to the requests before it: a bulk length over
//     proto-max-bulk-len (before any buffer grows), a multibulk count over INT_MAX,
//     header or inline lines over 64 KiB, and, while a password is required and not
//     given, more than 10 arguments or a bulk over 16 KiB;
//   - a NUL byte before a line's end stalls the request as Redis's strchr does,
//     until 64 KiB have piled up;
//   - a request of more than holdArgs arguments reaches the query buffer only once complete.
//
// Well-formed RESP passes through untouched, without a copy.

const (
	maxInlineLen   = 64 * 1024 // PROTO_INLINE_MAX_SIZE
	redisReadChunk = 16 * 1024 // PROTO_IOBUF_LEN: Redis checks line sizes after each read
	unauthMaxArgs  = 10        // more arguments need AUTH first
	unauthMaxBulk  = 16384     // bigger bulks need AUTH first
	// holdArgs: a request with more arguments is held until complete. The query
	// buffer re-parses an unfinished request's headers from its start on reads
	// that do not complete the bulk it waits for: many small arguments would cost
	// that many steps per read.
	holdArgs = 1024
)

var errGuardClosed = errors.New("protocol error")

// errQueryBufLimit closes a client whose request passed client-query-buffer-limit.
var errQueryBufLimit = errors.New("closing client that reached max query buffer length")

// liveSettings are the settings read off the executor (the guards, the accept
// callback, the active-expiry ticker); the executor updates them on CONFIG SET.
type liveSettings struct {
	maxBulk    atomic.Int64
	hasPass    atomic.Bool // the default user needs a password (acl_server.go)
	maxClients atomic.Int64
	hz         atomic.Int64
	luaLimitMs atomic.Int64 // lua-time-limit; <= 0: scripts are never busy
	keepAlive  atomic.Int64 // tcp-keepalive in seconds; 0: off
	timeout    atomic.Int64 // timeout (idle clients) in seconds; 0: none
	queryLimit atomic.Int64 // client-query-buffer-limit: one request's payload bytes (0: unset)
	// client-output-buffer-limit for the normal class (replybuf.go)
	obufHard, obufSoft, obufSoftSecs atomic.Int64
}

// overQueryLimit reports whether n bytes of one request pass client-query-buffer-limit.
func (l *liveSettings) overQueryLimit(n int64) bool {
	lim := l.queryLimit.Load()
	return lim > 0 && n > lim
}

func (l *liveSettings) set(cfg Config) {
	l.maxBulk.Store(cfg.ProtoMaxBulkLen)
	l.maxClients.Store(int64(cfg.MaxClients))
	l.hz.Store(int64(cfg.Hz))
	l.luaLimitMs.Store(cfg.luaTimeLimit())
	l.keepAlive.Store(int64(cfg.TCPKeepAlive))
	l.timeout.Store(int64(cfg.Timeout))
	l.queryLimit.Store(cfg.queryBufferLimit())
	cfg.initObuf()
	n := cfg.ObufLimits[obufNormal]
	l.obufHard.Store(int64(min(n.hard, 1<<62)))
	l.obufSoft.Store(int64(min(n.soft, 1<<62)))
	l.obufSoftSecs.Store(n.softSeconds)
}

type guardListener struct {
	net.Listener
	limits *liveSettings
	bytes  *netCounters  // INFO total_net_input_bytes / output
	order  *arrivalOrder // nil: no arrival times (TLS)
}

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	setKeepAlive(c, l.limits.keepAlive.Load())
	gc := &guardConn{Conn: l.order.wrap(c), bytes: l.bytes, fd: socketFD(c)} // order.go
	gc.g.limits = l.limits
	gc.g.authed = &gc.authed
	return gc, nil
}

// guardConn is a client socket as the query buffer reads it.
type guardConn struct {
	net.Conn
	g       respGuard
	authed  atomic.Bool // the client has authenticated; set by the executor
	out     []byte      // canonical bytes not yet handed to the query buffer
	outBuf  []byte
	held    []byte // input not parsed yet: requests wait while AUTH is pending
	failMsg string // protocol error to send once out is drained
	readErr error  // socket error to report once out is drained

	bytes *netCounters // the server's byte counts
	repl  atomic.Bool  // the client became a replica: its output is replication's (replication.go)
	// plainOut, then skipOut, are the bytes still to be written before the
	// replication data begins: the replies before SYNC (client output), then
	// the +FULLRESYNC or +CONTINUE line (counted nowhere, as in Redis)
	plainOut, skipOut atomic.Int64
	fd                int          // the socket's descriptor, for CLIENT LIST
	qbuf              atomic.Int64 // input read and not handed to the query buffer yet (CLIENT LIST's qbuf adds it)
}

// Write counts what the server sends: a replica's bytes as replication's,
// after the replies that preceded its RDB or backlog (plainOut) and the
// +FULLRESYNC or +CONTINUE line (skipOut), which Redis writes past its counters.
func (c *guardConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if !c.repl.Load() {
		c.bytes.wrote(n, false)
		return n, err
	}
	rest := int64(n)
	take := func(budget *atomic.Int64) int64 {
		k := min(rest, max(budget.Load(), 0))
		if k > 0 {
			budget.Add(-k)
			rest -= k
		}
		return k
	}
	c.bytes.out.Add(take(&c.plainOut))
	take(&c.skipOut)
	c.bytes.wrote(int(rest), true)
	return n, err
}

func (c *guardConn) Read(p []byte) (int, error) {
	n, err := c.read(p)
	c.qbuf.Store(int64(len(c.held) + len(c.out)))
	return n, err
}

func (c *guardConn) read(p []byte) (int, error) {
	for {
		if len(c.out) > 0 {
			n := copy(p, c.out)
			c.out = c.out[n:]
			if len(c.out) == 0 && cap(c.outBuf) > 1<<16 {
				c.outBuf = nil // do not keep a big value's copy for the connection's life
			}
			return n, nil
		}
		if c.failMsg != "" {
			c.Write([]byte("-" + c.failMsg + "\r\n"))
			return 0, errGuardClosed
		}
		if c.g.overLimit {
			return 0, errQueryBufLimit
		}
		if c.readErr != nil {
			return 0, c.readErr
		}
		var n int
		if len(c.held) > 0 {
			n = copy(p, c.held)
			c.held = c.held[n:]
		} else {
			var err error
			n, err = c.Conn.Read(p)
			if err != nil && n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, err // the query buffer's trim wakes the read (querybuf.go): not the end
			}
			c.bytes.read(n)
			if err != nil {
				c.readErr = err
			}
		}
		if n == 0 {
			continue
		}
		e := emitter{in: p[:n], out: c.outBuf[:0]}
		rest, msg := c.g.feed(&e)
		if rest < n {
			c.held = append(append([]byte(nil), p[rest:n]...), c.held...)
		}
		if msg != "" {
			c.failMsg = msg
		}
		if !e.slow {
			if e.idEnd > 0 {
				return e.idEnd, nil
			}
			continue
		}
		c.outBuf = e.out
		c.out = e.out
	}
}

// emitter collects the guard's output for one chunk of input. While the output
// is a prefix of the input it stays in place (idEnd); the first rewrite switches
// to a copy (slow).
type emitter struct {
	in      []byte
	idEnd   int
	slow    bool
	out     []byte
	reqMark int // output length where the current request began
	done    int // requests completed in this chunk
}

// pass emits in[from:to] unchanged.
func (e *emitter) pass(from, to int) {
	if !e.slow && from == e.idEnd {
		e.idEnd = to
		return
	}
	e.toSlow()
	e.out = append(e.out, e.in[from:to]...)
}

// lit emits bytes that are not (contiguously) in the input.
func (e *emitter) lit(b ...byte) {
	e.toSlow()
	e.out = append(e.out, b...)
}

func (e *emitter) toSlow() {
	if !e.slow {
		e.slow = true
		e.out = append(e.out[:0], e.in[:e.idEnd]...)
	}
}

func (e *emitter) len() int {
	if e.slow {
		return len(e.out)
	}
	return e.idEnd
}

// dropRequest removes the output of the current, refused request.
func (e *emitter) dropRequest() {
	if e.slow {
		e.out = e.out[:e.reqMark]
	} else {
		e.idEnd = e.reqMark
	}
}

// guard states
const (
	gStart   = iota // at the first byte of a request
	gInline         // inside an inline request line
	gCount          // inside "*<count>", looking for '\r'
	gCountLF        // the byte after the count's '\r'
	gBulkHdr        // inside "$<len>", looking for '\r'
	gBulkLF         // the byte after the bulk header's '\r'
	gPayload        // inside a bulk payload
	gTrailCR        // the first byte after a payload
	gTrailLF        // the second byte after a payload
	gStalled        // a NUL before the line end: Redis never finds the line end
)

// respGuard tracks the request stream across reads.
type respGuard struct {
	limits    *liveSettings
	authed    *atomic.Bool
	state     int
	line      []byte // the current line: inline text or header digits (after '*'/'$')
	lineLen   int    // bytes of the current line so far, its first byte included
	lineStart int    // where the current line began in this chunk, -1 if earlier
	left      int64  // arguments left in the multibulk request
	skip      int64  // payload bytes left
	stallMsg  string // error once a stalled request passes 64 KiB
	stallLen  int    // bytes of the stalled request so far
	holding   bool   // the current request is big: its bytes wait in req
	req       []byte
	reqBytes  int64 // payload bytes the current request announced so far
	overLimit bool  // the request passed client-query-buffer-limit: close, no reply
}

// pass and lit emit through the emitter, or into req while holding a request.
func (g *respGuard) pass(e *emitter, from, to int) {
	if g.holding {
		g.req = append(g.req, e.in[from:to]...)
		return
	}
	e.pass(from, to)
}

func (g *respGuard) lit(e *emitter, b ...byte) {
	if g.holding {
		g.req = append(g.req, b...)
		return
	}
	e.lit(b...)
}

// needAuth reports Redis's authRequired for the client.
func (g *respGuard) needAuth() bool {
	return g.limits != nil && g.limits.hasPass.Load() && (g.authed == nil || !g.authed.Load())
}

// feed parses e.in, emitting canonical RESP. It returns how much input it took
// (less than all when requests must wait for an AUTH before them to run) and,
// on a violation, Redis's error text.
func (g *respGuard) feed(e *emitter) (int, string) {
	in := e.in
	i := 0
	g.lineStart = -1 // a line in progress began in an earlier chunk
	fail := func(msg string) (int, string) {
		e.dropRequest()
		g.holding, g.req = false, nil
		g.state = gStalled // nothing more is parsed
		g.stallMsg = ""
		return len(in), msg
	}
	for i < len(in) {
		switch g.state {
		case gStart:
			if e.done > 0 && g.needAuth() {
				return i, "" // let the requests so far run: one may be AUTH
			}
			e.reqMark = e.len()
			g.reqBytes = 0
			g.line, g.lineLen, g.lineStart = g.line[:0], 0, i
			if in[i] == '*' {
				g.state, g.lineLen = gCount, 1
				i++
			} else {
				g.state = gInline
			}

		case gInline:
			seg := in[i:]
			nl := bytes.IndexByte(seg, '\n')
			end := len(seg)
			if nl >= 0 {
				end = nl
			}
			if nul := bytes.IndexByte(seg[:end], 0); nul >= 0 {
				g.stall(msgProtoBigInline, g.lineLen+len(seg))
				i = len(in)
				continue
			}
			g.line = append(g.line, seg[:end]...)
			g.lineLen += end
			if nl < 0 {
				i = len(in)
				continue
			}
			i += nl + 1
			if g.lineLen > maxInlineLen+redisReadChunk {
				return fail(msgProtoBigInline) // Redis gives up before it sees the '\n'
			}
			args, ok := splitInline(trimCR(g.line))
			if !ok {
				return fail(msgProtoUnbalanced)
			}
			if len(args) > 0 {
				e.lit(encodeRequest(args)...)
				e.done++
			}
			g.state = gStart

		case gCount, gBulkHdr:
			seg := in[i:]
			cr := bytes.IndexByte(seg, '\r')
			end := len(seg)
			if cr >= 0 {
				end = cr
			}
			if nul := bytes.IndexByte(seg[:end], 0); nul >= 0 {
				msg := msgProtoBigCount
				if g.state == gBulkHdr {
					msg = msgProtoBigBulkCount
				}
				g.stall(msg, g.lineLen+len(seg))
				i = len(in)
				continue
			}
			if g.lineLen+end <= maxInlineLen+redisReadChunk {
				g.line = append(g.line, seg[:end]...)
			}
			g.lineLen += end
			if cr < 0 {
				i = len(in)
				continue
			}
			i += cr + 1
			if g.state == gCount {
				g.state = gCountLF
			} else {
				g.state = gBulkLF
			}

		case gCountLF:
			if g.lineLen > maxInlineLen+redisReadChunk {
				return fail(msgProtoBigCount)
			}
			n, ok := parseRedisInt(g.line)
			if !ok || n > 1<<31-1 {
				return fail(msgProtoInvalidMulti)
			}
			if n > unauthMaxArgs && g.needAuth() {
				return fail(msgProtoUnauthMulti)
			}
			if n <= 0 {
				i++
				g.state = gStart // an empty request: Redis runs nothing
				continue
			}
			g.holding = n > holdArgs
			g.emitLine(e, '*', i)
			i++
			g.left = n
			g.startLine(gBulkHdr, i)

		case gBulkLF:
			if g.lineLen > maxInlineLen+redisReadChunk {
				return fail(msgProtoBigBulkCount)
			}
			if len(g.line) == 0 || g.line[0] != '$' {
				got := byte('\r') // the line was empty: Redis reports the '\r'
				if len(g.line) > 0 {
					got = g.line[0]
				}
				if got == '\r' || got == '\n' {
					got = ' ' // Redis blanks newlines in error texts
				}
				return fail("ERR Protocol error: expected '$', got '" + string([]byte{got}) + "'")
			}
			n, ok := parseRedisInt(g.line[1:])
			if !ok || n < 0 || n > g.limits.maxBulk.Load() {
				return fail(msgProtoInvalidBulk)
			}
			if n > unauthMaxBulk && g.needAuth() {
				return fail(msgProtoUnauthBulk)
			}
			if g.reqBytes += n; g.limits != nil && g.limits.overQueryLimit(g.reqBytes) {
				// Redis closes a client whose query buffer passes the limit, without a reply
				g.overLimit = true
				return fail("")
			}
			g.emitLine(e, 0, i)
			i++
			g.skip = n
			g.state = gPayload

		case gPayload:
			step := int(min(g.skip, int64(len(in)-i)))
			g.pass(e, i, i+step)
			i += step
			g.skip -= int64(step)
			if g.skip == 0 {
				g.state = gTrailCR
			}

		case gTrailCR, gTrailLF:
			want := byte('\r')
			if g.state == gTrailLF {
				want = '\n'
			}
			if in[i] == want {
				g.pass(e, i, i+1)
			} else {
				g.lit(e, want) // Redis skips any two bytes after a payload
			}
			i++
			if g.state == gTrailCR {
				g.state = gTrailLF
				continue
			}
			g.left--
			if g.left > 0 {
				g.startLine(gBulkHdr, i)
				continue
			}
			if g.holding {
				e.lit(g.req...)
				g.holding, g.req = false, nil
			}
			e.done++
			g.state = gStart

		case gStalled:
			g.stallLen += len(in) - i
			i = len(in)
		}
	}
	// Redis checks the size of an unfinished line after each read.
	switch {
	case g.state == gStalled && g.stallMsg != "" && g.stallLen > maxInlineLen:
		return fail(g.stallMsg)
	case g.state == gInline && g.lineLen > maxInlineLen:
		return fail(msgProtoBigInline)
	case g.state == gCount && g.lineLen > maxInlineLen:
		return fail(msgProtoBigCount)
	case g.state == gBulkHdr && g.lineLen > maxInlineLen:
		return fail(msgProtoBigBulkCount)
	}
	return len(in), ""
}

// startLine begins a header line at in[i].
func (g *respGuard) startLine(state, i int) {
	g.state, g.line, g.lineLen, g.lineStart = state, g.line[:0], 0, i
}

// emitLine emits the header line just parsed, whose '\r' is at in[lf-1] and
// whose last byte is in[lf]: unchanged when it all lies in this chunk and ends
// in CRLF, else rebuilt. prefix is the line's first byte when the line buffer
// lacks it ('*'), or 0.
func (g *respGuard) emitLine(e *emitter, prefix byte, lf int) {
	if g.lineStart >= 0 && e.in[lf] == '\n' {
		g.pass(e, g.lineStart, lf+1)
		return
	}
	if prefix != 0 {
		g.lit(e, prefix)
	}
	g.lit(e, g.line...)
	g.lit(e, '\r', '\n')
}

// stall records a request Redis will never finish reading.
func (g *respGuard) stall(msg string, n int) {
	g.state, g.stallMsg, g.stallLen = gStalled, msg, n
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// encodeRequest renders args as a RESP multibulk request.
func encodeRequest(args [][]byte) []byte {
	b := append([]byte{'*'}, strconv.Itoa(len(args))...)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// splitInline splits an inline request as Redis's sdssplitargs: blanks separate
// arguments; "..." takes \xHH, \n, \r, \t, \b, \a and \<any>; '...' takes \';
// a closing quote must be followed by a blank. ok is false for unbalanced quotes.
func splitInline(line []byte) (args [][]byte, ok bool) {
	p := 0
	isSpace := func(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' }
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p == len(line) {
			return args, true
		}
		cur := []byte{}
		inq, insq := false, false
		for done := false; !done; {
			var c byte // 0 stands for the end of the line, as the C string's NUL
			if p < len(line) {
				c = line[p]
			}
			at := func(k int) byte {
				if p+k < len(line) {
					return line[p+k]
				}
				return 0
			}
			switch {
			case inq:
				switch {
				case c == '\\' && at(1) == 'x' && isHexDigit(at(2)) && isHexDigit(at(3)):
					cur = append(cur, hexVal(at(2))<<4|hexVal(at(3)))
					p += 3
				case c == '\\' && at(1) != 0:
					p++
					switch e := line[p]; e {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, e)
					}
				case c == '"':
					if n := at(1); n != 0 && !isSpace(n) {
						return nil, false
					}
					done = true
				case c == 0:
					return nil, false
				default:
					cur = append(cur, c)
				}
			case insq:
				switch {
				case c == '\\' && at(1) == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if n := at(1); n != 0 && !isSpace(n) {
						return nil, false
					}
					done = true
				case c == 0:
					return nil, false
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if p < len(line) {
				p++
			}
		}
		args = append(args, cur)
	}
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
