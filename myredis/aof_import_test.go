package myredis

// The import of Redis 7's multi-part AOF (aof_import.go) on hand-made
// directories, and its manifest parser; TestManifestParserLikeRedis needs
// redis-server (skips without it). aof_import_compat_test.go imports
// directories written by redis-server itself.

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

type manifestCase struct {
	name, in string
	// want: "b:<name>", "i:<name>", "h:<name>" per file in order of kind (base,
	// history, incr); or the error: Redis's text and the line number (0: none)
	want    []string
	err     string
	errLine int
}

func manifestCases() []manifestCase {
	long := strings.Repeat("x", 1100)
	return []manifestCase{
		{name: "redis 7 layout", in: "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.1.incr.aof seq 1 type h\n" +
			"file appendonly.aof.2.incr.aof seq 2 type i\nfile appendonly.aof.3.incr.aof seq 3 type i\n",
			want: []string{"b:appendonly.aof.2.base.rdb", "h:appendonly.aof.1.incr.aof", "i:appendonly.aof.2.incr.aof", "i:appendonly.aof.3.incr.aof"}},
		{name: "pairs in any order", in: "type i seq 3 file x.aof\nseq 1 file y.rdb type b\n", want: []string{"b:y.rdb", "i:x.aof"}},
		{name: "keys ignore case, unknown keys ignored", in: "FILE a SEQ 1 Type i extra 7\n", want: []string{"i:a"}},
		{name: "quoted name", in: "file \"a b\\x41\\n.aof\" seq 1 type i\nfile 'q\\'s' seq 2 type i\n", want: []string{"i:a bA\n.aof", "i:q's"}},
		{name: "type is the first byte", in: "file a seq 1 type incr\nfile b seq 5 type base\n", want: []string{"b:b", "i:a"}},
		{name: "repeated key: the last wins", in: "file a seq 1 type i file b\n", want: []string{"i:b"}},
		{name: "CRLF and blanks trimmed", in: "  file a seq 1 type i \t\r\n", want: []string{"i:a"}},
		{name: "comments", in: "# hello\nfile a seq 1 type i\n#\n", want: []string{"i:a"}},
		{name: "comment without newline at the end", in: "file a seq 1 type i\n# no newline", want: []string{"i:a"}},
		{name: "only comments", in: "# nothing\n", want: nil},
		{name: "seq read as atoll", in: "file a seq 12abc type i\nfile b seq +13 type i\nfile c seq 99999999999999999999 type i\n",
			want: []string{"i:a", "i:b", "i:c"}},
		{name: "negative seq of a base", in: "file a seq -5 type b\n", want: []string{"b:a"}},
		{name: "a long comment's rest is a line", in: "#" + strings.Repeat("c", 1023) + "file a seq 1 type i\n", want: []string{"i:a"}},

		{name: "empty", in: "", err: msgManifestEmpty},
		{name: "no newline at the end", in: "file a seq 1 type i", err: msgManifestLongLine},
		{name: "too long", in: "file " + long + " seq 1 type i\n", err: msgManifestLongLine},
		{name: "NUL cuts the line", in: "file a\x00 seq 1 type i\n", err: msgManifestLongLine},
		{name: "blank line", in: "file a seq 1 type i\n\nfile b seq 2 type i\n", err: msgManifestFormat, errLine: 2},
		{name: "five words", in: "file a seq 1 type\n", err: msgManifestFormat, errLine: 1},
		{name: "seven words", in: "file a seq 1 type i x\n", err: msgManifestFormat, errLine: 1},
		{name: "unbalanced quotes", in: "file \"a seq 1 type i\n", err: msgManifestFormat, errLine: 1},
		{name: "quote not followed by a blank", in: "file \"a\"b seq 1 type i\n", err: msgManifestFormat, errLine: 1},
		{name: "no file", in: "name a seq 1 type i\n", err: msgManifestFormat, errLine: 1},
		{name: "seq 0", in: "file a seq 0 type i\n", err: msgManifestFormat, errLine: 1},
		{name: "seq not a number", in: "file a seq x type i\n", err: msgManifestFormat, errLine: 1},
		{name: "empty type", in: "file a seq 1 type ''\n", err: msgManifestFormat, errLine: 1},
		{name: "path", in: "file ../a seq 1 type i\n", err: msgManifestPath, errLine: 1},
		{name: "backslash path", in: "file \"a\\\\b\" seq 1 type i\n", err: msgManifestPath, errLine: 1},
		{name: "two bases", in: "file a seq 1 type b\nfile b seq 2 type b\n", err: msgManifestDupBase, errLine: 2},
		{name: "incr seq repeated", in: "file a seq 2 type i\nfile b seq 2 type i\n", err: msgManifestSeq, errLine: 2},
		{name: "incr seq decreasing", in: "file a seq 3 type i\nfile b seq 2 type i\n", err: msgManifestSeq, errLine: 2},
		{name: "negative incr seq", in: "file a seq -1 type i\n", err: msgManifestSeq, errLine: 1},
		{name: "unknown type", in: "file a seq 1 type x\n", err: msgManifestType, errLine: 1},
	}
}

func manifestSummary(m *aofManifest) []string {
	var out []string
	if m.base != nil {
		out = append(out, "b:"+m.base.name)
	}
	for _, f := range m.history {
		out = append(out, "h:"+f.name)
	}
	for _, f := range m.incr {
		out = append(out, "i:"+f.name)
	}
	return out
}

func TestParseManifest(t *testing.T) {
	for _, tc := range manifestCases() {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseManifest([]byte(tc.in))
			if tc.err != "" {
				me, ok := err.(*manifestError)
				if !ok || me.msg != tc.err || me.lineNum != tc.errLine {
					t.Fatalf("got %v (%#v), want %q at line %d", err, err, tc.err, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := manifestSummary(m); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestManifestParserLikeRedis starts redis-server 7.0.15 (on a unix socket, no
// port) on a dir holding each manifest of TestParseManifest and checks that it
// refuses it with the same text at the same line, or, where the parser accepts
// it, that Redis too goes on to look for the first file listed. Manifests that
// list no file to load are left out: Redis would start on them.
func TestManifestParserLikeRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found in PATH: install redis-server to compare the manifest parser with Redis; .ci/run does")
	}
	for _, tc := range manifestCases() {
		m, _ := parseManifest([]byte(tc.in))
		if tc.err == "" && len(m.loadOrder()) == 0 {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeManifest(t, dir, "appendonlydir", tc.in, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, _ := exec.CommandContext(ctx, bin, "--port", "0", "--unixsocket", filepath.Join(dir, "r.sock"), "--dir", dir, "--appendonly", "yes",
				"--save", "", "--logfile", "", "--daemonize", "no").CombinedOutput()
			log := string(out)
			var want []string
			if tc.err != "" {
				want = []string{tc.err + "\n"}
				if tc.errLine > 0 {
					want = append(want, fmt.Sprintf("at line %d\n", tc.errLine))
				}
			} else {
				want = []string{fmt.Sprintf("Unable to obtain the AOF file %s length", m.loadOrder()[0].name)}
			}
			for _, w := range want {
				if !strings.Contains(log, w) {
					t.Fatalf("redis-server's log lacks %q:\n%s", w, log)
				}
			}
		})
	}
}

// formatManifest writes m as Redis's getAofManifestAsString does: a name is
// quoted as sdscatrepr when sdsneedsrepr (a byte outside '!'..'~', '\\' or '"').
func formatManifest(m *aofManifest) []byte {
	var b []byte
	line := func(f manifestFile) {
		name := []byte(f.name)
		if bytes.IndexFunc(name, func(r rune) bool { return r == '\\' || r == '"' || r <= ' ' || r >= 0x7f }) >= 0 {
			name = appendRepr(nil, name) // monitor.go
		}
		b = fmt.Appendf(b, "file %s seq %d type %c\n", name, f.seq, f.typ)
	}
	if m.base != nil {
		line(*m.base)
	}
	for _, f := range m.history {
		line(f)
	}
	for _, f := range m.incr {
		line(f)
	}
	return b
}

// FuzzAOFManifest: the parser never panics; what it accepts keeps Redis's rules
// (names without '/', '\\' or NUL, seqs not 0, incr seqs increasing), and
// written back as Redis writes a manifest, it parses to the same files.
func FuzzAOFManifest(f *testing.F) {
	for _, tc := range manifestCases() {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest(data)
		if err != nil {
			if _, ok := err.(*manifestError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		all := append(m.loadOrder(), m.history...)
		for _, fl := range all {
			if strings.ContainsAny(fl.name, "/\\\x00") || fl.seq == 0 {
				t.Fatalf("accepted %+v", fl)
			}
		}
		for i := 1; i < len(m.incr); i++ {
			if m.incr[i].seq <= m.incr[i-1].seq {
				t.Fatalf("incr seqs not increasing: %+v", m.incr)
			}
		}
		if m.base != nil && m.base.typ != 'b' {
			t.Fatalf("base of type %c", m.base.typ)
		}
		for _, fl := range all {
			// Redis's writer leaves these unquoted and its parser then reads them
			// otherwise: an empty name (no word), a quote inside a word
			if fl.name == "" || strings.Contains(fl.name, "'") {
				return
			}
		}
		if len(all) == 0 {
			return // written as an empty file, which is an error
		}
		out := formatManifest(m)
		for _, line := range bytes.SplitAfter(out, []byte("\n")) {
			if len(line) > manifestMaxLine {
				return // nor does a line longer than Redis reads
			}
		}
		again, err := parseManifest(out)
		if err != nil {
			t.Fatalf("written back as %q: %v", out, err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("written back as %q, parsed to %+v, not %+v", out, again, m)
		}
	})
}

// writeManifest makes dir/<sub> with the manifest text and the files.
func writeManifest(t testing.TB, dir, sub, manifest string, files map[string][]byte) {
	t.Helper()
	p := filepath.Join(dir, sub)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "appendonly.aof.manifest"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(p, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func commands(cmds ...[]string) []byte {
	var b []byte
	for _, c := range cmds {
		b = appendCommand(b, bargs(c...))
	}
	return b
}

// readTree reads every file under dir, by relative path.
func readTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// importedDir returns the one <sub>.imported-* directory in dir, or "".
func importedDir(t testing.TB, dir, sub string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, sub+".imported-*"))
	if len(m) > 1 {
		t.Fatalf("several imported directories: %q", m)
	}
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// TestAOFImportRedis7Layout: a base file, two incr files (annotated, the last
// with a torn tail) are loaded in the manifest's order, MyRedis's file is
// written, the directory renamed untouched, and a restart loads MyRedis's file.
func TestAOFImportRedis7Layout(t *testing.T) {
	for _, mode := range []string{"preamble", "no preamble"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			base := commands([]string{"SELECT", "0"}, []string{"SET", "a", "1"}, []string{"RPUSH", "l", "x", "y"},
				[]string{"SET", "e", "v", "PXAT", "4102444800000"}, []string{"SET", "gone", "v", "PXAT", "1000"},
				[]string{"SELECT", "1"}, []string{"ZADD", "z", "1", "m"})
			incr1 := append([]byte("#TS:1700000000\r\n"), commands([]string{"SELECT", "0"}, []string{"INCR", "n"},
				[]string{"DEL", "a"}, []string{"MULTI"}, []string{"SADD", "s", "p"}, []string{"EXEC"})...)
			incr2 := commands([]string{"SELECT", "2"}, []string{"SET", "x", "9"}, []string{"HSET", "h", "f", "v"})
			torn := append(bytes.Clone(incr2), "*3\r\n$3\r\nSET\r\n$1\r\ny\r\n$2\r\n1"...)
			writeManifest(t, dir, "appendonlydir", "file appendonly.aof.1.base.aof seq 1 type b\n"+
				"file appendonly.aof.1.incr.aof seq 1 type h\n"+
				"file appendonly.aof.2.incr.aof seq 2 type i\nfile appendonly.aof.3.incr.aof seq 3 type i\n",
				map[string][]byte{"appendonly.aof.1.base.aof": base, "appendonly.aof.2.incr.aof": incr1,
					"appendonly.aof.3.incr.aof": torn})
			before := readTree(t, filepath.Join(dir, "appendonlydir"))

			// what the same commands give as one file of MyRedis's
			want := func() []string {
				ref := t.TempDir()
				all := append(append(append([]byte{}, base...), incr1...), incr2...)
				os.WriteFile(aofPath(ref), all, 0o644)
				s, err := tryOpenAOF(ref, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				return dump(s)
			}()

			var logs bytes.Buffer
			mod := func(c *Config) { c.AOFNoRDBPreamble = mode != "preamble" }
			s, err := tryOpenAOF(dir, mod, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("imported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			s.Close()
			moved := importedDir(t, dir, "appendonlydir")
			if moved == "" {
				t.Fatal("the directory was not renamed")
			}
			if _, err := os.Stat(filepath.Join(dir, "appendonlydir")); !os.IsNotExist(err) {
				t.Fatalf("appendonlydir still there: %v", err)
			}
			if after := readTree(t, moved); !reflect.DeepEqual(after, before) {
				t.Fatal("the imported files were changed")
			}
			warn := 0
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, "level=WARN") && strings.Contains(line, "imported Redis 7") {
					warn++
					if !strings.Contains(line, "directory_moved_to="+moved) || !strings.Contains(line, "incr_files=2") {
						t.Errorf("the warning does not say where the directory went: %s", line)
					}
				}
			}
			if warn != 1 {
				t.Errorf("%d import warnings, want 1:\n%s", warn, logs.String())
			}
			if !strings.Contains(logs.String(), "appendonly.aof.3.incr.aof") {
				t.Errorf("the torn tail of the last file is not reported:\n%s", logs.String())
			}
			own, err := os.ReadFile(aofPath(dir))
			if err != nil {
				t.Fatal(err)
			}
			if gotPre := bytes.HasPrefix(own, []byte("REDIS")); gotPre != (mode == "preamble") {
				t.Errorf("aof-use-rdb-preamble not followed: file begins %.10q", own)
			}
			s, err = tryOpenAOF(dir, mod)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := dump(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("after a restart:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if again := importedDir(t, dir, "appendonlydir"); again != moved {
				t.Fatalf("imported again: %s", again)
			}
		})
	}
}

// TestAOFImportRefusals: each start-up below fails with an error naming the
// problem, and leaves the directory as it was and no file of MyRedis's.
func TestAOFImportRefusals(t *testing.T) {
	good := commands([]string{"SET", "a", "1"})
	torn := commands([]string{"SET", "b", "2"})[:10]
	for _, tc := range []struct {
		name, manifest string
		files          map[string][]byte
		want           string
	}{
		{"bad manifest", "file a.aof seq 0 type i\n", map[string][]byte{"a.aof": good},
			"at line 1: >>> 'file a.aof seq 0 type i': Invalid AOF manifest file format"},
		{"empty manifest", "", nil, "Found an empty AOF manifest"},
		{"missing incr file", "file b.rdb seq 1 type b\nfile i1.aof seq 1 type i\nfile i2.aof seq 2 type i\n",
			map[string][]byte{"b.rdb": good, "i1.aof": good},
			"Unable to obtain the AOF file i2.aof length. stat: No such file or directory"},
		{"missing base file", "file b.rdb seq 1 type b\nfile i1.aof seq 1 type i\n", map[string][]byte{"i1.aof": good},
			"Unable to obtain the AOF file b.rdb length"},
		{"torn file not the last", "file i1.aof seq 1 type i\nfile i2.aof seq 2 type i\n",
			map[string][]byte{"i1.aof": torn, "i2.aof": good}, "the truncated file is not the last file: i1.aof"},
		{"torn base", "file b.aof seq 1 type b\nfile i1.aof seq 1 type i\n",
			map[string][]byte{"b.aof": torn, "i1.aof": good}, "the truncated file is not the last file: b.aof"},
		{"damaged RDB base", "file b.rdb seq 1 type b\n", map[string][]byte{"b.rdb": []byte("REDIS0010\xfa")},
			"reading the RDB preamble of"},
		{"unknown command", "file i1.aof seq 1 type i\n", map[string][]byte{"i1.aof": commands([]string{"NOSUCH"})},
			"unknown command 'NOSUCH'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeManifest(t, dir, "appendonlydir", tc.manifest, tc.files)
			before := readTree(t, dir)
			_, err := tryOpenAOF(dir, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if after := readTree(t, dir); !reflect.DeepEqual(after, before) {
				t.Fatalf("files changed: %q", after)
			}
		})
	}
}

// TestAOFImportOwnFileWins: with MyRedis's file and a manifest both there, the
// file is loaded, the directory left alone with a warning.
func TestAOFImportOwnFileWins(t *testing.T) {
	dir := t.TempDir()
	writeAOF(t, dir, []string{"SET", "mine", "1"})
	writeManifest(t, dir, "appendonlydir", "file i.aof seq 1 type i\n",
		map[string][]byte{"i.aof": commands([]string{"SET", "theirs", "1"})})
	var logs bytes.Buffer
	s, err := tryOpenAOF(dir, nil, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := dump(s); len(got) != 1 || !strings.Contains(got[0], "mine") {
		t.Fatalf("loaded %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")); err != nil {
		t.Fatalf("the directory was touched: %v", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "ignored="+filepath.Join(dir, "appendonlydir")) {
		t.Fatalf("no warning naming the ignored directory:\n%s", logs.String())
	}
}

// TestAOFImportNotADirectory: an appenddirname that is a file is ignored, as
// Redis ignores it.
func TestAOFImportNotADirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "appendonlydir"), []byte("x"), 0o644)
	writeAOF(t, dir, []string{"SET", "mine", "1"})
	s, err := tryOpenAOF(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := dump(s); len(got) != 1 {
		t.Fatalf("loaded %q", got)
	}
}

// TestAOFImportAppendDirname: appenddirname names the directory imported;
// CONFIG GET shows it, CONFIG SET refuses it (immutable), bad names are refused
// with Redis's texts.
func TestAOFImportAppendDirname(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "elsewhere", "file i.aof seq 1 type i\n", map[string][]byte{"i.aof": commands([]string{"SET", "k", "v"})})
	writeManifest(t, dir, "appendonlydir", "file j.aof seq 1 type i\n", map[string][]byte{"j.aof": commands([]string{"SET", "other", "v"})})
	s, addr := openAOFServer(t, dir, func(c *Config) {
		if err := c.Set("appenddirname", "elsewhere"); err != nil {
			t.Fatal(err)
		}
	})
	defer s.Close()
	if got := dump(s); len(got) != 1 || !strings.HasPrefix(got[0], "0 k ") {
		t.Fatalf("loaded %q", got)
	}
	if importedDir(t, dir, "elsewhere") == "" || importedDir(t, dir, "appendonlydir") != "" {
		t.Fatal("not the configured directory renamed")
	}
	c := mustDialAOF(t, addr)
	if got := c.must(t, "CONFIG", "GET", "appenddirname"); !reflect.DeepEqual(got, []any{"appenddirname", "elsewhere"}) {
		t.Fatalf("CONFIG GET appenddirname: %q", got)
	}
	_, err := c.do("CONFIG", "SET", "appenddirname", "x")
	if want := "ERR CONFIG SET failed (possibly related to argument 'appenddirname') - can't set immutable config"; err == nil || err.Error() != want {
		t.Fatalf("CONFIG SET appenddirname: %v", err)
	}
	var cfg Config
	for val, want := range map[string]string{"": "appenddirname can't be empty", "a/b": "appenddirname can't be a path, just a dirname",
		`a\b`: "appenddirname can't be a path, just a dirname"} {
		if err := cfg.Set("appenddirname", val); err == nil || err.Error() != want {
			t.Errorf("appenddirname %q: %v, want %q", val, err, want)
		}
	}
	if err := cfg.Set("appendfilename", "x/y"); err == nil || err.Error() != "appendfilename can't be a path, just a filename" {
		t.Errorf("appendfilename x/y: %v", err)
	}
	if d := DefaultConfig(); d.AppendDirname != "appendonlydir" {
		t.Errorf("default appenddirname %q", d.AppendDirname)
	}
}
