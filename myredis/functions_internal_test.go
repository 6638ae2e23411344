package myredis

import (
	"strconv"
	"testing"
	"time"
)

// TestFunctionsSurviveRestartAndRewrite: libraries are in the AOF, loaded again at
// start-up, and written by a rewrite.
func TestFunctionsSurviveRestartAndRewrite(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	c.must(t, "FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('fa', function() return 1 end)")
	c.must(t, "FUNCTION", "LOAD", "#!lua name=b\nredis.register_function('fb', function() return 2 end)")
	c.must(t, "FUNCTION", "DELETE", "b")
	s.Close()

	s2, addr2 := openAOFServer(t, dir, nil)
	c2 := mustDialAOF(t, addr2)
	if v := c2.must(t, "FCALL", "fa", "0"); v != int64(1) {
		t.Fatalf("FCALL fa after restart = %v", v)
	}
	if _, err := c2.do("FCALL", "fb", "0"); err == nil || err.Error() != "ERR Function not found" {
		t.Fatalf("FCALL fb after restart: %v", err)
	}
	c2.must(t, "SAVE") // rewrites the AOF
	s2.Close()

	s3, _ := openAOFServer(t, dir, nil)
	defer s3.Close()
	if got := string(s3.Do("FCALL", "fa", "0")); got != ":1\r\n" {
		t.Fatalf("FCALL fa after rewrite = %q", got)
	}
}

// TestSwapdbAndMoveDuringRewrite: keys that SWAPDB, MOVE and COPY ... DB change in
// another database during a rewrite come out of the rewritten file as they are.
func TestSwapdbAndMoveDuringRewrite(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	for i := range 3000 {
		c.must(t, "SET", "k"+strconv.Itoa(i), "v")
	}
	c.must(t, "SELECT", "1")
	c.must(t, "SET", "in1", "x")
	c.must(t, "SELECT", "0")
	c.must(t, "BGREWRITEAOF")
	c.must(t, "SWAPDB", "0", "1")
	c.must(t, "MOVE", "in1", "1") // now in db 0 after the swap: back to db 1
	c.must(t, "SELECT", "1")
	c.must(t, "COPY", "in1", "copy", "DB", "2")
	c.waitRewrite(t, 1)
	s.Close()

	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	checks := [][2]string{{"0", ":0\r\n"}, {"1", ":3001\r\n"}, {"2", ":1\r\n"}}
	for _, ck := range checks {
		cl := newClient(s2, nil)
		cl.authed = true
		var w Writer
		s2.submit(func() {
			s2.call(cl, bargs("SELECT", ck[0]), &w)
			w.Reset()
			s2.call(cl, bargs("DBSIZE"), &w)
		})
		if got := string(w.Bytes()); got != ck[1] {
			t.Errorf("DBSIZE of db %s after the rewrite = %q, want %q", ck[0], got, ck[1])
		}
	}
}

// FuzzLibraryMetadata: the shebang parser never panics, and what it accepts has a
// valid name position and the code starting at the first newline.
func FuzzLibraryMetadata(f *testing.F) {
	for _, s := range []string{"#!lua name=x\ncode", "#!lua name=\"q\"\n", "#! name=a name=b\n", "#!lua\n", "no", "#!lua name='\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		md, errMsg := parseLibMeta(payload)
		if errMsg != "" {
			return
		}
		if md.codeAt < 0 || md.codeAt >= len(payload) || payload[md.codeAt] != '\n' {
			t.Fatalf("code position %d in %q", md.codeAt, payload)
		}
	})
}

// FuzzFunctionDump: any payload is refused or read back, and a dump of what was
// read reads back the same libraries.
func FuzzFunctionDump(f *testing.F) {
	s := New(DefaultConfig(), WithLogger(quietLogger()))
	defer s.Close()
	var good []byte
	s.submit(func() {
		lib := s.functionLibs()
		l, _ := lib.compileLibrary("#!lua name=a\nredis.register_function('f', function() return 1 end)", 0)
		lib.add(l, false)
		good = lib.dump()
	})
	f.Add(good)
	f.Add([]byte("\xf5\x01a\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		codes, ok := parseDump(b)
		if !ok {
			return
		}
		for _, c := range codes {
			if len(c) > len(b) {
				t.Fatalf("library of %d bytes from a payload of %d", len(c), len(b))
			}
		}
	})
}

// TestFunctionRestoreHasTheLoadTimeout: a payload whose library never finishes
// loading is refused after the timeout instead of holding the executor.
func TestFunctionRestoreHasTheLoadTimeout(t *testing.T) {
	s := New(DefaultConfig(), WithLogger(quietLogger()))
	defer s.Close()
	var errMsg string
	s.submit(func() {
		f := s.functionLibs()
		spin := &funcLib{name: "x", code: "#!lua name=x\nwhile true do end"}
		f.libs["x"] = spin // only for dump(): a library that could never load
		payload := f.dump()
		f.flush()
		errMsg = f.restore(payload, "append", 50*time.Millisecond)
	})
	if errMsg != "ERR Error registering functions: ERR FUNCTION LOAD timeout" {
		t.Fatalf("restore of a looping library = %q", errMsg)
	}
}
