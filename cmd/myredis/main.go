// Command myredis is a Redis-compatible server whose commands all run on one
// executor goroutine. Flags follow redis-server: myredis [config-file] [--port 6379] ...
package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	"waitroom/myredis"
)

func main() {
	cfg, err := myredis.ParseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "myredis:", err)
		os.Exit(2)
	}
	if n := threads(cfg); n > 0 {
		runtime.GOMAXPROCS(n)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(cfg.LogLevel)}))
	srv, err := myredis.Open(cfg, myredis.WithLogger(log))
	if err != nil {
		log.Error("cannot start", "err", err)
		os.Exit(1)
	}
	if path := os.Getenv("MYREDIS_CPUPROFILE"); path != "" {
		// for scripts/compare-redis.sh PROFILE=dir; written when the server stops
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			log.Error("cannot profile", "err", err)
			os.Exit(1)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	closed := make(chan struct{})
	go func() {
		s := <-sig
		log.Info("shutting down", "signal", s.String())
		srv.Close() // flushes and fsyncs the AOF
		close(closed)
	}()
	log.Info("ready to accept connections", "bind", cfg.Bind, "port", cfg.Port, "workers", cfg.Workers,
		"threads", runtime.GOMAXPROCS(0))
	if err := srv.ListenAndServe(); err != nil {
		log.Error("server stopped", "err", err)
		os.Exit(1) //nolint:gocritic // the profile of a failed start is of no use
	}
	<-closed
}

// threads is how many threads may run Go code (GOMAXPROCS), or 0 for Go's default.
// --io-threads decides, like Redis's io-threads; without it, one thread, as Redis
// runs by default. Every command runs on the executor goroutine anyway, and a second
// thread for the connection goroutines measured slower on a 2-core machine (0.8x Redis
// instead of 1.0x without pipelining; docs/performance.md): handing each batch to the
// executor and back crosses threads, and the wake-ups cost more than the parallel
// reads and writes save. A GOMAXPROCS environment variable is respected, and
// --workers N > 1 keeps every CPU, since that mode exists to run commands in parallel.
func threads(cfg myredis.Config) int {
	switch {
	case cfg.IOThreads > 0:
		return cfg.IOThreads
	case os.Getenv("GOMAXPROCS") != "" || cfg.Workers > 1:
		return 0
	}
	return 1
}

// logLevel maps redis.conf's loglevel names onto slog levels.
func logLevel(name string) slog.Level {
	switch name {
	case "debug", "verbose":
		return slog.LevelDebug
	case "warning":
		return slog.LevelWarn
	}
	return slog.LevelInfo
}
