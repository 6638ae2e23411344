// Command memkey prints the memory each key shape costs in MyRedis and in a real
// redis-server measured in the same run: bytes per key of RSS and of used_memory,
// and MyRedis's ratio to Redis. Each shape gets a fresh pair of servers, so RSS
// is the shape's own.
//
//	go run ./scripts/memkey -n 1000000 -shapes set,setpx,hash,zset,join
//
// Shapes: set (SET key:N with a 16-byte value), setpx (the same with PX), hash
// (a 4-field hash per key, within the listpack limits), zset (a 5-member sorted
// set per key), join (anonymous joins of the waiting room through 3 queue
// engines: what one waiting user costs the store).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"waitroom/queue"
)

func main() {
	n := flag.Int("n", 1000000, "keys per shape (joins: n/5)")
	shapes := flag.String("shapes", "set,setpx,hash,zset,join", "comma-separated shapes")
	myBin := flag.String("myredis", "bin/myredis", "MyRedis binary")
	myArgs := flag.String("myredis-args", "", "extra MyRedis flags, space-separated")
	port := flag.Int("port", 29100, "first port to use")
	flag.BoolVar(&purge, "purge", false, "send MEMORY PURGE to both servers before the idle sample (what is left once every free page is returned)")
	flag.Parse()
	fmt.Printf("%-6s %9s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s\n", "shape", "keys",
		"RSS My", "Redis", "ratio", "peak My", "Redis", "ratio", "used My", "Redis", "ratio")
	for i, shape := range strings.Split(*shapes, ",") {
		keys := *n
		if shape == "join" {
			keys = *n / 5
		}
		my := measure(shape, keys, append([]string{*myBin, "--port"}, append([]string{strconv.Itoa(*port + 2*i)}, strings.Fields(*myArgs)...)...))
		rd := measure(shape, keys, []string{"redis-server", "--port", strconv.Itoa(*port + 2*i + 1), "--save", "", "--appendonly", "no"})
		fmt.Printf("%-6s %9d | %9.0f %9.0f %5.2fx | %9.0f %9.0f %5.2fx | %9.0f %9.0f %5.2fx\n", shape, keys,
			my.rss, rd.rss, my.rss/rd.rss, my.peak, rd.peak, my.peak/rd.peak, my.used, rd.used, my.used/rd.used)
	}
}

var purge bool

// perKey is bytes per key over the empty server's figures: RSS after the load
// and a quiet moment, peak RSS (VmHWM: the most the load ever took), used_memory.
type perKey struct{ rss, peak, used float64 }

func measure(shape string, n int, argv []string) perKey {
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr := "127.0.0.1:" + argv[2]
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	ctx := context.Background()
	for rdb.Ping(ctx).Err() != nil {
		time.Sleep(20 * time.Millisecond)
	}
	rss0, _, used0 := sample(ctx, rdb, cmd.Process.Pid)
	load(ctx, rdb, addr, shape, n)
	time.Sleep(20 * time.Second) // a quiet moment, as an operator would read it (a collection of a big heap takes seconds on a loaded machine)
	if purge {
		if err := rdb.Do(ctx, "MEMORY", "PURGE").Err(); err != nil {
			log.Fatal(err)
		}
		time.Sleep(2 * time.Second)
	}
	rss1, peak, used1 := sample(ctx, rdb, cmd.Process.Pid)
	k := float64(n)
	return perKey{rss: (rss1 - rss0) / k, peak: (peak - rss0) / k, used: (used1 - used0) / k}
}

func sample(ctx context.Context, rdb *redis.Client, pid int) (rss, peak, used float64) {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			used, _ = strconv.ParseFloat(v, 64)
		}
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
			rss = kb * 1024
		}
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
			peak = kb * 1024
		}
	}
	return rss, peak, used
}

func load(ctx context.Context, rdb *redis.Client, addr, shape string, n int) {
	if shape == "join" {
		joins(ctx, addr, n)
		return
	}
	const batch = 1000
	for i := 0; i < n; i += batch {
		p := rdb.Pipeline()
		for j := i; j < min(i+batch, n); j++ {
			k := "key:" + strconv.Itoa(j)
			switch shape {
			case "set":
				p.Set(ctx, k, "0123456789abcdef", 0)
			case "setpx":
				p.Set(ctx, k, "0123456789abcdef", time.Hour)
			case "hash":
				p.HSet(ctx, k, "u", "user-"+strconv.Itoa(j), "n", "9f86d081884c7d65", "a", "1764650000000", "e", "1764640000000")
			case "zset":
				p.ZAdd(ctx, k, redis.Z{Score: 1, Member: "alpha"}, redis.Z{Score: 2, Member: "bravo"},
					redis.Z{Score: 3, Member: "charlie"}, redis.Z{Score: 4, Member: "delta"}, redis.Z{Score: 5, Member: "echo"})
			default:
				log.Fatalf("unknown shape %q", shape)
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			log.Fatal(err)
		}
	}
}

// joins makes n anonymous joins through 3 engines, 32 at a time, with a cap of 1
// admitted user so that nearly everyone waits (no rounds run: nobody is admitted).
func joins(ctx context.Context, addr string, n int) {
	var engines []*queue.Engine
	for i := 0; i < 3; i++ {
		rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 16})
		e, err := queue.New(rdb, "sale", queue.Options{Secret: []byte("memkey-secret-0123456789"), InstanceID: "i" + strconv.Itoa(i)})
		if err != nil {
			log.Fatal(err)
		}
		if err := e.Init(ctx); err != nil {
			log.Fatal(err)
		}
		engines = append(engines, e)
	}
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, err := engines[i%3].Join(ctx, ""); err != nil {
					log.Fatal(err)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
}
