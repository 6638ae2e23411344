package myredis

// Benchmarks of the executor path. They measure, they assert nothing about time.
//
//	go test -run '^$' -bench . -benchmem ./myredis/
//
// BenchmarkCall* run one command through call() on the executor goroutine with a
// reused Writer: the cost of lookup, arity, dispatch, the handler and the reply.
// BenchmarkHandoff* measure the connection-to-executor round trip without a network.
// BenchmarkLoopback* drive a real listener over loopback with raw RESP, as
// redis-benchmark does, with and without pipelining.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/tidwall/redcon"
)

func benchServer(b *testing.B) *Server {
	b.Helper()
	s := New(Config{})
	b.Cleanup(func() { s.Close() })
	return s
}

func argv(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

// benchCall runs args b.N times through call() on the executor goroutine.
func benchCall(b *testing.B, s *Server, args [][]byte, want string) {
	c := newClient(s, nil)
	c.authed = true
	var w Writer
	s.submit(func() { s.call(c, args, &w) })
	if got := string(w.Bytes()); want != "" && got != want {
		b.Fatalf("%s: got %q, want %q", args[0], got, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	s.submit(func() {
		for range b.N {
			w.Reset()
			s.call(c, args, &w)
		}
	})
}

func BenchmarkCallGet(b *testing.B) {
	s := benchServer(b)
	s.Do("SET", "key:000000000001", "xxx")
	benchCall(b, s, argv("GET", "key:000000000001"), "$3\r\nxxx\r\n")
}

func BenchmarkCallGetMiss(b *testing.B) {
	s := benchServer(b)
	benchCall(b, s, argv("get", "key:000000000001"), "$-1\r\n")
}

func BenchmarkCallSet(b *testing.B) {
	s := benchServer(b)
	benchCall(b, s, argv("SET", "key:000000000001", "xxx"), "+OK\r\n")
}

func BenchmarkCallIncr(b *testing.B) {
	s := benchServer(b)
	benchCall(b, s, argv("INCR", "counter"), "")
}

func BenchmarkCallPing(b *testing.B) {
	s := benchServer(b)
	benchCall(b, s, argv("PING"), "+PONG\r\n")
}

// BenchmarkRunBatch16 runs a pipelined batch of 16 GETs as one executor job does.
func BenchmarkRunBatch16(b *testing.B) {
	s := benchServer(b)
	s.Do("SET", "k", "xxx")
	c := newClient(s, nil)
	c.authed = true
	batch := make([]redcon.Command, 16)
	for i := range batch {
		batch[i] = redcon.Command{Args: argv("GET", "k")}
	}
	b.ReportAllocs()
	b.ResetTimer()
	s.submit(func() {
		for range b.N {
			c.out.Reset()
			c.cmds = append(c.cmds[:0], batch...)
			s.runBatch(c)
		}
	})
	if c.out.Len() != 16*len("$3\r\nxxx\r\n") {
		b.Fatalf("replies: %q", c.out.Bytes())
	}
}

// handoff sends c's batch to the executor and waits for the replies, as handle does.
func handoff(s *Server, c *Client, batch []redcon.Command) {
	c.out.Reset()
	c.cmds = append(c.cmds[:0], batch...)
	busy := s.scriptGuard.busySignal()
	c.seq++
	c.claim.Store(c.seq)
	s.jobs <- job{c: c, seq: c.seq}
	select {
	case <-c.done:
	case <-busy:
		panic("no script runs in this benchmark")
	}
}

// BenchmarkHandoff is one connection's round trip through the executor (one GET).
func BenchmarkHandoff(b *testing.B) {
	s := benchServer(b)
	c := newClient(s, nil)
	c.authed = true
	batch := []redcon.Command{{Args: argv("GET", "k")}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		handoff(s, c, batch)
	}
}

// BenchmarkHandoffParallel is many connections handing over batches of one GET at once.
func BenchmarkHandoffParallel(b *testing.B) {
	s := benchServer(b)
	b.ReportAllocs()
	b.SetParallelism(25) // 50 goroutines on 2 cores, as redis-benchmark -c 50
	b.RunParallel(func(pb *testing.PB) {
		c := newClient(s, nil)
		c.authed = true
		batch := []redcon.Command{{Args: argv("GET", "k")}}
		for pb.Next() {
			handoff(s, c, batch)
		}
	})
}

func BenchmarkLoopbackGet(b *testing.B)              { benchLoopback(b, 50, 1) }
func BenchmarkLoopbackGetPipeline16(b *testing.B)    { benchLoopback(b, 50, 16) }
func BenchmarkLoopbackGetOneConnP16(b *testing.B)    { benchLoopback(b, 1, 16) }
func BenchmarkLoopbackGetOneConnNoPipe(b *testing.B) { benchLoopback(b, 1, 1) }

// benchLoopback serves on a loopback port and sends b.N GETs from conns connections,
// pipeline at a time, reading every reply. One op is one GET.
func benchLoopback(b *testing.B, conns, pipeline int) {
	s := benchServer(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ln)
	s.Do("SET", "key:000000000001", "xxx")
	req := bytes.Repeat([]byte("*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000001\r\n"), pipeline)
	reply := []byte("$3\r\nxxx\r\n")

	clients := make([]net.Conn, conns)
	for i := range clients {
		if clients[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			b.Fatal(err)
		}
		defer clients[i].Close()
	}
	rounds := (b.N + pipeline - 1) / pipeline
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i, nc := range clients {
		n := rounds / conns
		if i < rounds%conns {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := bufio.NewReaderSize(nc, 64<<10)
			got := make([]byte, len(reply)*pipeline)
			for range n {
				if _, err := nc.Write(req); err != nil {
					errs <- err
					return
				}
				if _, err := io.ReadFull(rd, got); err != nil {
					errs <- err
					return
				}
			}
			if n > 0 && !bytes.Equal(got[:len(reply)], reply) {
				errs <- fmt.Errorf("reply %q", got[:len(reply)])
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
