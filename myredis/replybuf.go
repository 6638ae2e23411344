package myredis

import "github.com/tidwall/redcon"

// Reply buffers after a big reply. A client that once read a 50 MB value must not
// hold 50 MB (twice: our reply buffer and redcon's write buffer) for as long as it
// stays connected. Redis frees its reply list once written and keeps only a 16 KB
// buffer; so do we:
//
//   - a reply of replyDirectMin bytes or more is written straight to the socket
//     instead of being copied into redcon's write buffer (which never shrinks);
//   - a reply buffer that grew past replyKeepMax is dropped once written, so the
//     next batch starts with a small one.

const (
	replyDirectMin = 64 << 10
	replyKeepMax   = 16 << 10
)

// writeReply sends w's bytes for the connection goroutine and resets w, dropping
// it if it grew big. direct says nothing was handed to redcon's buffer earlier in
// this handler call, so writing to the socket keeps the replies in order.
// Runs on the connection goroutine.
func writeReply(conn redcon.Conn, w *Writer, direct bool) {
	b := w.Bytes()
	if nc := conn.NetConn(); direct && nc != nil && len(b) >= replyDirectMin {
		if _, err := nc.Write(b); err != nil {
			conn.Close()
		}
	} else {
		conn.WriteRaw(b)
	}
	if cap(w.b) > replyKeepMax {
		w.b = nil
	} else {
		w.Reset()
	}
}
