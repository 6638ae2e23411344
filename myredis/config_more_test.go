package myredis

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestLoadDebianConfig loads Debian's stock redis.conf of the redis-server 7.0.15
// package, unchanged (a copy in testdata): every directive loads, the ones MyRedis
// implements take effect, the others are listed for a warning.
func TestLoadDebianConfig(t *testing.T) {
	cfg, err := ParseArgs([]string{"testdata/config/debian-redis-7.0.15.conf"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 6379 || cfg.Bind != "127.0.0.1 -::1" || cfg.Timeout != 0 || cfg.TCPKeepAlive != 300 ||
		!cfg.Daemonize || cfg.PidFile != "/run/redis/redis-server.pid" ||
		cfg.LogFile != "/var/log/redis/redis-server.log" || cfg.Dir != "/var/lib/redis" ||
		cfg.Databases != 16 || cfg.AppendOnly || cfg.AppendFsync != "everysec" || cfg.Hz != 10 ||
		cfg.AutoAOFRewriteMinSize != 64<<20 || cfg.TCPBacklog != 511 || cfg.MaxMemPolicy != "noeviction" {
		t.Errorf("settings not applied: %+v", cfg)
	}
	// (names no branch is about to implement, so the test survives merges)
	for _, name := range []string{"protected-mode", "set-proc-title", "oom-score-adj-values",
		"jemalloc-bg-thread", "tcp-backlog", "disable-thp"} {
		if !slices.Contains(cfg.Unsupported, name) {
			t.Errorf("%s is not listed as unsupported: %q", name, cfg.Unsupported)
		}
	}
	for _, name := range []string{"port", "timeout", "tcp-keepalive", "daemonize", "pidfile", "logfile", "dir"} {
		if slices.Contains(cfg.Unsupported, name) {
			t.Errorf("%s is implemented but listed as unsupported", name)
		}
	}
}

func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	conf := dir + "/r.conf"
	os.WriteFile(conf, []byte("port\t7000\nsave 100 1\nsave 200 2\n  requirepass \"a b\\x41\"\nmaxmemory 1gb\n"), 0o644)
	for _, tc := range []struct {
		args  []string
		stdin string
		check func(Config) bool
		err   string
	}{
		{args: []string{conf}, check: func(c Config) bool {
			return c.Port == 7000 && c.RequirePass == "a bA" && c.MaxMemory == 1<<30 &&
				formatSave(c.Save) == "100 1 200 2"
		}},
		{args: []string{conf, "--port", "7001", "--save", "--timeout", "5"}, check: func(c Config) bool {
			return c.Port == 7001 && len(c.Save) == 0 && c.Timeout == 5
		}},
		{args: []string{"--save", "10", "1", "20", "2"}, check: func(c Config) bool { return formatSave(c.Save) == "10 1 20 2" }},
		{args: []string{"--requirepass", "--weird"}, check: func(c Config) bool { return c.RequirePass == "--weird" }},
		{args: []string{"--requirepass", `q"uo te\`}, check: func(c Config) bool { return c.RequirePass == `q"uo te\` }},
		{args: []string{"--port 7002"}, check: func(c Config) bool { return c.Port == 7002 }},
		{args: []string{"-", "--hz", "20"}, stdin: "maxmemory 5mb\nhz 30\n", check: func(c Config) bool {
			return c.MaxMemory == 5<<20 && c.Hz == 20
		}},
		{args: []string{"--tcp-keepalive", "0"}, check: func(c Config) bool { return c.TCPKeepAlive == 0 }},
		{args: nil, check: func(c Config) bool { return c.TCPKeepAlive == 300 && c.Timeout == 0 }},
		{args: []string{"--daemonize", "maybe"}, err: "argument must be 'yes' or 'no'"},
		{args: []string{"--nosuch", "1"}, err: "Bad directive or wrong number of arguments"},
		{args: []string{"--port", "1", "2"}, err: "Bad directive or wrong number of arguments"},
		{args: []string{"--maxmemory", "lots"}, err: "argument must be a memory value"},
		{args: []string{"--save", "0", "1"}, err: "Invalid save parameters"},
		{args: []string{"--timeout", "-1"}, err: "argument must be between 0 and 2147483647 inclusive"},
		{args: []string{"-"}, stdin: "port \"7000\n", err: "Unbalanced quotes in configuration line"},
		{args: []string{"--rename-command", "FLUSHALL", ""}, check: func(c Config) bool {
			return slices.Contains(c.Unsupported, "rename-command")
		}},
	} {
		cfg, err := parseArgs(tc.args, strings.NewReader(tc.stdin))
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.err == "" && !tc.check(cfg):
			t.Errorf("%q: wrong settings %+v", tc.args, cfg)
		}
	}
}

func TestParseMemoryRedis(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1": 1, "1b": 1, "1k": 1000, "1K": 1000, "1kb": 1024, "1KB": 1024, "1m": 1e6, "1mb": 1 << 20,
		"1g": 1e9, "1Gb": 1 << 30, "": 0, "kb": 0, "01": 1, "99999999999999999999999": -1,
		"abc": -2, "-1": -2, "+1": -2, "1.5": -2, " 1": -2, "1 ": -2, "1tb": -2, "1 kb": -2,
	} {
		got, ok := parseMemoryRedis(in)
		switch {
		case want == -2 && ok:
			t.Errorf("%q: accepted as %d", in, got)
		case want == -1 && got != ^uint64(0):
			t.Errorf("%q: %d, want 2^64-1", in, got)
		case want >= 0 && (!ok || got != uint64(want)):
			t.Errorf("%q: %d %v, want %d", in, got, ok, want)
		}
	}
}

// FuzzConfigLine checks that the command line's quoting (quoteArg) and the config
// line splitter (splitInline, Redis's sdssplitargs) are inverses, and that the
// config loader never panics on any line.
func FuzzConfigLine(f *testing.F) {
	for _, s := range []string{"port 6379", "save \"\"", "a\tb", `"\x41\n"`, "'it\\'s'", "\"unbalanced", "x\x00y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, ok := splitInline([]byte(quoteArg(s)))
		if !ok || len(words) != 1 || string(words[0]) != s {
			if !strings.Contains(s, "\x00") { // a NUL ends a C string: Redis stops there too
				t.Fatalf("quoteArg(%q) splits back as %q, %v", s, words, ok)
			}
		}
		var c Config
		if !strings.Contains(strings.ToLower(s), "include") { // would read any file
			c.loadText(s, "fuzz")
		}
		parseMemoryRedis(s)
		parseSave(strings.Split(s, " "))
	})
}
