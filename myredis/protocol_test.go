package myredis_test

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// Bad input over a socket: the offending client gets Redis's protocol error
// and is closed; the server and every other client carry on.
// (compat_protocol_test.go compares the exact bytes with a real redis-server.)

func TestProtocolErrorsClose(t *testing.T) {
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{ProtoMaxBulkLen: 1 << 20})
	for _, tc := range []struct{ name, input, want string }{
		{"bulk over proto-max-bulk-len, no payload sent", "*2\r\n$4\r\nECHO\r\n$1048577\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"negative bulk", "*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"multibulk count over INT_MAX", "*4294967296\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"no dollar", "*1\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'\r\n"},
		{"unbalanced quotes", "SET k \"v\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"replies before the error stay", "PING\r\nECHO ok\r\n*1\r\n$x\r\nPING\r\n", "+PONG\r\n$2\r\nok\r\n-ERR Protocol error: invalid bulk length\r\n"},
		{"binary junk line", "\xde\xad\xbe\xef\r\n", "-ERR unknown command '\xde\xad\xbe\xef', with args beginning with: \r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := redistest.Dial(t, addr)
			if err := c.Write([]byte(tc.input)); err != nil {
				t.Fatal(err)
			}
			wait := time.Second
			if !strings.Contains(tc.want, "Protocol error") {
				wait = 300 * time.Millisecond // stays open: wait a little only
			}
			data, closed := c.ReadAll(wait)
			if data != tc.want {
				t.Errorf("got %q, want %q", data, tc.want)
			}
			if strings.Contains(tc.want, "Protocol error") != closed {
				t.Errorf("closed=%v", closed)
			}
		})
	}
}

// TestBigBulkNotAllocated: an announced bulk of almost 512 MB, with no payload
// behind it, does not make the server allocate it.
func TestBigBulkNotAllocated(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var conns []*redistest.Conn
	for i := 0; i < 4; i++ {
		c := redistest.Dial(t, addr)
		if err := c.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870000\r\nxyz")); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	probe := redistest.Dial(t, addr)
	mustDo(t, probe, simple("PONG"), "PING") // the headers have been read by now
	time.Sleep(100 * time.Millisecond)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 64<<20 {
		t.Fatalf("heap grew by %d MB for 4 announced 512 MB bulks", grown>>20)
	}
	for _, c := range conns {
		c.Close()
	}
	mustDo(t, probe, null, "GET", "k")
}

// TestAbuseDoesNotDisturbOthers runs a well-behaved client while others send
// garbage, half commands, huge counts and vanish mid-request.
func TestAbuseDoesNotDisturbOthers(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	good := redistest.Dial(t, addr)
	const baseline = "1" // good alone

	attacks := []func(c *redistest.Conn){
		func(c *redistest.Conn) { c.Write([]byte("*1\r\n$-1\r\n")) },
		func(c *redistest.Conn) { c.Write([]byte("\x00\x01\x02\xff\xfe garbage \"unterminated\r\n")) },
		func(c *redistest.Conn) { c.Write([]byte("*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$5\r\nab")) }, // then vanish
		func(c *redistest.Conn) { c.Write([]byte("*2147483647\r\n")) },
		func(c *redistest.Conn) { // a huge count, dribbled
			c.Write([]byte("*2147483647\r\n"))
			for i := 0; i < 20; i++ {
				c.Write([]byte("$1\r\na\r\n"))
				time.Sleep(2 * time.Millisecond)
			}
		},
		func(c *redistest.Conn) {
			c.Write([]byte("*2\r\n$4\r\nECHO\r\n$400000000\r\n" + strings.Repeat("z", 100000)))
		},
		func(c *redistest.Conn) { c.Write([]byte(strings.Repeat("A", 100000))) }, // too big inline
		func(c *redistest.Conn) { c.Write([]byte("MULTI\r\nSET k v\r\n")) },      // open transaction, then vanish
		func(c *redistest.Conn) { c.Write([]byte("WATCH k\r\n")) },
		func(c *redistest.Conn) {}, // connect and vanish
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var goodErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := strconv.Itoa(i)
			if r, err := good.DoErr("SET", "good", v); err != nil || r != ok {
				goodErr = err
				return
			}
			if r, err := good.DoErr("GET", "good"); err != nil || r != bulk(v) {
				goodErr = err
				return
			}
		}
	}()
	for round := 0; round < 5; round++ {
		var aw sync.WaitGroup
		for _, attack := range attacks {
			aw.Add(1)
			go func() {
				defer aw.Done()
				c := redistest.Dial(t, addr)
				attack(c)
				c.ReadAll(50 * time.Millisecond)
				c.Close()
			}()
		}
		aw.Wait()
	}
	close(stop)
	wg.Wait()
	if goodErr != nil {
		t.Fatalf("the well-behaved client failed: %v", goodErr)
	}
	mustDo(t, good, null, "GET", "half")
	mustDo(t, good, null, "GET", "k")
	// Every attacker's connection is gone; new clients are served.
	deadline := time.Now().Add(5 * time.Second)
	for infoFields(t, good.Do("INFO", "clients"))["connected_clients"] != baseline {
		if time.Now().After(deadline) {
			t.Fatalf("connected_clients %s, want %s", infoFields(t, good.Do("INFO", "clients"))["connected_clients"], baseline)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fresh := redistest.Dial(t, addr)
	mustDo(t, fresh, simple("PONG"), "PING")
	mustDo(t, fresh, ok, "SET", "k", "v") // the abandoned WATCH and MULTI left nothing behind
}
