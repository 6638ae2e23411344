// Command myredis is a Redis-compatible server whose commands all run on one
// executor goroutine. Flags follow redis-server: myredis [config-file] [--port 6379] ...
package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"waitroom/myredis"
)

func main() {
	cfg, err := myredis.ParseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "myredis:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(cfg.LogLevel)}))
	srv, err := myredis.Open(cfg, myredis.WithLogger(log))
	if err != nil {
		log.Error("cannot start", "err", err)
		os.Exit(1)
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
	log.Info("ready to accept connections", "bind", cfg.Bind, "port", cfg.Port, "workers", cfg.Workers)
	if err := srv.ListenAndServe(); err != nil {
		log.Error("server stopped", "err", err)
		os.Exit(1)
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
