package myredis

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/redcon"
)

// Writer appends RESP2 replies to a byte slice. The executor writes every reply of a
// batch into the connection's Writer; the connection goroutine sends the bytes.
type Writer struct {
	b     []byte
	resp3 bool // RESP3 forms (HELLO 3); see Map, Set, Double
}

// Bytes returns what has been written so far.
func (w *Writer) Bytes() []byte { return w.b }

// Reset empties the writer, keeping its buffer.
func (w *Writer) Reset() { w.b = w.b[:0] }

// Len is the number of bytes written so far.
func (w *Writer) Len() int { return len(w.b) }

// Truncate drops everything written after byte n.
func (w *Writer) Truncate(n int) { w.b = w.b[:n] }

func (w *Writer) OK()                 { w.b = append(w.b, "+OK\r\n"...) }
func (w *Writer) Simple(s string)     { w.b = redcon.AppendString(w.b, s) }
func (w *Writer) Error(msg string)    { w.b = redcon.AppendError(w.b, msg) }
func (w *Writer) Int(n int64)         { w.b = redcon.AppendInt(w.b, n) }
func (w *Writer) Bulk(b []byte)       { w.b = redcon.AppendBulk(w.b, b) }
func (w *Writer) BulkString(s string) { w.b = redcon.AppendBulkString(w.b, s) }
func (w *Writer) Array(n int)         { w.b = redcon.AppendArray(w.b, n) }

// Null writes a null bulk string (RESP3: null).
func (w *Writer) Null() {
	if w.resp3 {
		w.b = append(w.b, "_\r\n"...)
		return
	}
	w.b = append(w.b, "$-1\r\n"...)
}

// NullArray writes a null array (RESP3: null).
func (w *Writer) NullArray() {
	if w.resp3 {
		w.b = append(w.b, "_\r\n"...)
		return
	}
	w.b = append(w.b, "*-1\r\n"...)
}
func (w *Writer) Raw(b []byte) { w.b = append(w.b, b...) }

// Errorf writes a formatted error. String arguments stop at a NUL byte, as C's
// "%s" does in Redis's error replies.
func (w *Writer) Errorf(f string, a ...any) {
	for i, v := range a {
		if s, ok := v.(string); ok {
			if j := strings.IndexByte(s, 0); j >= 0 {
				a[i] = s[:j]
			}
		}
	}
	w.Error(fmt.Sprintf(f, a...))
}

// Bool writes 1 or 0.
func (w *Writer) Bool(v bool) {
	if v {
		w.b = append(w.b, ":1\r\n"...)
	} else {
		w.b = append(w.b, ":0\r\n"...)
	}
}

// BulkInt writes an integer as a bulk string.
func (w *Writer) BulkInt(n int64) {
	var buf [24]byte
	w.Bulk(strconv.AppendInt(buf[:0], n, 10))
}

// BulkStrings writes an array of bulk strings.
func (w *Writer) BulkStrings(items []string) {
	w.Array(len(items))
	for _, s := range items {
		w.BulkString(s)
	}
}

// The reply shapes below have a RESP3 type of their own. Handlers use them wherever
// Redis 7.0 replies with a map, a set, a double, a verbatim string, a boolean or a
// push, so that a client that said HELLO 3 gets the RESP3 type. Until the connection
// layer switches a Writer to RESP3 (resp3 true), each writes its RESP2 form.

// Map starts a map of n key/value pairs (RESP2: an array of 2n elements).
func (w *Writer) Map(n int) {
	if w.resp3 {
		w.b = append(append(append(w.b, '%'), strconv.Itoa(n)...), "\r\n"...)
		return
	}
	w.Array(2 * n)
}

// Set starts a set of n elements (RESP2: an array).
func (w *Writer) Set(n int) {
	if w.resp3 {
		w.b = append(append(append(w.b, '~'), strconv.Itoa(n)...), "\r\n"...)
		return
	}
	w.Array(n)
}

// Push starts an out-of-band push of n elements (RESP2: an array).
func (w *Writer) Push(n int) {
	if w.resp3 {
		w.b = append(append(append(w.b, '>'), strconv.Itoa(n)...), "\r\n"...)
		return
	}
	w.Array(n)
}

// Double writes a floating-point number: a RESP3 double, or in RESP2 a bulk string
// formatted as Redis 7.0 formats scores (%.17g, "inf", "-inf").
func (w *Writer) Double(f float64) {
	var buf [32]byte
	if w.resp3 {
		w.b = append(append(append(w.b, ','), appendScore(buf[:0], f)...), "\r\n"...)
		return
	}
	w.Bulk(appendScore(buf[:0], f))
}

// Verbatim writes a verbatim string of format "txt" (INFO, CLIENT INFO...), a bulk
// string in RESP2.
func (w *Writer) Verbatim(s string) {
	if w.resp3 {
		w.b = append(append(append(w.b, '='), strconv.Itoa(len(s)+4)...), "\r\ntxt:"...)
		w.b = append(append(w.b, s...), "\r\n"...)
		return
	}
	w.BulkString(s)
}

// VerbatimAs writes a verbatim string of a script's format ({verbatim_string=...}),
// a bulk string in RESP2. The format is three bytes, as Redis's addReplyVerbatim
// takes them: a longer one is cut, a shorter one padded with blanks.
func (w *Writer) VerbatimAs(format, s string) {
	if w.resp3 {
		w.b = append(append(append(w.b, '='), strconv.Itoa(len(s)+4)...), "\r\n"...)
		for i := range 3 {
			if i < len(format) && format[i] != 0 { // Redis reads a C string: NUL ends it
				w.b = append(w.b, format[i])
				continue
			}
			format = ""
			w.b = append(w.b, ' ')
		}
		w.b = append(append(append(w.b, ':'), s...), "\r\n"...)
		return
	}
	w.BulkString(s)
}

// BigNumber writes a RESP3 big number given as its digits (RESP2: a bulk string).
func (w *Writer) BigNumber(digits string) {
	if w.resp3 {
		w.b = append(append(append(w.b, '('), digits...), "\r\n"...)
		return
	}
	w.BulkString(digits)
}

// Boolean writes a RESP3 boolean (RESP2: the integer 1 or 0).
func (w *Writer) Boolean(v bool) {
	if w.resp3 {
		if v {
			w.b = append(w.b, "#t\r\n"...)
		} else {
			w.b = append(w.b, "#f\r\n"...)
		}
		return
	}
	w.Bool(v)
}

// RESP3 reports whether the writer writes RESP3 types.
func (w *Writer) RESP3() bool { return w.resp3 }

// SetRESP3 switches the writer between RESP2 and RESP3 forms (the connection's
// protocol, from HELLO).
func (w *Writer) SetRESP3(on bool) { w.resp3 = on }
