// Command myredis is a Redis-compatible server whose commands all run on one
// executor goroutine. Flags follow redis-server: myredis [config-file] [--port 6379] ...
package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"waitroom/myredis"
)

// daemonEnv marks the background copy of a daemonized myredis.
const daemonEnv = "MYREDIS_DAEMONIZED"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 1 {
		switch args[0] {
		case "-v", "--version":
			fmt.Println(versionLine())
			return 0
		case "-h", "--help":
			fmt.Fprint(os.Stderr, usage)
			return 1
		}
	}
	cfg, err := myredis.ParseArgs(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// supervised: upstart or systemd instead of daemonizing, asked before
	// loading the data, as Redis does (upstart's SIGSTOP happens here)
	sup := myredis.Supervise(cfg.Supervised)
	if cfg.Daemonize && sup.Mode == "" && os.Getenv(daemonEnv) == "" {
		return daemonize()
	}
	if cfg.IOThreads > 0 {
		// One thread is faster for light commands on few cores, several for heavy
		// ones, scripts and the AOF: docs/performance.md. Unset, Go's default.
		runtime.GOMAXPROCS(cfg.IOThreads)
	}
	out, err := logOutput(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "myredis: can't open the log file:", err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: logLevel(cfg.LogLevel)}))
	for _, name := range cfg.Unsupported {
		log.Warn("config option accepted but not implemented by MyRedis", "option", name)
	}
	for _, n := range sup.Notes {
		if n.Warning {
			log.Warn(n.Msg)
		} else {
			log.Info(n.Msg)
		}
	}
	// the process is the server's own: GOMEMLIMIT follows maxmemory (maxmemory.go)
	srv, err := myredis.Open(cfg, myredis.WithLogger(log), myredis.WithGoMemoryLimit(), myredis.WithSupervisor(sup))
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	if path := os.Getenv("MYREDIS_CPUPROFILE"); path != "" {
		// for scripts/compare-redis.sh PROFILE=dir; written when the server stops
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			log.Error("cannot profile", "err", err)
			return 1
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		log.Info("shutting down", "signal", s.String())
		srv.ShutdownOnSignal() // STOPPING=1 to systemd; the RDB, when save points are set
		srv.Close()            // flushes and fsyncs the AOF
	}()
	log.Info("ready to accept connections", "bind", cfg.Bind, "port", cfg.Port, "workers", cfg.Workers,
		"threads", runtime.GOMAXPROCS(0))
	if err := srv.ListenAndServe(); err != nil {
		log.Error("server stopped", "err", err)
		srv.Close()
		return 1
	}
	<-srv.Done() // a signal or SHUTDOWN: the AOF is flushed, the pidfile removed
	log.Info("myredis is now ready to exit, bye bye")
	return 0
}

// logOutput is where the log goes: logfile; when it is "", stderr (Redis writes
// to stdout; stderr keeps the log apart from --version and the like), or nowhere
// for a daemon, as Redis.
func logOutput(cfg myredis.Config) (io.Writer, error) {
	switch {
	case cfg.LogFile != "":
		return os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	case cfg.Daemonize:
		return io.Discard, nil
	}
	return os.Stderr, nil
}

// daemonize starts this program again in the background, in its own session and
// detached from the terminal, and returns at once, as Redis's fork does.
func daemonize() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "myredis: daemonize:", err)
		return 1
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "myredis: daemonize:", err)
		return 1
	}
	defer null.Close()
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "myredis: daemonize:", err)
		return 1
	}
	return 0
}

// versionLine is --version in redis-server's shape.
func versionLine() string {
	sha, dirty := "00000000", "0"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 8:
				sha = s.Value[:8]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "1"
			}
		}
	}
	return fmt.Sprintf("MyRedis server v=%s sha=%s:%s malloc=go bits=64 build=%s",
		myredis.RedisVersion, sha, dirty, runtime.Version())
}

const usage = `Usage: ./myredis [/path/to/redis.conf] [options] [-]
       ./myredis - (read config from stdin)
       ./myredis -v or --version
       ./myredis -h or --help

Examples:
       ./myredis (run the server with default conf)
       echo 'maxmemory 128mb' | ./myredis -
       ./myredis /etc/redis/6379.conf
       ./myredis --port 7777
       ./myredis --port 7777 --workers 4
       ./myredis /etc/myredis.conf --loglevel verbose -
       ./myredis /etc/myredis.conf --loglevel verbose
`

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
