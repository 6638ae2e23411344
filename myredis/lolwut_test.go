package myredis_test

// LOLWUT's random drawings, whose shape is what can be checked (the drawings
// without randomness are compared byte for byte with redis-server in
// testdata/compat/module_lolwut.txt), and MODULE under enable-module-command local.

import (
	"bufio"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// bulkText reads a bulk string reply's text.
func bulkText(t *testing.T, reply string) string {
	t.Helper()
	head, body, ok := strings.Cut(reply, "\r\n")
	if !ok || !strings.HasPrefix(head, "$") || !strings.HasSuffix(body, "\r\n") {
		t.Fatalf("not a bulk string: %q", reply)
	}
	return strings.TrimSuffix(body, "\r\n")
}

func TestLolwutSkylineShape(t *testing.T) {
	c := redistest.Dial(t, redistest.StartMyRedis(t))
	text := bulkText(t, c.Do("LOLWUT", "VERSION", "6", "7", "4"))
	lines := strings.Split(text, "\n")
	if len(lines) != 4+3 {
		t.Fatalf("%d lines, want 4 rows and 3 lines of text: %q", len(lines), text)
	}
	cell := `\x1b\[0;(30;40|90;100|37;47|97;107)m \x1b\[0m`
	row := regexp.MustCompile(`^(` + cell + `){7}$`)
	colors := map[string]bool{}
	for _, l := range lines[:4] {
		if !row.MatchString(l) {
			t.Fatalf("row %q is not 7 coloured cells", l)
		}
		for _, m := range regexp.MustCompile(cell).FindAllStringSubmatch(l, -1) {
			colors[m[1]] = true
		}
	}
	if len(colors) < 2 {
		t.Errorf("a skyline of one colour: %v", colors)
	}
	want := []string{"Dedicated to the 8 bit game developers of past and present.",
		"Original 8 bit image from Plaguemon by hikikomori. Redis ver. " + myredis.RedisVersion, ""}
	if got := lines[4:]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("text %q, want %q", got, want)
	}
}

func TestLolwutSchotterShape(t *testing.T) {
	c := redistest.Dial(t, redistest.StartMyRedis(t))
	// 66 columns, 8x12 squares: a 132x196 canvas, 66 characters by 49 lines
	text := bulkText(t, c.Do("LOLWUT", "VERSION", "5"))
	sc := bufio.NewScanner(strings.NewReader(text))
	var rows []string
	for sc.Scan() {
		rows = append(rows, sc.Text())
	}
	if len(rows) != 49+2 || rows[49] != "" { // Redis ends the last row with a newline too
		t.Fatalf("%d lines, want 49, an empty one and the caption", len(rows))
	}
	inked := 0
	for _, r := range rows[:49] {
		if utf8.RuneCountInString(r) != 66 {
			t.Fatalf("row %q is not 66 characters", r)
		}
		for _, ch := range r {
			if ch < 0x2800 || ch > 0x28FF {
				t.Fatalf("%q is not a Braille pattern", ch)
			}
			if ch != 0x2800 {
				inked++
			}
		}
	}
	if inked == 0 {
		t.Error("no square drawn")
	}
	if want := "Georg Nees - schotter, plotter on paper, 1968. Redis ver. " + myredis.RedisVersion; rows[50] != want {
		t.Errorf("caption %q, want %q", rows[50], want)
	}
	mustDo(t, c, "-ERR LOLWUT drawing too large for MyRedis (at most 1048576 characters)\r\n",
		"LOLWUT", "VERSION", "5", "1000", "1", "200")
}

func TestModuleCommandLocal(t *testing.T) {
	cfg, err := myredis.ParseArgs([]string{"--enable-module-command", "local"})
	if err != nil {
		t.Fatal(err)
	}
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	c := redistest.Dial(t, addr) // over loopback: allowed
	mustDo(t, c, "-ERR Error loading the extension. Please check the server logs.\r\n", "MODULE", "LOAD", "/nonexistent.so")
	mustDo(t, c, "-ERR Error unloading module: no such module with that name\r\n", "MODULE", "UNLOAD", "m")
	mustDo(t, c, "*0\r\n", "MODULE", "LIST")
	mustDo(t, c, redistest.Bulks("enable-module-command", "local"), "CONFIG", "GET", "enable-module-command")
}
