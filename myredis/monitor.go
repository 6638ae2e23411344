package myredis

import (
	"strconv"
)

// MONITOR, as Redis 7.0: every command a client (or a script, or EXEC) runs is
// sent to each monitor as one status line,
//
//	+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
//
// after the command ran (EVAL and FCALL before, so the commands of their script
// follow them), with "lua" in place of the address for a script's commands.
// Commands refused before running (unknown, wrong arity, NOAUTH), commands queued
// by MULTI and administrative commands are not shown. Lines go through each
// monitor's outbox (outbox.go): the executor never waits for a monitor, and one
// that falls behind is disconnected by its client-output-buffer-limit (the
// normal class, as Redis counts monitors). Everything here runs on the executor.

func cmdMonitor(x *Ctx) {
	if x.inMulti || x.inScript {
		x.err(msgMonitorDenyBlocking)
		return
	}
	if x.s.isMonitor(x.c) || x.c.conn == nil {
		return // already monitoring: no reply, as Redis
	}
	x.s.pubsubState(x.c) // its outbox (pubsub.go)
	x.s.intro.monitors = append(x.s.intro.monitors, x.c)
	x.ok()
}

// isMonitor reports whether c ran MONITOR.
func (s *Server) isMonitor(c *Client) bool {
	for _, m := range s.intro.monitors {
		if m == c {
			return true
		}
	}
	return false
}

// dropMonitor stops feeding c (closed, or RESET).
func (s *Server) dropMonitor(c *Client) {
	ms := s.intro.monitors
	for i, m := range ms {
		if m == c {
			copy(ms[i:], ms[i+1:])
			ms[len(ms)-1] = nil
			s.intro.monitors = ms[:len(ms)-1]
			return
		}
	}
}

// feedMonitors sends the command of x to every monitor.
func (s *Server) feedMonitors(x *Ctx) {
	line := appendMonitorLine(nil, x, s.clock.Now().UnixMicro())
	for _, m := range s.intro.monitors {
		s.pushTo(m, line) // pubsub.go: the outbox, or the running batch's replies
	}
}

// appendMonitorLine formats x's command as Redis's replicationFeedMonitors does,
// at the time usec (microseconds since the epoch).
func appendMonitorLine(b []byte, x *Ctx, usec int64) []byte {
	b = append(b, '+')
	b = strconv.AppendInt(b, usec/1e6, 10)
	b = append(b, '.')
	frac := usec % 1e6
	for d := int64(100000); d > 1 && frac < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, frac, 10)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(x.db.id), 10)
	if x.inScript {
		b = append(b, " lua] "...)
	} else {
		b = append(b, ' ')
		b = append(b, x.peerID()...)
		b = append(b, "] "...)
	}
	for i, a := range x.loggedArgs() {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendRepr(b, a)
	}
	return append(b, "\r\n"...)
}

// appendRepr appends s quoted as Redis's sdscatrepr.
func appendRepr(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range s {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if ch < 0x20 || ch > 0x7e {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&15])
			} else {
				b = append(b, ch)
			}
		}
	}
	return append(b, '"')
}
