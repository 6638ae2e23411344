package myredis

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzReadReplCommand: the master's stream parser never panics, its spans
// stay inside the bytes read, and a well-formed command reads back whole.
func FuzzReadReplCommand(f *testing.F) {
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"))
	f.Add([]byte("\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("PING\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"))
	f.Add([]byte("*1\r\n$-1\r\n"))
	f.Add([]byte("*99999999999\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		raw, cmds, _ := readReplBatch(br, 1<<20)
		if len(raw) > len(data) {
			t.Fatalf("read %d bytes of %d", len(raw), len(data))
		}
		if !bytes.HasPrefix(data, raw) {
			t.Fatalf("raw is not the stream's prefix")
		}
		for _, c := range cmds {
			for _, sp := range c.args {
				if sp[0] < 0 || sp[1] > len(raw) || sp[0] > sp[1] {
					t.Fatalf("span %v outside %d bytes", sp, len(raw))
				}
			}
		}
	})
}

func TestReadReplBatch(t *testing.T) {
	stream := appendCommand(nil, bargs("SET", "k", "v")) // two commands and a keep-alive newline
	stream = append(stream, '\n')
	stream = appendCommand(stream, bargs("REPLCONF", "GETACK", "*"))
	raw, cmds, err := readReplBatch(bufio.NewReader(bytes.NewReader(stream)), 1<<20)
	if err != nil || len(cmds) != 2 || len(raw) != len(stream) {
		t.Fatalf("got %d commands, %d bytes, %v", len(cmds), len(raw), err)
	}
	if got := string(raw[cmds[1].args[1][0]:cmds[1].args[1][1]]); got != "GETACK" {
		t.Fatalf("second command's argument: %q", got)
	}
}
