package myredis

import "strconv"

// RESP3: each connection speaks RESP2 until HELLO 3 switches it (and HELLO 2 or
// RESET switches it back). The protocol lives in the client's Writers: handlers
// write replies through the shapes of reply.go (Map, Set, Double, Verbatim,
// Boolean, Push, Null), which write the RESP3 type or its RESP2 form.

// setProtocol switches c to RESP ver (2 or 3): its replies from now on, the
// reply of a blocked command served later, and the shape of its pushes.
// Runs on the executor.
func (c *Client) setProtocol(ver int) {
	c.resp = ver
	c.out.SetRESP3(ver == 3)
	c.blockOut.SetRESP3(ver == 3)
}

// appendPushHeader appends the header of a push of n elements in protocol resp3
// (a RESP2 array otherwise): pub/sub messages and tracking invalidations built
// once for many clients are made in both shapes.
func appendPushHeader(b []byte, n int, resp3 bool) []byte {
	if resp3 {
		b = append(b, '>')
	} else {
		b = append(b, '*')
	}
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}
