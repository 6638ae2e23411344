package myredis_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// waitStopped fails the test unless srv stops (SHUTDOWN) within a generous bound.
func waitStopped(t *testing.T, srv *myredis.Server) {
	t.Helper()
	select {
	case <-srv.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
}

// quietLog keeps the shutdown warnings out of the test output and lets tests read them.
func quietLog(buf *bytes.Buffer) myredis.Option {
	return myredis.WithLogger(slog.New(slog.NewTextHandler(buf, nil)))
}

func TestShutdownStopsTheServer(t *testing.T) {
	for _, args := range [][]string{{"SHUTDOWN"}, {"shutdown", "nosave"}, {"SHUTDOWN", "NOW", "FORCE"}, {"SHUTDOWN", "nosave", "now", "force"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var logs bytes.Buffer
			srv, addr := redistest.StartMyRedisConfig(t, myredis.Config{}, quietLog(&logs))
			c := redistest.Dial(t, addr)
			other := redistest.Dial(t, addr)
			mustDo(t, c, ok, "SET", "k", "v")
			// the SHUTDOWN pipeline's later commands never run
			if err := c.Write(append(redistest.Encode(args...), redistest.Encode("SET", "after", "1")...)); err != nil {
				t.Fatal(err)
			}
			if reply, closed := c.ReadAll(5 * time.Second); !closed || reply != "" {
				t.Errorf("SHUTDOWN: reply %q, closed %v; want no reply and a closed connection", reply, closed)
			}
			waitStopped(t, srv)
			if _, err := other.DoErr("PING"); err == nil {
				t.Error("another client still served after SHUTDOWN")
			}
			if !strings.Contains(logs.String(), "user requested shutdown") {
				t.Errorf("no shutdown log line: %s", logs.String())
			}
		})
	}
}

func TestShutdownErrors(t *testing.T) {
	var logs bytes.Buffer
	// dir does not exist: the RDB save fails
	cfg := myredis.Config{Dir: filepath.Join(t.TempDir(), "missing")}
	srv, addr := redistest.StartMyRedisConfig(t, cfg, quietLog(&logs))
	c := redistest.Dial(t, addr)
	runSteps(t, c, []step{
		do(syntax, "SHUTDOWN", "foo"),
		do(syntax, "SHUTDOWN", "SAVE", "NOSAVE"),
		do(syntax, "SHUTDOWN", "ABORT", "NOW"),
		do(errRe("ERR No shutdown in progress."), "SHUTDOWN", "ABORT"),
		// the RDB cannot be written
		do(errRe("ERR Errors trying to SHUTDOWN. Check logs."), "SHUTDOWN", "SAVE"),
		do(ok, "CONFIG", "SET", "save", "3600 1"),
		do(errRe("ERR Errors trying to SHUTDOWN. Check logs."), "SHUTDOWN"),
		do(ok, "MULTI"),
		do(errRe("ERR Command not allowed inside a transaction"), "SHUTDOWN", "NOSAVE"),
		do(errRe("EXECABORT Transaction discarded because of previous errors."), "EXEC"),
		do(errRe("ERR This Redis command is not allowed from script script: efed7e6fbac55a79c47e5a9e6bd695e63e9dcada, on @user_script:1."),
			"EVAL", "return redis.call('shutdown')", "0"),
		do(simple("PONG"), "PING"),
	})
	if !strings.Contains(logs.String(), "rdb save failed") {
		t.Errorf("no log line saying why: %s", logs.String())
	}
	c.Write(redistest.Encode("SHUTDOWN", "SAVE", "FORCE"))
	waitStopped(t, srv)
}

// TestShutdownFlushesTheAOF: with appendfsync no, what SHUTDOWN leaves behind is
// still complete, as Redis flushes and fsyncs the AOF on shutdown.
func TestShutdownFlushesTheAOF(t *testing.T) {
	cfg := myredis.Config{AppendOnly: true, AppendFsync: "no", Dir: t.TempDir()}
	var logs bytes.Buffer
	srv, addr := redistest.StartMyRedisConfig(t, cfg, quietLog(&logs))
	c := redistest.Dial(t, addr)
	for _, k := range []string{"a", "b", "c"} {
		mustDo(t, c, ok, "SET", k, "v"+k)
	}
	c.Write(redistest.Encode("SHUTDOWN", "SAVE"))
	c.ReadAll(5 * time.Second)
	waitStopped(t, srv)
	_, addr2 := redistest.StartMyRedisConfig(t, cfg, quietLog(&logs))
	c2 := redistest.Dial(t, addr2)
	mustDo(t, c2, bulks("va", "vb", "vc"), "MGET", "a", "b", "c")
}

// TestShutdownNosaveStopsBusyScript: a script that wrote and then loops cannot be
// killed (UNKILLABLE); SHUTDOWN without NOSAVE is refused BUSY, SHUTDOWN NOSAVE
// stops the server.
func TestShutdownNosaveStopsBusyScript(t *testing.T) {
	var logs bytes.Buffer
	srv, addr := redistest.StartMyRedisConfig(t, myredis.Config{LuaTimeLimit: 20}, quietLog(&logs))
	script := redistest.Dial(t, addr)
	c := redistest.Dial(t, addr)
	if err := script.Write(redistest.Encode("EVAL", "redis.call('set','x','1') while true do end", "0")); err != nil {
		t.Fatal(err)
	}
	busy := errRe("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
	for end := time.Now().Add(5 * time.Second); c.Do("PING") != busy; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the script never made the server busy")
		}
	}
	runSteps(t, c, []step{
		do(busy, "SHUTDOWN"),
		do(busy, "SHUTDOWN", "SAVE"),
		do(syntax, "SHUTDOWN", "bogus"),
		do(errRe("ERR No shutdown in progress."), "SHUTDOWN", "ABORT"),
		do(errRe("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."), "SCRIPT", "KILL"),
	})
	c.Write(redistest.Encode("SHUTDOWN", "NOSAVE"))
	if reply, closed := c.ReadAll(5 * time.Second); !closed || reply != "" {
		t.Errorf("SHUTDOWN NOSAVE: reply %q, closed %v", reply, closed)
	}
	waitStopped(t, srv)
}

// TestShutdownNosaveDropsBusyScript: the writes of a script stopped half-way by
// SHUTDOWN NOSAVE never reach the AOF (Redis propagates a script's writes only
// when it ends), while everything before it is kept.
func TestShutdownNosaveDropsBusyScript(t *testing.T) {
	cfg := myredis.Config{AppendOnly: true, Dir: t.TempDir(), LuaTimeLimit: 20}
	var logs bytes.Buffer
	srv, addr := redistest.StartMyRedisConfig(t, cfg, quietLog(&logs))
	c := redistest.Dial(t, addr)
	mustDo(t, c, ok, "SET", "before", "1")
	script := redistest.Dial(t, addr)
	if err := script.Write(redistest.Encode("EVAL", "redis.call('select', '3') redis.call('set','x','1') while true do end", "0")); err != nil {
		t.Fatal(err)
	}
	busy := errRe("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
	for end := time.Now().Add(5 * time.Second); c.Do("PING") != busy; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the script never made the server busy")
		}
	}
	c.Write(redistest.Encode("SHUTDOWN", "NOSAVE"))
	c.ReadAll(5 * time.Second)
	waitStopped(t, srv)
	_, addr2 := redistest.StartMyRedisConfig(t, cfg, quietLog(&logs))
	c2 := redistest.Dial(t, addr2)
	mustDo(t, c2, bulk("1"), "GET", "before")
	mustDo(t, c2, ok, "SELECT", "3")
	mustDo(t, c2, null, "GET", "x")
	mustDo(t, c2, ok, "SET", "after", "1") // the file takes writes again after the dropped part
}
