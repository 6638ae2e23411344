package myredis

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Start-up replay of the append-only file.
//
// The file may begin with an RDB payload (aof_preamble.go); after it, it is a sequence of RESP arrays of bulk strings. Each is run as a command by
// an internal client, with s.loading set (nothing expires while loading: the file
// holds the DELs of the keys that did expire). Two kinds of damage are told apart:
//
//   - the file ends inside a command, or inside MULTI ... EXEC: a crash cut the last
//     write. The partial command (or transaction) is cut off the file with a warning
//     and start-up goes on, as Redis does with aof-load-truncated yes.
//   - anything else that is not a well-formed command (a bad byte, an unknown command)
//     stops start-up with an error naming the offset. The file is left as it is.

// loadStats describes a finished load.
type loadStats struct {
	keys     int // loaded from the RDB preamble (aof_preamble.go)
	commands int64
	size     int64 // the file's size after the load (after a cut, if any)
}

// errTruncated marks a command cut short by the end of the file.
var errTruncated = errors.New("unexpected end of file")

// errAnnotation is respReader.header's "an annotation line, skipped".
var errAnnotation = errors.New("annotation")

// aofCorrupt is a load failure that names where the file is damaged.
type aofCorrupt struct {
	path   string
	offset int64
	what   string
}

func (e *aofCorrupt) Error() string {
	return fmt.Sprintf("aof: bad file format reading %s at offset %d: %s; "+
		"the file was not modified: repair it (or move it away) and start again",
		e.path, e.offset, e.what)
}

// load replays the file and cuts a torn tail off it. Runs on the executor, with
// s.loading set.
func (a *aof) load() (loadStats, error) {
	if _, err := os.Stat(a.path); errors.Is(err, os.ErrNotExist) {
		return loadStats{}, nil
	}
	st, cut, err := a.replay(a.path)
	if err != nil || cut < 0 {
		return st, err
	}
	a.s.log.Warn("aof ends inside a command (a crash during a write?): cutting off the incomplete tail",
		"path", a.path, "offset", cut, "bytes_cut", st.size-cut)
	if err := os.Truncate(a.path, cut); err != nil {
		return st, fmt.Errorf("aof: cutting the incomplete tail: %w", err)
	}
	st.size = cut
	return st, nil
}

// replay runs the file at path: its RDB preamble if any, then its commands, each
// file with a client of its own (in database 0 at the start), as Redis loads each
// of its files. cut is where a torn tail starts (a command or MULTI ... EXEC the
// end of the file cut short), -1 when there is none; the file is not changed.
// Runs on the executor, with s.loading set.
func (a *aof) replay(path string) (st loadStats, cut int64, err error) {
	cut = -1
	f, err := os.Open(path)
	if err != nil {
		return st, cut, fmt.Errorf("aof: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return st, cut, fmt.Errorf("aof: %w", err)
	}

	keys, start, err := a.loadPreamble(f, path, info.Size())
	if err != nil {
		return st, cut, err
	}
	st.keys = keys
	c := newClient(a.s, nil)
	c.authed = true
	c.user = superuser // the AOF is replayed whatever the ACL rules (acl_server.go)
	var w Writer
	rest := io.NewSectionReader(f, start, info.Size()-start)
	r := &respReader{r: bufio.NewReaderSize(rest, 1<<20), off: start, max: a.s.cfg.ProtoMaxBulkLen, size: info.Size()}
	multiAt := int64(-1) // offset of an open MULTI
	for {
		at := r.off
		args, err := r.command()
		if err == io.EOF {
			break
		}
		if errors.Is(err, errTruncated) {
			if next := nextCommandStart(f, at, info.Size()); next >= 0 {
				return st, cut, &aofCorrupt{path, at, fmt.Sprintf(
					"the command runs past the end of the file, yet another command starts at offset %d "+
						"(a damaged length, not a write cut short)", next)}
			}
			cut = at
			break
		}
		if err != nil {
			return st, cut, &aofCorrupt{path, r.errAt, err.Error()}
		}
		if a.s.table.lookup(args[0]) == nil {
			return st, cut, &aofCorrupt{path, at, fmt.Sprintf("unknown command '%s'", args[0])}
		}
		switch {
		case eqFold(args[0], "multi"):
			multiAt = at
		case eqFold(args[0], "exec"):
			multiAt = -1
		}
		a.s.callInternal(c, args, &w, "the AOF loading client") // stats.go
		st.commands++
		if eqFold(args[0], "select") && c.multi == nil && len(w.Bytes()) > 0 && w.Bytes()[0] == '-' {
			return st, cut, fmt.Errorf("aof: %s at offset %d: SELECT %s failed: the file was written with more "+
				"databases than --databases %d allows", path, at, args[1], a.s.cfg.Databases)
		}
	}
	if multiAt >= 0 && (cut < 0 || multiAt < cut) {
		cut = multiAt // an unfinished transaction counts as torn: none of it applies
	}
	st.size = info.Size()
	return st, cut, nil
}

// nextCommandStart looks in f[from:size] for what looks like the start of a later
// command ("\n*<digits>\r\n$") and returns the offset of its '*', or -1. A crash
// leaves a prefix of one command at the end of the file; a command after it means a
// damaged length made the reader overshoot, and cutting there would throw away
// good commands. (A value that itself holds RESP text can look like a command: then
// start-up stops, which loses nothing.)
func nextCommandStart(f *os.File, from, size int64) int64 {
	r := bufio.NewReaderSize(io.NewSectionReader(f, from, size-from), 1<<16)
	const (
		scan   = iota // looking for '\n'
		nl            // after '\n': want '*'
		star          // after '*': want a digit
		digits        // want digits or '\r'
		cr            // want '\n'
		crlf          // want '$'
	)
	state, start := scan, int64(-1)
	reset := func(b byte) {
		if b == '\n' {
			state = nl
		} else {
			state = scan
		}
	}
	for off := from; ; off++ {
		b, err := r.ReadByte()
		if err != nil {
			return -1
		}
		switch state {
		case scan:
			reset(b)
		case nl:
			if b == '*' {
				state, start = star, off
			} else {
				reset(b)
			}
		case star, digits:
			switch {
			case b >= '0' && b <= '9':
				state = digits
			case b == '\r' && state == digits:
				state = cr
			default:
				reset(b)
			}
		case cr:
			if b == '\n' {
				state = crlf
			} else {
				reset(b)
			}
		case crlf:
			switch b {
			case '$':
				return start
			case '*':
				state, start = star, off
			default:
				reset(b)
			}
		}
	}
}

// respReader reads RESP arrays of bulk strings and counts the offset.
type respReader struct {
	r     *bufio.Reader
	off   int64 // offset of the next unread byte
	errAt int64 // offset of the last format error
	max   int64 // largest bulk length accepted
	size  int64 // the file's size: a bulk string that would end past it is cut short
}

// command reads one command. It returns io.EOF at a clean end, an error wrapping
// errTruncated when the input ends inside the command, or a format error. Lines
// starting with '#' before a command are annotations (Redis 7 writes "#TS:<unix
// time>" ones with aof-timestamp-enabled yes) and are skipped, as Redis's loader
// skips them; one the file ends inside counts as a torn tail.
func (rd *respReader) command() ([][]byte, error) {
	n, err := rd.header('*')
	for err == errAnnotation {
		n, err = rd.header('*')
	}
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, rd.bad(rd.off, "empty command")
	}
	args := make([][]byte, 0, min(n, 1024))
	for range n {
		size, err := rd.header('$')
		if errors.Is(err, io.EOF) {
			return nil, errTruncated
		}
		if err != nil {
			return nil, err
		}
		if size < 0 || size > rd.max {
			return nil, rd.bad(rd.off, "invalid bulk length")
		}
		if rd.off+size+2 > rd.size {
			return nil, errTruncated // without allocating what a damaged length asks for
		}
		arg := make([]byte, size+2)
		k, err := io.ReadFull(rd.r, arg)
		rd.off += int64(k)
		if err != nil {
			return nil, errTruncated
		}
		if arg[size] != '\r' || arg[size+1] != '\n' {
			return nil, rd.bad(rd.off-2, "bulk string not followed by CRLF")
		}
		args = append(args, arg[:size:size])
	}
	return args, nil
}

// header reads "<kind><integer>\r\n". A clean EOF before its first byte is io.EOF.
func (rd *respReader) header(kind byte) (int64, error) {
	start := rd.off
	line, err := rd.r.ReadSlice('\n')
	rd.off += int64(len(line))
	if err == bufio.ErrBufferFull {
		return 0, rd.bad(start, "line too long")
	}
	if kind == '*' && len(line) > 0 && line[0] == '#' {
		if err != nil {
			return 0, errTruncated
		}
		return 0, errAnnotation
	}
	if err != nil { // io.EOF
		switch {
		case len(line) == 0 && kind == '*':
			return 0, io.EOF
		case len(line) > 0 && line[0] != kind:
			return 0, rd.bad(start, fmt.Sprintf("expected '%c', got %q", kind, line[0]))
		}
		return 0, errTruncated
	}
	if line[0] != kind {
		return 0, rd.bad(start, fmt.Sprintf("expected '%c', got %q", kind, line[0]))
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return 0, rd.bad(start, "line not ended by CRLF")
	}
	n, err := strconv.ParseInt(string(line[1:len(line)-2]), 10, 64)
	if err != nil {
		return 0, rd.bad(start+1, "invalid length")
	}
	return n, nil
}

func (rd *respReader) bad(at int64, what string) error {
	rd.errAt = at
	return errors.New(what)
}
