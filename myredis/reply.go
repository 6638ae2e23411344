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
	b []byte
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
func (w *Writer) Null()               { w.b = append(w.b, "$-1\r\n"...) }
func (w *Writer) NullArray()          { w.b = append(w.b, "*-1\r\n"...) }
func (w *Writer) Raw(b []byte)        { w.b = append(w.b, b...) }

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
