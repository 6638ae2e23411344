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
	if cfg.IOThreads > 0 {
		// One thread is faster for light commands on few cores, several for heavy
		// ones, scripts and the AOF: docs/performance.md. Unset, Go's default.
		runtime.GOMAXPROCS(cfg.IOThreads)
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
