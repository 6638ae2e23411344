// Command sidecar runs package gate as its own service, for a site of any
// language behind nginx (see ../waitroom.conf and ../README.md):
//
//	sidecar --listen 127.0.0.1:9100 --queue-url http://127.0.0.1:8081 --queue tickets \
//	        --room-url https://queue.example/q/tickets   # GATE_COOKIE_SECRET in the environment
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"waitroom/queue/gate"
)

func main() {
	fs := flag.NewFlagSet("sidecar", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:9100", "HTTP listen address (nginx's upstream)")
	urls := fs.String("queue-url", "http://127.0.0.1:8081", "comma-separated base URLs of queue instances")
	name := fs.String("queue", "tickets", "the queue that guards the site")
	room := fs.String("room-url", "", "the waiting room page as visitors reach it")
	secret := fs.String("cookie-secret", os.Getenv("GATE_COOKIE_SECRET"), "key that signs the session cookie, >= 32 bytes, the same on every replica (default $GATE_COOKIE_SECRET)")
	after := fs.String("after-release", "/", "where a visitor goes after leaving")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "sidecar:", err)
		os.Exit(2)
	}
	g, err := gate.New(gate.Config{QueueURLs: strings.Split(*urls, ","), Queue: *name, RoomURL: *room,
		Secret: []byte(*secret)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidecar:", err)
		os.Exit(2)
	}
	srv := &http.Server{Addr: *listen, Handler: g.Sidecar(*after), ReadHeaderTimeout: 5 * time.Second}
	slog.Info("gate sidecar listening", "addr", *listen, "queue", *name)
	if err := srv.ListenAndServe(); err != nil {
		slog.Error("sidecar stopped", "err", err)
		os.Exit(1)
	}
}
