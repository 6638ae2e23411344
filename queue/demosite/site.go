// Package demosite is a tiny protected site for demonstrations and tests: it
// lets in whoever brings a valid pass from the waiting room, by calling the
// queue service's /enter, and gives the place back with /release when the
// visitor is done. A real site does the same two calls.
package demosite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Config configures a Site.
type Config struct {
	// QueueURLs are base URLs of queue instances (http://127.0.0.1:8081);
	// each call tries them in order until one answers.
	QueueURLs []string
	Queue     string
	Client    *http.Client // default: 5 s timeout
	Logger    *slog.Logger
}

// Site is the protected site's handler.
type Site struct {
	cfg Config
	mux *http.ServeMux
}

// New returns the site.
func New(cfg Config) (*Site, error) {
	if len(cfg.QueueURLs) == 0 || cfg.Queue == "" {
		return nil, errors.New("demosite: need queue URLs and a queue name")
	}
	for i, u := range cfg.QueueURLs {
		cfg.QueueURLs[i] = strings.TrimRight(u, "/")
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Site{cfg: cfg, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /{$}", s.home)
	s.mux.HandleFunc("GET /checkout", s.checkout)
	s.mux.HandleFunc("POST /checkout/done", s.done)
	return s, nil
}

func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// roomURL is the waiting room page on the first instance.
func (s *Site) roomURL() string { return s.cfg.QueueURLs[0] + "/q/" + s.cfg.Queue }

// call POSTs body to path on the first queue instance that answers, with the
// bearer token when given. It returns the status and the decoded JSON body.
func (s *Site) call(ctx context.Context, path, token string, body any) (int, map[string]any, error) {
	data, _ := json.Marshal(body)
	var lastErr error
	for _, base := range s.cfg.QueueURLs {
		req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/queues/"+s.cfg.Queue+path, bytes.NewReader(data))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := s.cfg.Client.Do(req)
		if err != nil {
			lastErr = err
			continue // try the next instance
		}
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
		if res.StatusCode == http.StatusServiceUnavailable {
			lastErr = fmt.Errorf("%s: 503", base)
			continue
		}
		out := map[string]any{}
		json.Unmarshal(raw, &out)
		return res.StatusCode, out, nil
	}
	return 0, nil, lastErr
}

type pageData struct {
	State, Title, Message, Ticket, Expires, Room string
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

// checkout lets in the holder of a valid pass. Without a pass the visitor is
// sent to the waiting room, as a real protected site would.
func (s *Site) checkout(w http.ResponseWriter, r *http.Request) {
	pass := r.URL.Query().Get("pass")
	if pass == "" {
		http.Redirect(w, r, s.roomURL(), http.StatusSeeOther)
		return
	}
	code, body, err := s.call(r.Context(), "/enter", "", map[string]string{"pass": pass})
	if err != nil {
		s.cfg.Logger.Warn("enter failed", "err", err)
		s.render(w, http.StatusBadGateway, pageData{State: "unavailable", Title: "Waiting room unavailable",
			Message: "We could not check your pass. Reload the page in a moment."})
		return
	}
	switch code {
	case http.StatusOK:
		ticket, _ := body["session"].(string) // the session token: only it can release
		exp, _ := body["expires_at"].(string)
		if t, err := time.Parse(time.RFC3339, exp); err == nil {
			exp = t.Local().Format("15:04:05")
		}
		s.cfg.Logger.Info("visitor entered", "expires_at", exp)
		s.render(w, http.StatusOK, pageData{State: "entered", Title: "You're in",
			Message: "Welcome to checkout. Your place is held until " + exp + ".", Ticket: ticket, Expires: exp})
	case http.StatusConflict:
		s.render(w, http.StatusConflict, pageData{State: "used", Title: "Pass already used",
			Message: "This pass has been used. Each pass lets one visitor in once."})
	case http.StatusGone:
		s.render(w, http.StatusGone, pageData{State: "expired", Title: "Pass expired",
			Message: "Your session ended before you arrived. Please get in line again."})
	default:
		s.render(w, http.StatusForbidden, pageData{State: "invalid", Title: "Invalid pass",
			Message: "This pass is not valid here."})
	}
}

// done gives the visitor's place back to the queue.
func (s *Site) done(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	ticket := r.PostFormValue("ticket")
	if ticket == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	code, _, err := s.call(r.Context(), "/release", ticket, struct{}{})
	if err != nil || code != http.StatusOK {
		s.cfg.Logger.Warn("release failed", "status", code, "err", err)
	}
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
{{if eq .State "entered"}}<form method="post" action="/checkout/done"><input type="hidden" name="ticket" value="{{.Ticket}}">
<button type="submit">Finish and leave</button></form>
{{else}}<a class="button" href="{{.Room}}">Go to the waiting room</a>{{end}}
</main></body></html>
`))
