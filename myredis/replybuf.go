package myredis

import (
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
)

// Reply buffers after a big reply. A client that once read a 50 MB value must not
// hold 50 MB (twice: our reply buffer and redcon's write buffer) for as long as it
// stays connected. Redis frees its reply list once written and keeps only a 16 KB
// buffer; so do we:
//
//   - a reply of replyDirectMin bytes or more is written straight to the socket
//     instead of being copied into redcon's write buffer (which never shrinks);
//   - a reply buffer that grew past replyKeepMax is dropped once written, so the
//     next batch starts with a small one;
//   - when one of replyReleaseMin or more was dropped, the memory goes back to the
//     OS within a second (an idle server runs no GC that would free it, and Go
//     hands freed memory back only slowly): one debug.FreeOSMemory for all the
//     buffers dropped in that second.

const (
	replyDirectMin  = 64 << 10
	replyKeepMax    = 16 << 10
	replyReleaseMin = 4 << 20
)

// writeReply sends w's bytes for the connection goroutine and resets w, dropping
// it if it grew big. direct says nothing was handed to redcon's buffer earlier in
// this handler call, so writing to the socket keeps the replies in order.
// Runs on the connection goroutine.
func writeReply(conn redcon.Conn, w *Writer, direct bool) {
	writeReplySized(conn, w, direct, replyDirectMin)
}

// writeReplyNow is writeReply for replies that must reach the client before
// the connection waits (the batch blocked, or was postponed by CLIENT PAUSE):
// redcon's buffer is flushed only when the handler returns, so they go straight
// to the socket whatever their size.
func writeReplyNow(conn redcon.Conn, w *Writer, direct bool) {
	writeReplySized(conn, w, direct, 1)
}

func writeReplySized(conn redcon.Conn, w *Writer, direct bool, directMin int) {
	b := w.Bytes()
	if nc := conn.NetConn(); direct && nc != nil && len(b) >= directMin {
		if _, err := nc.Write(b); err != nil {
			conn.Close()
		}
	} else {
		conn.WriteRaw(b)
	}
	if cap(w.b) > replyKeepMax {
		if cap(w.b) >= replyReleaseMin {
			releaseMemorySoon()
		}
		w.b = nil
	} else {
		w.Reset()
	}
}

// overOutputLimit applies client-output-buffer-limit's normal class to a batch's
// replies, n bytes, as Redis's checkClientOutputBufferLimits: past the hard
// limit, or past the soft limit for longer than its seconds (counting from the
// first batch over it; a batch under it starts again), the client is closed
// instead of answered. 0 0 0, the default, is no limit. now is read only past
// the soft limit. Runs on the connection goroutine.
func overOutputLimit(l *liveSettings, c *Client, n int, now func() time.Time) bool {
	if l == nil {
		return false
	}
	if hard := l.obufHard.Load(); hard > 0 && int64(n) > hard {
		return true
	}
	soft := l.obufSoft.Load()
	if soft <= 0 || int64(n) <= soft {
		c.obufSoftSince = time.Time{}
		return false
	}
	if c.obufSoftSince.IsZero() {
		c.obufSoftSince = now()
		return false
	}
	return now().Sub(c.obufSoftSince) > time.Duration(l.obufSoftSecs.Load())*time.Second
}

// releaseScheduled is set while a release of memory to the OS is pending.
var releaseScheduled atomic.Bool

// releaseMemorySoon returns freed memory to the OS in a second, once for every
// call made until then. Safe on any goroutine.
func releaseMemorySoon() {
	if !releaseScheduled.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(time.Second, func() {
		releaseScheduled.Store(false)
		debug.FreeOSMemory()
	})
}
