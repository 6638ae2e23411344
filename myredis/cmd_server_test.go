package myredis_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

func TestServerCommands(t *testing.T) {
	configFailed := func(name, why string) string {
		return errRe("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why)
	}
	runGroup(t, []groupCase{
		{"command", []step{
			do(empty, "COMMAND", "DOCS", "nosuch"),
			do(array(null), "COMMAND", "INFO", "nosuch"),
			do(bulks("k"), "COMMAND", "GETKEYS", "SET", "k", "v", "EX", "10"),
			do(bulks("a", "b"), "COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"),
			do(errRe("ERR Invalid command specified"), "COMMAND", "GETKEYS", "nosuch", "x"),
			do(errRe("ERR The command has no key arguments"), "COMMAND", "GETKEYS", "PING", "x"),
			do(errRe("ERR Invalid number of arguments specified for command"), "COMMAND", "GETKEYS", "GET", "a", "b"),
			do(arity("command|getkeys"), "COMMAND", "GETKEYS", "GET"),
			do(arity("command|count"), "COMMAND", "COUNT", "x"),
			do(errRe("ERR unknown subcommand 'nosuch'. Try COMMAND HELP."), "COMMAND", "nosuch"),
		}},
		{"config", []step{
			do(bulks("save", ""), "CONFIG", "GET", "save"),
			do(bulks("appendonly", "no"), "CONFIG", "GET", "appendonly"),
			do(bulks("databases", "16", "maxclients", "10000"), "CONFIG", "GET", "databases", "maxclients"),
			do(empty, "CONFIG", "GET", "nosuch"),
			do(arity("config|get"), "CONFIG", "GET"),
			do(ok, "CONFIG", "SET", "hz", "20", "maxclients", "500"),
			do(bulks("HZ", "20"), "CONFIG", "GET", "HZ"), // Redis 7.0 answers the name as typed
			do(configFailed("hz", "duplicate parameter"), "CONFIG", "SET", "hz", "1", "hz", "2"),
			do(configFailed("hz", "argument couldn't be parsed into an integer"), "CONFIG", "SET", "hz", "x"),
			do(configFailed("maxclients", "argument must be between 1 and 4294967295 inclusive"), "CONFIG", "SET", "maxclients", "0"),
			do(configFailed("databases", "can't set immutable config"), "CONFIG", "SET", "databases", "4"),
			do(configFailed("loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning"), "CONFIG", "SET", "loglevel", "loud"),
			do(errRe("ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"), "CONFIG", "SET", "nosuch", "1"),
			do(syntax, "CONFIG", "SET", "hz", "1", "maxclients"),
			do(bulks("maxclients", "500"), "CONFIG", "GET", "maxclients"), // failed sets changed nothing
			do(ok, "CONFIG", "SET", "save", "", "appendfsync", "always"),
			do(bulks("appendfsync", "always"), "CONFIG", "GET", "appendfsync"),
			do(ok, "CONFIG", "RESETSTAT"),
			do(errRe("ERR unknown subcommand 'nosuch'. Try CONFIG HELP."), "CONFIG", "nosuch"),
		}},
		{"time lastsave", []step{
			do(bulks(strconv.Itoa(clockStart), "0"), "TIME"),
			do(num(clockStart), "LASTSAVE"),
			do(arity("time"), "TIME", "x"),
		}},
	})
}

// TestCommandCountMatchesList: COMMAND COUNT, COMMAND and COMMAND LIST agree,
// and Redis's own entry serves COMMAND INFO (redis-cli reads the flags).
func TestCommandTable(t *testing.T) {
	c, _, _ := start(t)
	count := c.Do("COMMAND", "COUNT")
	n, _ := strconv.Atoi(strings.TrimSpace(count[1:]))
	if n < 40 {
		t.Fatalf("COMMAND COUNT %q", count)
	}
	if all := c.Do("COMMAND"); !strings.HasPrefix(all, "*"+strconv.Itoa(n)+"\r\n") {
		t.Fatalf("COMMAND does not list %d commands: %.80q", n, all)
	}
	get := c.Do("COMMAND", "INFO", "get")
	want := "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n"
	if !strings.HasPrefix(get, want) {
		t.Fatalf("COMMAND INFO get: %q", get)
	}
	docs := c.Do("COMMAND", "DOCS", "GET", "nosuch")
	if !strings.HasPrefix(docs, "*2\r\n$3\r\nget\r\n*10\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n") {
		t.Fatalf("COMMAND DOCS GET: %.200q", docs)
	}
	if all := c.Do("COMMAND", "DOCS"); !strings.HasPrefix(all, "*"+strconv.Itoa(2*n)+"\r\n") {
		t.Fatalf("COMMAND DOCS does not cover the %d commands: %.80q", n, all)
	}
	list := c.Do("COMMAND", "LIST", "FILTERBY", "PATTERN", "config|*")
	if list != bulks("config|get", "config|help", "config|resetstat", "config|rewrite", "config|set") {
		t.Fatalf("COMMAND LIST config|*: %q", list)
	}
}

// infoFields parses an INFO reply into field -> value.
func infoFields(t *testing.T, reply string) map[string]string {
	t.Helper()
	if !strings.HasPrefix(reply, "$") {
		t.Fatalf("INFO: %q", reply)
	}
	body := reply[strings.Index(reply, "\r\n")+2:]
	fields := map[string]string{}
	for _, line := range strings.Split(body, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			fields[k] = v
		}
	}
	return fields
}

func TestInfo(t *testing.T) {
	c, clk, addr := start(t)
	others := []*redistest.Conn{redistest.Dial(t, addr), redistest.Dial(t, addr)}
	for _, o := range others {
		mustDo(t, o, simple("PONG"), "PING")
	}
	mustDo(t, c, ok, "MSET", "a", "1", "b", "2", "c", "3")
	mustDo(t, c, num(1), "EXPIRE", "a", "100")
	mustDo(t, c, ok, "SELECT", "5")
	mustDo(t, c, ok, "SET", "x", "1")
	mustDo(t, c, bulk("1"), "GET", "x")
	mustDo(t, c, null, "GET", "nope")
	clk.Advance(90 * time.Second)

	f := infoFields(t, c.Do("INFO"))
	for field, want := range map[string]string{
		"redis_version":     "7.0.15",
		"redis_mode":        "standalone",
		"uptime_in_seconds": "90",
		"connected_clients": "3",
		"db0":               "keys=3,expires=1,avg_ttl=0",
		"db5":               "keys=1,expires=0,avg_ttl=0",
		"keyspace_hits":     "1",
		"keyspace_misses":   "1",
		"hz":                "10",
		"maxmemory_policy":  "noeviction",
	} {
		if f[field] != want {
			t.Errorf("INFO %s = %q, want %q", field, f[field], want)
		}
	}
	for _, field := range []string{"used_memory", "total_commands_processed", "total_connections_received", "process_id", "tcp_port"} {
		if v, err := strconv.ParseInt(f[field], 10, 64); err != nil || v <= 0 {
			t.Errorf("INFO %s = %q, want a positive number", field, f[field])
		}
	}
	if f["tcp_port"] != addr[strings.LastIndex(addr, ":")+1:] {
		t.Errorf("INFO tcp_port %q for %s", f["tcp_port"], addr)
	}

	// Sections one at a time, and several at once.
	only := c.Do("INFO", "keyspace")
	if !strings.HasPrefix(only, "$") || strings.Contains(only, "# Server") || !strings.Contains(only, "# Keyspace\r\ndb0:keys=3") {
		t.Errorf("INFO keyspace: %q", only)
	}
	two := c.Do("INFO", "SERVER", "clients")
	if !strings.Contains(two, "# Server\r\n") || !strings.Contains(two, "# Clients\r\n") || strings.Contains(two, "# Memory") {
		t.Errorf("INFO server clients: %q", two)
	}
	for _, sec := range []string{"server", "clients", "memory", "persistence", "stats", "keyspace"} {
		if !strings.Contains(c.Do("INFO", "everything"), "# "+strings.ToUpper(sec[:1])+sec[1:]+"\r\n") {
			t.Errorf("INFO everything lacks section %s", sec)
		}
	}
	mustDo(t, c, bulk(""), "INFO", "nosuchsection")

	// Commands processed and hits move with the workload.
	before := infoFields(t, c.Do("INFO", "stats"))["total_commands_processed"]
	mustDo(t, c, bulk("1"), "GET", "x")
	after := infoFields(t, c.Do("INFO", "stats"))
	if b, _ := strconv.Atoi(before); after["total_commands_processed"] != strconv.Itoa(b+2) {
		t.Errorf("total_commands_processed %s -> %s, want +2", before, after["total_commands_processed"])
	}
	if after["keyspace_hits"] != "2" {
		t.Errorf("keyspace_hits %q after another hit", after["keyspace_hits"])
	}
}

func TestMaxClients(t *testing.T) {
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{MaxClients: 20})
	a, b := redistest.Dial(t, addr), redistest.Dial(t, addr)
	mustDo(t, b, simple("PONG"), "PING")
	mustDo(t, a, ok, "CONFIG", "SET", "maxclients", "2")
	c := redistest.Dial(t, addr)
	data, closed := c.ReadAll(5 * time.Second)
	if data != errRe("ERR max number of clients reached") || !closed {
		t.Fatalf("third client: %q closed=%v", data, closed)
	}
	mustDo(t, a, simple("PONG"), "PING")
	a.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		d := redistest.Dial(t, addr)
		if r, err := d.DoErr("PING"); err == nil && r == simple("PONG") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a freed slot is not reused")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
