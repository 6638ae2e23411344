package myredis

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// Tests of the hash type against a model: an ordered list of field/value pairs per
// key. FuzzHash drives the real commands (on the executor, as a client would) with
// sequences decoded from the fuzzer's bytes; TestHashModel runs the seeds and a few
// thousand pseudo-random sequences in a normal test run.

// hashModel is the reference: each key's fields in insertion order.
type hashModel map[string][]modelField

type modelField struct{ field, val string }

func (m hashModel) find(key, field string) int {
	return slices.IndexFunc(m[key], func(f modelField) bool { return f.field == field })
}

func (m hashModel) set(key, field, val string) bool {
	if i := m.find(key, field); i >= 0 {
		m[key][i].val = val
		return false
	}
	m[key] = append(m[key], modelField{field, val})
	return true
}

func (m hashModel) del(key, field string) bool {
	i := m.find(key, field)
	if i < 0 {
		return false
	}
	m[key] = slices.Delete(m[key], i, i+1)
	if len(m[key]) == 0 {
		delete(m, key)
	}
	return true
}

// flat is HGETALL's reply for key, from the model.
func (m hashModel) flat(key string) []string {
	var out []string
	for _, f := range m[key] {
		out = append(out, f.field, f.val)
	}
	return out
}

// hashFuzzer decodes bytes into commands.
type hashFuzzer struct {
	data []byte
}

func (f *hashFuzzer) next() (byte, bool) {
	if len(f.data) == 0 {
		return 0, false
	}
	b := f.data[0]
	f.data = f.data[1:]
	return b, true
}

func (f *hashFuzzer) pick(words ...string) string {
	b, _ := f.next()
	return words[int(b)%len(words)]
}

var hashFuzzFields = []string{"a", "b", "c", "d", "", "f", "\x00", "é", strings.Repeat("L", 65), "n", "x", "b7"}
var hashFuzzValues = []string{"1", "-1", "0", "abc", "", "9223372036854775807", "-9223372036854775808",
	"01", "1.5", "inf", " 2", strings.Repeat("v", 70), "-0", "42"}

func (f *hashFuzzer) field() string { return f.pick(hashFuzzFields...) }

func (f *hashFuzzer) value() string {
	b, _ := f.next()
	if b < 200 {
		return hashFuzzValues[int(b)%len(hashFuzzValues)]
	}
	return strconv.Itoa(int(b) - 228) // small integers, some negative
}

// runHashModel plays the commands encoded in data on s and checks every reply
// against the model. Runs the commands on the executor, one job per command.
func runHashModel(t *testing.T, s *Server, data []byte) {
	t.Helper()
	c := newClient(s, nil)
	c.authed = true
	s.submit(func() {
		for _, db := range s.dbs {
			db.flush()
		}
	})
	do := func(args ...string) string {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		var w Writer
		s.submit(func() { s.call(c, argv, &w) })
		rd := bufio.NewReader(strings.NewReader(string(w.Bytes())))
		var b strings.Builder
		if err := readRaw(rd, &b); err != nil || rd.Buffered() > 0 {
			t.Fatalf("%q: not one reply: %q (%v)", args, w.Bytes(), err)
		}
		return b.String()
	}
	expect := func(args []string, got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("%q:\n got  %q\n want %q", args, got, want)
		}
	}
	m := hashModel{}
	f := &hashFuzzer{data: data}
	for steps := 0; steps < 200; steps++ {
		op, ok := f.next()
		if !ok {
			break
		}
		key := f.pick("h", "h", "g", "s")
		if key == "s" { // s is a string key: every hash command gets WRONGTYPE
			do("SET", "s", "v")
		}
		var args []string
		var want string
		switch op % 14 {
		case 0, 1: // HSET / HMSET with 1..3 pairs
			name := f.pick("HSET", "HMSET")
			args = []string{name, key}
			pairs := 1 + int(op/14)%3
			added := 0
			for range pairs {
				fl, v := f.field(), f.value()
				args = append(args, fl, v)
				if key != "s" && m.set(key, fl, v) {
					added++
				}
			}
			want = rInt(added)
			if name == "HMSET" {
				want = rOK
			}
		case 2:
			fl, v := f.field(), f.value()
			args = []string{"HSETNX", key, fl, v}
			want = rInt(0)
			if key != "s" && m.find(key, fl) < 0 {
				m.set(key, fl, v)
				want = rInt(1)
			}
		case 3, 4:
			args = []string{"HDEL", key, f.field(), f.field()}
			n := 0
			for _, fl := range args[2:] {
				if key != "s" && m.del(key, fl) {
					n++
				}
			}
			want = rInt(n)
		case 5:
			fl := f.field()
			args = []string{"HGET", key, fl}
			want = rNull
			if i := m.find(key, fl); i >= 0 {
				want = rBulk(m[key][i].val)
			}
		case 6:
			args = []string{"HGETALL", key}
			want = rBulks(m.flat(key)...)
		case 7:
			args = []string{"HLEN", key}
			want = rInt(len(m[key]))
		case 8:
			fl := f.field()
			args = []string{f.pick("HEXISTS", "HSTRLEN"), key, fl}
			i := m.find(key, fl)
			switch {
			case args[0] == "HEXISTS" && i >= 0:
				want = rInt(1)
			case args[0] == "HEXISTS":
				want = rInt(0)
			case i >= 0:
				want = rInt(len(m[key][i].val))
			default:
				want = rInt(0)
			}
		case 9:
			fl, incr := f.field(), f.value()
			args = []string{"HINCRBY", key, fl, incr}
			expect(args, do(args...), modelHincrby(m, key, fl, incr))
			continue
		case 10:
			fl := f.field()
			args = []string{"HINCRBYFLOAT", key, fl, f.pick("1", "-0.5", "0.1", "1e3", "x", "inf")}
			got := do(args...)
			if got[0] == '$' && key != "s" {
				m.set(key, fl, strings.Split(got, "\r\n")[1])
			}
			continue
		case 11:
			count := f.pick("1", "2", "5", "-3", "0", "1000")
			args = []string{"HRANDFIELD", key, count, "WITHVALUES"}
			got := do(args...)
			if key == "s" {
				expect(args, got, rWrongType)
				continue
			}
			checkHrandfield(t, args, got, m[key])
			continue
		case 12: // a full HSCAN walk returns the hash in order
			if key == "s" {
				continue
			}
			var items []string
			cursor := "0"
			for range 1000 {
				reply := do("HSCAN", key, cursor, "COUNT", f.pick("1", "7", "50"))
				lines := strings.Split(reply, "\r\n")
				cursor = lines[2]
				n, _ := strconv.Atoi(lines[3][1:])
				for i := range n {
					items = append(items, lines[5+2*i])
				}
				if cursor == "0" {
					break
				}
			}
			if want := m.flat(key); !slices.Equal(items, want) {
				t.Fatalf("HSCAN %s walk: %q\nwant %q", key, items, want)
			}
			continue
		case 13: // many fields at once: past the listpack limit
			if key == "s" {
				continue
			}
			b, _ := f.next()
			args = []string{"HSET", key}
			added := 0
			for i := range 500 + int(b)%100 {
				fl := fmt.Sprintf("bulk%d", i)
				args = append(args, fl, "v")
				if m.set(key, fl, "v") {
					added++
				}
			}
			want = rInt(added)
		}
		if key == "s" {
			want = rWrongType
		}
		expect(args, do(args...), want)
	}
	for _, key := range []string{"h", "g"} {
		want := rInt(0)
		if len(m[key]) > 0 {
			want = rInt(1)
		}
		expect([]string{"EXISTS", key}, do("EXISTS", key), want)
	}
}

// modelHincrby applies HINCRBY to the model and returns Redis's reply.
func modelHincrby(m hashModel, key, field, incrText string) string {
	incr, err := strconv.ParseInt(incrText, 10, 64)
	if err != nil || !validIntText([]byte(incrText)) {
		return rErr(msgNotInt)
	}
	if key == "s" {
		return rWrongType
	}
	var cur int64
	if i := m.find(key, field); i >= 0 {
		v := m[key][i].val
		if cur, err = strconv.ParseInt(v, 10, 64); err != nil || !validIntText([]byte(v)) {
			return rErr(msgHashNotInt)
		}
	}
	sum := cur + incr
	if (incr > 0 && sum < cur) || (incr < 0 && sum > cur) {
		return rErr(msgIncrOverflow)
	}
	m.set(key, field, strconv.FormatInt(sum, 10))
	return rInt(int(sum))
}

// checkHrandfield checks an HRANDFIELD key count WITHVALUES reply against the hash.
func checkHrandfield(t *testing.T, args []string, reply string, fields []modelField) {
	t.Helper()
	count, _ := strconv.Atoi(args[2])
	lines := strings.Split(reply, "\r\n")
	n, err := strconv.Atoi(strings.TrimPrefix(lines[0], "*"))
	if err != nil || n%2 != 0 {
		t.Fatalf("%q: %q", args, reply)
	}
	want := min(count, len(fields))
	if count < 0 {
		want = -count
	}
	if len(fields) == 0 {
		want = 0
	}
	if n/2 != want {
		t.Fatalf("%q: %d fields, want %d: %q", args, n/2, want, reply)
	}
	last := -1
	for i := 0; i < n; i += 2 {
		fl, v := lines[2+2*i], lines[4+2*i]
		j := slices.IndexFunc(fields, func(f modelField) bool { return f.field == fl })
		if j < 0 || fields[j].val != v {
			t.Fatalf("%q: pair %q %q is not in the hash", args, fl, v)
		}
		if count > 1 {
			if j <= last {
				t.Fatalf("%q: %q repeated or out of order", args, fl)
			}
			last = j
		}
	}
}

var hashFuzzSeeds = []string{
	"\x00\x00a\x01\x06\x00",
	"\x0e\x00\x05\x0d\x00\x0c\x00\x01\x03\x00\x00\x01\x06\x00",
	"\x09\x00\x00\x05\x09\x00\x00\x05\x09\x00\x00\xff\x06\x00",
	"\x0a\x00\x00\x00\x0a\x00\x00\x02\x05\x00\x00",
	"\x0d\x00\x20\x0c\x00\x01\x04\x00\x08\x09\x0c\x00\x02\x0b\x00\x01\x06\x00",
	"\x00\x03\x00\x00\x06\x03\x06\x03",
}

// FuzzHash: any sequence of hash commands gives the model's replies, one
// well-formed reply per command, and no panic.
func FuzzHash(f *testing.F) {
	for _, s := range hashFuzzSeeds {
		f.Add([]byte(s))
	}
	s := New(Config{}, WithClock(&hashClock{now: time.Unix(1_900_000_000, 0)}))
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, data []byte) { runHashModel(t, s, data) })
}

// TestHashModel runs pseudo-random sequences through the model check.
func TestHashModel(t *testing.T) {
	s := New(Config{}, WithClock(&hashClock{now: time.Unix(1_900_000_000, 0)}))
	t.Cleanup(func() { s.Close() })
	n := 200
	if testing.Short() {
		n = 30
	}
	state := uint64(1)
	// both forms: packed within the listpack limits, a table past them (entries 2
	// makes most hashes convert midway, 0 makes every hash a table from its start)
	limits := []string{"128", "2", "0"}
	for i := range n {
		configSet(t, s, "hash-max-listpack-entries", limits[i%len(limits)])
		data := make([]byte, 64+i%400)
		for j := range data {
			state = state*6364136223846793005 + 1442695040888963407
			data[j] = byte(state >> 56)
		}
		runHashModel(t, s, data)
		if t.Failed() {
			return
		}
	}
	for _, seed := range hashFuzzSeeds {
		runHashModel(t, s, []byte(seed))
	}
}

func configSet(t *testing.T, s *Server, name, value string) {
	t.Helper()
	c := newClient(s, nil)
	c.authed = true
	var w Writer
	s.submit(func() { s.call(c, [][]byte{[]byte("CONFIG"), []byte("SET"), []byte(name), []byte(value)}, &w) })
	if string(w.Bytes()) != "+OK\r\n" {
		t.Fatalf("CONFIG SET %s %s: %q", name, value, w.Bytes())
	}
}

// TestHashValueSqueeze checks the slot bookkeeping directly: after any mix of sets
// and deletes the index points at the right slots, holes never outnumber live
// fields, and Range is insertion order.
func TestHashValueSqueeze(t *testing.T) {
	h := newHashTable(0)
	var order []string
	for i := range 1000 {
		f := []byte(strconv.Itoa(i))
		h.set(f, f)
		order = append(order, string(f))
	}
	for i := 0; i < 1000; i += 1 + i%3 { // delete about half, unevenly
		h.del([]byte(strconv.Itoa(i)))
		order = slices.DeleteFunc(order, func(s string) bool { return s == strconv.Itoa(i) })
		if h.holes > h.Len() {
			t.Fatalf("%d holes for %d fields", h.holes, h.Len())
		}
	}
	kept := order[len(order)/2]
	h.set([]byte(kept), []byte("again")) // present: keeps its place
	h.set([]byte("0"), []byte("0"))      // deleted before: goes to the end
	order = append(order, "0")
	var got []string
	h.Range(func(f string, v []byte) bool { got = append(got, f); return true })
	if !slices.Equal(got, order) {
		t.Fatalf("Range order differs:\n got %v\nwant %v", got, order)
	}
	for f, i := range h.index {
		if h.slots[i].field != f || h.slots[i].hole {
			t.Fatalf("index[%q] = %d holds %+v", f, i, h.slots[i])
		}
	}
	if v, _ := h.get([]byte(kept)); string(v) != "again" {
		t.Fatalf("get %s = %q", kept, v)
	}
	for i := 1; i < len(h.slots); i++ {
		if h.slots[i].seq <= h.slots[i-1].seq {
			t.Fatal("sequence numbers do not grow along the slots")
		}
	}
	// deleting everything leaves no slots behind
	for _, f := range order {
		h.del([]byte(f))
	}
	if h.Len() != 0 || len(h.slots) != 0 || h.holes != 0 {
		t.Fatalf("empty hash keeps %d slots, %d holes", len(h.slots), h.holes)
	}
}

// TestHashRewrite replays appendHashRewrite's commands on an empty server: the same
// fields, values and order come back, in HMSETs of at most hmsetBatch fields.
func TestHashRewrite(t *testing.T) {
	src := New(Config{})
	t.Cleanup(func() { src.Close() })
	args := []string{"HSET", "h"}
	for i := range 150 {
		args = append(args, "f"+strconv.Itoa(i), strings.Repeat("v", i%70))
	}
	src.Do(args...)
	src.Do("HSET", "h", "", "empty field", "f7", "\x00\r\n")
	src.Do("HDEL", "h", "f3", "f140")
	var enc []byte
	src.submit(func() { enc = appendHashRewrite(nil, "h", src.dbs[0].entry("h").value().(*hashValue)) })

	dst := New(Config{})
	t.Cleanup(func() { dst.Close() })
	rd := bufio.NewReader(strings.NewReader(string(enc)))
	cmds := 0
	for {
		if _, err := rd.Peek(1); err != nil {
			break
		}
		cmd := readBulkArray(t, rd)
		if cmd[0] != "HMSET" || len(cmd) > 2+2*hmsetBatch {
			t.Fatalf("command %d: %s with %d arguments", cmds, cmd[0], len(cmd))
		}
		if r := string(dst.Do(cmd...)); r != rOK {
			t.Fatalf("replay: %q", r)
		}
		cmds++
	}
	if cmds != 3 { // 149 fields: 64 + 64 + 21
		t.Errorf("%d commands, want 3", cmds)
	}
	if a, b := string(src.Do("HGETALL", "h")), string(dst.Do("HGETALL", "h")); a != b {
		t.Errorf("replayed hash differs:\n%q\n%q", a, b)
	}
}

// readBulkArray reads one RESP array of bulk strings (a command).
func readBulkArray(t *testing.T, rd *bufio.Reader) []string {
	t.Helper()
	var n int
	if _, err := fmt.Fscanf(rd, "*%d\r\n", &n); err != nil {
		t.Fatal(err)
	}
	args := make([]string, n)
	for i := range args {
		var size int
		if _, err := fmt.Fscanf(rd, "$%d\r\n", &size); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			t.Fatal(err)
		}
		args[i] = string(buf[:size])
	}
	return args
}

// TestHashLivesInItsEntry checks the layout memory per key rests on (hash.go):
// a hash created by a command is its key's entry (no header object), holds
// its pack there until it converts, and COPY, RENAME and RESTORE give keys
// hashes of their own that later writes to one do not show in the other.
func TestHashLivesInItsEntry(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	entryOf := func(key string) (e *entry, h *hashValue) {
		s.submit(func() {
			e = s.dbs[0].entry(key)
			h, _ = e.value().(*hashValue)
		})
		return e, h
	}
	s.Do("HSET", "h", "u", "user-1", "j", "1764650000000")
	e, h := entryOf("h")
	if h == nil || unsafe.Pointer(h) != unsafe.Pointer(e) || e.kind&kindHashPack != kindHashPack {
		t.Fatalf("a new small hash is not its entry: entry %p hash %p kind %#x", e, h, e.kind)
	}
	if got := string(s.Do("HLEN", "h")); got != ":2\r\n" {
		t.Fatalf("HLEN h = %q", got)
	}
	s.Do("COPY", "h", "c")
	s.Do("HSET", "c", "u", "other")
	s.Do("RENAME", "c", "r")
	dump := s.Do("DUMP", "h")
	s.Do("RESTORE", "d", "0", string(dump[bytesIndexCRLF(dump):len(dump)-2]))
	s.Do("HDEL", "d", "j")
	for _, c := range []struct{ key, want string }{
		{"h", "*4\r\n$1\r\nu\r\n$6\r\nuser-1\r\n$1\r\nj\r\n$13\r\n1764650000000\r\n"},
		{"r", "*4\r\n$1\r\nu\r\n$5\r\nother\r\n$1\r\nj\r\n$13\r\n1764650000000\r\n"},
		{"d", "*2\r\n$1\r\nu\r\n$6\r\nuser-1\r\n"},
	} {
		if got := string(s.Do("HGETALL", c.key)); got != c.want {
			t.Errorf("HGETALL %s = %q, want %q", c.key, got, c.want)
		}
	}
	for i := range 600 { // past hash-max-listpack-entries (512): the same entry, now a table
		s.Do("HSET", "h", "f"+strconv.Itoa(i), "v")
	}
	e2, h2 := entryOf("h")
	if e2 != e || h2 == nil || h2.table() == nil || e2.kind != kindHash {
		t.Fatalf("after converting: entry %p (was %p), kind %#x", e2, e, e2.kind)
	}
	if got := string(s.Do("OBJECT", "ENCODING", "h")); got != "$9\r\nhashtable\r\n" {
		t.Errorf("OBJECT ENCODING h = %q", got)
	}
	if got := string(s.Do("HLEN", "h")); got != ":602\r\n" {
		t.Errorf("HLEN h = %q", got)
	}
}

// bytesIndexCRLF is the offset just past a bulk reply's header line.
func bytesIndexCRLF(b []byte) int { return strings.Index(string(b), "\r\n") + 2 }

// TestHsetPairsAsOneByOne checks that HSET's pairs, applied to a small hash in
// one pass (hashValue.setPairs), behave as if set one after the other: a field
// repeated in one command, and the conversion to a table in the middle of the
// pairs by count or by a value's length, keeping the order.
func TestHsetPairsAsOneByOne(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	s.Do("CONFIG", "SET", "hash-max-listpack-entries", "3")
	s.Do("CONFIG", "SET", "hash-max-listpack-value", "4")
	for _, c := range []struct {
		args       []string
		reply, all string
		encoding   string
		len        string
	}{
		{[]string{"HSET", "a", "f", "1", "g", "2", "f", "3"}, ":2\r\n",
			"*4\r\n$1\r\nf\r\n$1\r\n3\r\n$1\r\ng\r\n$1\r\n2\r\n", "listpack", ":2\r\n"},
		{[]string{"HSET", "b", "f", "1", "g", "2", "f", "3", "h", "4", "i", "5", "g", "6"}, ":4\r\n",
			"*8\r\n$1\r\nf\r\n$1\r\n3\r\n$1\r\ng\r\n$1\r\n6\r\n$1\r\nh\r\n$1\r\n4\r\n$1\r\ni\r\n$1\r\n5\r\n", "hashtable", ":4\r\n"},
		{[]string{"HSET", "c", "x", "1", "y", "12345", "z", "2"}, ":3\r\n",
			"*6\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$5\r\n12345\r\n$1\r\nz\r\n$1\r\n2\r\n", "hashtable", ":3\r\n"},
	} {
		key := c.args[1]
		if got := string(s.Do(c.args...)); got != c.reply {
			t.Errorf("%v = %q, want %q", c.args, got, c.reply)
		}
		if got := string(s.Do("HGETALL", key)); got != c.all {
			t.Errorf("HGETALL %s = %q, want %q", key, got, c.all)
		}
		if got := string(s.Do("OBJECT", "ENCODING", key)); got != "$"+strconv.Itoa(len(c.encoding))+"\r\n"+c.encoding+"\r\n" {
			t.Errorf("OBJECT ENCODING %s = %q, want %s", key, got, c.encoding)
		}
		if got := string(s.Do("HLEN", key)); got != c.len {
			t.Errorf("HLEN %s = %q, want %q", key, got, c.len)
		}
	}
	if got := string(s.Do("HSETNX", "a", "f", "9")); got != ":0\r\n" {
		t.Errorf("HSETNX on an existing field = %q", got)
	}
	if got := string(s.Do("HSETNX", "a", "n", "9")); got != ":1\r\n" {
		t.Errorf("HSETNX on a new field = %q", got)
	}
	if got := string(s.Do("HGET", "a", "n")); got != "$1\r\n9\r\n" {
		t.Errorf("HGET a n = %q", got)
	}
}
