// Command demotarget is the protected site of the demo: it admits visitors
// who bring a pass from the waiting room (calling the queue's /enter) and
// gives their place back when they leave (/release). With --crowd N it also
// simulates N visitors so the demo queue moves.
//
//	demotarget --listen 127.0.0.1:9000 --queue-url http://127.0.0.1:8081,http://127.0.0.1:8082 --queue demo
//
// Every flag also comes from the environment (DEMOTARGET_QUEUE_URL, ...).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"waitroom/cmd/internal/envflag"
	"waitroom/queue/demosite"
)

func main() {
	fs := flag.NewFlagSet("demotarget", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:9000", "HTTP listen address")
	urls := fs.String("queue-url", "http://127.0.0.1:8081", "comma-separated base URLs of queue instances, tried in order")
	name := fs.String("queue", "demo", "the queue that guards this site")
	crowd := fs.Int("crowd", 0, "simulated visitors that keep the queue busy")
	hold := fs.Duration("crowd-hold", 10*time.Second, "mean time a simulated visitor stays once in")
	forwarded := fs.Bool("crowd-forwarded-for", false, "give each simulated visit its own X-Forwarded-For address (203.0.113.0/24), for queues that trust this host as a proxy")
	room := fs.String("room-url", "", "the waiting room page as visitors reach it (default: the first queue URL + /q/QUEUE)")
	secret := fs.String("cookie-secret", "", "key that signs the session cookie, >= 32 bytes, the same on every replica (default: random per process)")
	if err := envflag.Parse(fs, "DEMOTARGET", os.Args[1:], nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "demotarget:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", "demotarget")
	queueURLs := strings.Split(*urls, ",")
	if *secret != "" && len(*secret) < 32 {
		fmt.Fprintln(os.Stderr, "demotarget: --cookie-secret needs at least 32 bytes")
		os.Exit(2)
	}
	site, err := demosite.New(demosite.Config{QueueURLs: queueURLs, Queue: *name, RoomURL: *room, Secret: []byte(*secret), Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "demotarget:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Error("cannot listen", "err", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *crowd > 0 {
		c := &demosite.Crowd{QueueURLs: queueURLs, Queue: *name, Users: *crowd, Hold: *hold, ForwardedFor: *forwarded}
		go c.Run(ctx)
		log.Info("simulating a crowd", "visitors", *crowd, "hold", *hold)
	}
	srv := &http.Server{Handler: site, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 15 * time.Second}
	go srv.Serve(ln)
	log.Info("listening", "addr", ln.Addr().String(), "queue", *name, "queue_urls", *urls)
	<-ctx.Done()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
}
