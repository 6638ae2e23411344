// Package demosite is a tiny protected site for demonstrations and tests: its
// /checkout sits behind the waiting room through package gate, which lets in
// whoever brings a valid pass (the queue's /enter), keeps the session in a
// signed cookie and gives the place back (/release) when the visitor is done.
// A real site mounts the same gate.
package demosite

import (
	"bytes"
	"crypto/rand"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strings"

	"waitroom/queue/gate"
)

// Config configures a Site.
type Config struct {
	// QueueURLs are base URLs of queue instances (http://127.0.0.1:8081);
	// each call tries them in order until one answers.
	QueueURLs []string
	Queue     string
	// RoomURL is the waiting room page as visitors reach it (default: the
	// first queue URL + "/q/" + Queue).
	RoomURL string
	// Secret signs the session cookie (>= 32 bytes, the same on every replica
	// of the site); empty: a random one, fine for a single process.
	Secret []byte
	Client *http.Client // default: 5 s timeout
	Logger *slog.Logger
}

// Site is the protected site's handler: /checkout sits behind a gate.
type Site struct {
	cfg  Config
	gate *gate.Gate
	mux  *http.ServeMux
}

// New returns the site.
func New(cfg Config) (*Site, error) {
	if len(cfg.QueueURLs) == 0 || cfg.Queue == "" {
		return nil, errors.New("demosite: need queue URLs and a queue name")
	}
	if len(cfg.Secret) == 0 {
		cfg.Secret = make([]byte, 32)
		if _, err := rand.Read(cfg.Secret); err != nil {
			return nil, err
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RoomURL == "" {
		cfg.RoomURL = strings.TrimRight(cfg.QueueURLs[0], "/") + "/q/" + cfg.Queue
	}
	g, err := gate.New(gate.Config{QueueURLs: cfg.QueueURLs, Queue: cfg.Queue, Prefix: "/checkout", RoomURL: cfg.RoomURL,
		Secret: cfg.Secret, Client: cfg.Client, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	s := &Site{cfg: cfg, gate: g, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /{$}", s.home)
	s.mux.Handle("GET /checkout", g.Protect(http.HandlerFunc(s.checkout)))
	s.mux.Handle("POST /checkout/done", g.ReleaseHandler("/left"))
	s.mux.HandleFunc("GET /left", s.left)
	return s, nil
}

func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// roomURL is the waiting room page on the first instance.
func (s *Site) roomURL() string { return s.cfg.RoomURL }

type pageData struct {
	State, Title, Message, Expires, Room string
}

func (s *Site) render(w http.ResponseWriter, status int, d pageData) {
	d.Room = s.roomURL()
	var buf bytes.Buffer
	if err := page.Execute(&buf, d); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Site) home(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, pageData{State: "home", Title: "Demo shop",
		Message: "Checkout is protected by a waiting room. Get in line to continue."})
}

// checkout is the protected page: the gate has let the visitor in.
func (s *Site) checkout(w http.ResponseWriter, r *http.Request) {
	sess, _ := gate.FromContext(r.Context())
	exp := sess.ExpiresAt.Local().Format("15:04:05")
	s.render(w, http.StatusOK, pageData{State: "entered", Title: "You're in",
		Message: "Welcome to checkout. Your place is held until " + exp + " while you stay active.", Expires: exp})
}

// left thanks a visitor whose place went back to the queue.
func (s *Site) left(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, pageData{State: "left", Title: "Thanks for visiting",
		Message: "Your place went to the next person in line."})
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}} · Demo shop</title><link rel="icon" href="data:,">
<style>
body{margin:0;min-height:100vh;display:grid;place-items:center;padding:16px;box-sizing:border-box;
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1b1f24}
main{max-width:460px;width:100%;box-sizing:border-box;background:#fff;border:1px solid #e3e6ea;border-radius:16px;padding:28px}
h1{margin:0 0 8px;font-size:1.5rem}p{color:#5b6470}.tag{font-size:.8rem;letter-spacing:.08em;text-transform:uppercase;color:#5b6470}
[data-state=entered] h1{color:#1f9d55}
a.button,button{display:inline-block;width:100%;padding:12px;border:0;border-radius:10px;background:#2f6fed;color:#fff;
font:inherit;font-weight:600;text-align:center;text-decoration:none;cursor:pointer;box-sizing:border-box}
@media (prefers-color-scheme:dark){body{background:#0f1216;color:#e8eaed}main{background:#181c22;border-color:#2a3038}p,.tag{color:#9aa3ad}}
</style></head>
<body><main id="result" data-state="{{.State}}">
<p class="tag">Demo shop · checkout</p>
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
{{if eq .State "entered"}}<form method="post" action="/checkout/done">
<button type="submit">Finish and leave</button></form>
{{else}}<a class="button" href="{{.Room}}">Go to the waiting room</a>{{end}}
</main></body></html>
`))
