// Command respload is the piece of scripts/compare-redis.sh that redis-benchmark
// cannot do: it sends a fixed sequence of commands (such as MULTI / INCR / EXEC) as
// one request, from -c connections, -P requests pipelined per round trip, and prints
// requests per second in redis-benchmark's CSV shape ("name","rps").
//
//	respload -p 6379 -c 50 -n 200000 -P 1 -name MULTI_INCR_EXEC 'MULTI' 'INCR counter' 'EXEC'
//
// Each argument is one command, split on spaces. It runs against any RESP server, so
// MyRedis and real Redis are measured by the same client.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	host := flag.String("h", "127.0.0.1", "server host")
	port := flag.Int("p", 6379, "server port")
	clients := flag.Int("c", 50, "parallel connections")
	total := flag.Int("n", 100000, "total requests (one request = the whole command sequence)")
	pipeline := flag.Int("P", 1, "requests pipelined per round trip")
	name := flag.String("name", "", "test name printed in the CSV (default: the commands)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: respload [flags] 'CMD ARG...' ['CMD ARG...' ...]")
		os.Exit(2)
	}
	if *name == "" {
		*name = strings.Join(flag.Args(), "; ")
	}

	var one []byte
	for _, line := range flag.Args() {
		f := strings.Fields(line)
		one = fmt.Appendf(one, "*%d\r\n", len(f))
		for _, a := range f {
			one = fmt.Appendf(one, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	perReq := flag.NArg()

	var left atomic.Int64
	left.Store(int64(*total))
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(net.JoinHostPort(*host, strconv.Itoa(*port)), one, perReq, *pipeline, &left); err != nil {
				failed.Store(err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		fmt.Fprintln(os.Stderr, "respload:", err)
		os.Exit(1)
	}
	fmt.Println(`"test","rps"`)
	fmt.Printf("%q,\"%.2f\"\n", *name, float64(*total)/elapsed.Seconds())
}

// run takes requests from left in rounds of up to pipeline and waits for every reply.
func run(addr string, one []byte, perReq, pipeline int, left *atomic.Int64) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	rd := bufio.NewReaderSize(conn, 64<<10)
	var buf []byte
	for {
		n := int(min(left.Add(-int64(pipeline))+int64(pipeline), int64(pipeline)))
		if n <= 0 {
			return nil
		}
		buf = buf[:0]
		for range n {
			buf = append(buf, one...)
		}
		if _, err := conn.Write(buf); err != nil {
			return err
		}
		for range n * perReq {
			if err := skipReply(rd); err != nil {
				return err
			}
		}
	}
}

// skipReply reads one whole RESP2 reply; an error reply fails the run.
func skipReply(rd *bufio.Reader) error {
	line, err := rd.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short reply %q", line)
	}
	switch line[0] {
	case '+', ':':
		return nil
	case '-':
		return fmt.Errorf("server error: %s", strings.TrimSpace(string(line[1:])))
	case '$':
		n, err := strconv.Atoi(string(line[1 : len(line)-2]))
		if err != nil || n < 0 {
			return err
		}
		_, err = rd.Discard(n + 2)
		return err
	case '*':
		n, err := strconv.Atoi(string(line[1 : len(line)-2]))
		if err != nil {
			return err
		}
		for range max(n, 0) {
			if err := skipReply(rd); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected reply %q", line)
}
