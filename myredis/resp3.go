package myredis

import (
	"strconv"
	"strings"
)

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

// retypeRESP3 rewrites a RESP2 reply whose RESP3 form differs only in the type of
// its aggregates: types holds, in order, the RESP3 type byte of each aggregate of
// raw ('*' array, '~' set, '%' map: half the elements as pairs). Redis's COMMAND
// INFO and DOCS entries are stored this way (commandinfo_redis.go). A types
// string that runs short leaves the rest as arrays.
func retypeRESP3(dst []byte, raw, types string) []byte {
	t := 0
	for len(raw) > 0 {
		eol := strings.Index(raw, "\r\n")
		if eol < 0 {
			return append(dst, raw...)
		}
		line := raw[:eol+2]
		raw = raw[eol+2:]
		switch line[0] {
		case '*':
			kind := byte('*')
			if t < len(types) {
				kind = types[t]
			}
			t++
			n, _ := strconv.Atoi(line[1:eol])
			if kind == '%' {
				n /= 2
			}
			dst = append(append(dst, kind), strconv.Itoa(n)...)
			dst = append(dst, '\r', '\n')
		case '$':
			dst = append(dst, line...)
			if n, err := strconv.Atoi(line[1:eol]); err == nil && n >= 0 && n+2 <= len(raw) {
				dst = append(dst, raw[:n+2]...)
				raw = raw[n+2:]
			}
		default:
			dst = append(dst, line...)
		}
	}
	return dst
}

// RetypeRESP3 is retypeRESP3 for the generator of commandinfo_redis.go.
func RetypeRESP3(raw []byte, types string) []byte { return retypeRESP3(nil, string(raw), types) }

// AggregateTypes lists the type byte of each aggregate ('*', '~', '%', '>') of a
// RESP reply in order, reading bulk payloads by their length.
func AggregateTypes(raw string) string {
	var types []byte
	for len(raw) > 0 {
		eol := strings.Index(raw, "\r\n")
		if eol < 0 {
			break
		}
		line := raw[:eol]
		raw = raw[eol+2:]
		switch line[0] {
		case '*', '~', '%', '>':
			types = append(types, line[0])
		case '$', '=':
			if n, err := strconv.Atoi(line[1:]); err == nil && n >= 0 && n+2 <= len(raw) {
				raw = raw[n+2:]
			}
		}
	}
	return string(types)
}
