package myredis

import (
	"errors"
	"net"
	"strconv"
)

// redcon grows its read buffer for whatever bulk length a client announces. The
// guard sits between the socket and redcon, follows the RESP framing byte by byte
// (skipping payloads in one step) and refuses what Redis refuses before any buffer
// is grown: a bulk length over proto-max-bulk-len, a multibulk count over INT_MAX,
// and header or inline lines over 64 KiB. The client gets Redis's error and is
// closed; the commands before the bad one still run.

const maxInlineLen = 64 * 1024

var errGuardClosed = errors.New("protocol error")

type guardListener struct {
	net.Listener
	maxBulk int64
}

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &guardConn{Conn: c, g: respGuard{maxBulk: l.maxBulk}}, nil
}

type guardConn struct {
	net.Conn
	g       respGuard
	pending string // error to send at the next Read
}

func (c *guardConn) Read(p []byte) (int, error) {
	if c.pending != "" {
		c.Conn.Write([]byte("-" + c.pending + "\r\n"))
		return 0, errGuardClosed
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if ok, msg := c.g.feed(p[:n]); !ok {
			c.pending = msg
			if cut := c.g.cmdStart; cut > 0 {
				return cut, nil
			}
			c.Conn.Write([]byte("-" + msg + "\r\n"))
			return 0, errGuardClosed
		}
	}
	return n, err
}

// guard states
const (
	gStart     = iota // at the first byte of a request
	gInline           // inside an inline request line
	gCount            // inside "*<count>\r\n"
	gBulkStart        // expecting '$'
	gBulkLen          // inside "$<len>\r\n"
	gPayload          // skipping a payload and its CRLF
	gBlind            // framing lost: redcon reports the error
)

// respGuard tracks RESP framing across reads.
type respGuard struct {
	maxBulk  int64
	state    int
	line     []byte // digits of the current header line
	lineLen  int    // bytes of the current inline line
	left     int64  // multibulk arguments left
	skip     int64  // payload bytes (plus CRLF) left
	cmdStart int    // offset in the last fed chunk where the current request began
}

// feed scans b and reports false with Redis's error text at the first violation.
func (g *respGuard) feed(b []byte) (bool, string) {
	g.cmdStart = 0
	for i := 0; i < len(b); i++ {
		switch g.state {
		case gBlind:
			return true, ""
		case gStart:
			g.cmdStart = i
			if b[i] == '*' {
				g.state, g.line = gCount, g.line[:0]
			} else {
				g.state, g.lineLen = gInline, 0
				i--
			}
		case gInline:
			for ; i < len(b) && b[i] != '\n'; i++ {
				g.lineLen++
			}
			if g.lineLen > maxInlineLen {
				return false, msgProtoBigInline
			}
			if i < len(b) {
				g.state = gStart
			}
		case gCount, gBulkLen:
			if b[i] != '\n' {
				if len(g.line) > maxInlineLen {
					return false, msgProtoBigInline
				}
				g.line = append(g.line, b[i])
				continue
			}
			n, err := strconv.ParseInt(string(trimCR(g.line)), 10, 64)
			if g.state == gCount {
				if err != nil || n > 1<<31-1 {
					return false, msgProtoInvalidMulti
				}
				g.left = n
				g.state = gBulkStart
				if n <= 0 {
					g.state = gStart
				}
				continue
			}
			if err != nil || n < 0 || n > g.maxBulk {
				return false, msgProtoInvalidBulk
			}
			g.skip, g.state = n+2, gPayload
		case gBulkStart:
			if b[i] != '$' {
				g.state = gBlind
				return true, ""
			}
			g.state, g.line = gBulkLen, g.line[:0]
		case gPayload:
			step := min(g.skip, int64(len(b)-i))
			g.skip -= step
			i += int(step) - 1
			if g.skip == 0 {
				g.left--
				g.state = gBulkStart
				if g.left == 0 {
					g.state = gStart
				}
			}
		}
	}
	return true, ""
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}
