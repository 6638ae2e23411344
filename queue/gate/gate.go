// Package gate protects a site behind the waiting room: net/http middleware
// that sends visitors without an entered session to the waiting room, trades
// the pass they come back with for an entered session (the queue's /enter),
// keeps that session in a signed, HttpOnly, SameSite cookie, heartbeats it
// while the visitor is active and releases it when the visitor leaves.
//
//	g, _ := gate.New(gate.Config{QueueURLs: []string{"http://127.0.0.1:8081"},
//		Queue: "tickets", Prefix: "/checkout/", Secret: key})
//	mux.Handle("/checkout/", g.Protect(checkout))
//	mux.Handle("POST /leave", g.ReleaseHandler("/"))
//
// The gate keeps no state of its own: run it in every replica of the site.
package gate

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config configures a Gate.
type Config struct {
	// QueueURLs are base URLs of queue instances (http://127.0.0.1:8081); each
	// call tries them in order until one answers.
	QueueURLs []string
	// Queue is the queue that guards the site.
	Queue string
	// Prefix is the protected path prefix ("/checkout/"); "" or "/" protects
	// every path.
	Prefix string
	// Secret signs the session cookie: at least 32 bytes, the same on every
	// replica of the site.
	Secret []byte
	// RoomURL is where a visitor without a session is sent (default: the first
	// queue URL + "/q/" + Queue).
	RoomURL string
	// CookieName defaults to "waitroom_session".
	CookieName string
	// Secure marks the cookie Secure; when false it is Secure only on requests
	// that arrived over TLS.
	Secure bool
	// HeartbeatEvery: a protected request heartbeats the session when the last
	// heartbeat is older than this (default 30 s).
	HeartbeatEvery time.Duration
	// Client calls the queue (default: 5 s timeout).
	Client *http.Client
	Logger *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Errors of New.
var (
	ErrNoQueue     = errors.New("gate: need queue URLs and a queue name")
	ErrShortSecret = errors.New("gate: the cookie secret must have at least 32 bytes")
)

const minSecretLen = 32

// Gate is the middleware. Its methods are safe for concurrent use.
type Gate struct {
	cfg    Config
	cookie cookieCodec
	queue  *queueClient
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Gate, error) {
	if len(cfg.QueueURLs) == 0 || cfg.Queue == "" {
		return nil, ErrNoQueue
	}
	if len(cfg.Secret) < minSecretLen {
		return nil, ErrShortSecret
	}
	urls := make([]string, len(cfg.QueueURLs))
	for i, u := range cfg.QueueURLs {
		urls[i] = strings.TrimRight(u, "/")
	}
	cfg.QueueURLs = urls
	if cfg.RoomURL == "" {
		cfg.RoomURL = urls[0] + "/q/" + url.PathEscape(cfg.Queue)
	}
	if cfg.CookieName == "" {
		cfg.CookieName = "waitroom_session"
	}
	if cfg.HeartbeatEvery <= 0 {
		cfg.HeartbeatEvery = 30 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	g := &Gate{cfg: cfg, cookie: cookieCodec{secret: cfg.Secret}}
	g.queue = &queueClient{urls: urls, queue: cfg.Queue, client: cfg.Client}
	return g, nil
}

// Session is an entered visitor's session, as the protected handler sees it.
type Session struct {
	Token     string    // the queue's entered-session token (for heartbeat and release)
	ExpiresAt time.Time // when the queue ends the session without a heartbeat
}

type sessionKey struct{}

// FromContext returns the session of a request that passed the gate.
func FromContext(ctx context.Context) (Session, bool) {
	s, ok := ctx.Value(sessionKey{}).(Session)
	return s, ok
}

// Protect wraps next: requests under the prefix need an entered session.
func (g *Gate) Protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.covers(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if pass := r.URL.Query().Get("pass"); pass != "" {
			g.enter(w, r, pass)
			return
		}
		sess, ok := g.session(w, r)
		if !ok {
			g.toRoom(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess)))
	})
}

// covers reports whether path is protected.
func (g *Gate) covers(path string) bool {
	p := g.cfg.Prefix
	if p == "" || p == "/" {
		return true
	}
	p = strings.TrimRight(p, "/")
	return path == p || strings.HasPrefix(path, p+"/")
}

// enter trades a pass for an entered session, sets the cookie and sends the
// visitor to the same URL without the pass (so it is not left in history or
// in a Referer).
func (g *Gate) enter(w http.ResponseWriter, r *http.Request, pass string) {
	res, err := g.queue.enter(r.Context(), pass)
	if err != nil {
		g.cfg.Logger.Warn("gate: enter failed", "err", err)
		http.Error(w, "The waiting room cannot be reached. Reload the page in a moment.", http.StatusBadGateway)
		return
	}
	switch res.status {
	case http.StatusOK:
		now := g.cfg.Now()
		g.setCookie(w, r, cookieValue{token: res.Session, expires: res.expiresAt, heartbeat: now})
		http.Redirect(w, r, withoutPass(r.URL), http.StatusSeeOther)
	case http.StatusConflict:
		// A used pass: the visitor may already hold a session (a reload of the
		// pass URL); otherwise it is someone else's pass.
		if _, ok := g.session(w, r); ok {
			http.Redirect(w, r, withoutPass(r.URL), http.StatusSeeOther)
			return
		}
		http.Error(w, "This pass has already been used.", http.StatusForbidden)
	case http.StatusGone:
		g.toRoom(w, r)
	default:
		http.Error(w, "This pass is not valid here.", http.StatusForbidden)
	}
}

// session reads and checks the cookie, heartbeating when one is due. It
// clears the cookie of a session the queue has ended.
func (g *Gate) session(w http.ResponseWriter, r *http.Request) (Session, bool) {
	c, err := r.Cookie(g.cfg.CookieName)
	if err != nil {
		return Session{}, false
	}
	v, ok := g.cookie.decode(c.Value)
	now := g.cfg.Now()
	if !ok || !now.Before(v.expires) {
		g.clearCookie(w, r)
		return Session{}, false
	}
	if now.Sub(v.heartbeat) >= g.cfg.HeartbeatEvery {
		v, ok = g.heartbeat(w, r, v, now)
		if !ok {
			return Session{}, false
		}
	}
	return Session{Token: v.token, ExpiresAt: v.expires}, true
}

// heartbeat extends the session at the queue. When the queue cannot be
// reached the visitor keeps the session it has (until it expires).
func (g *Gate) heartbeat(w http.ResponseWriter, r *http.Request, v cookieValue, now time.Time) (cookieValue, bool) {
	res, err := g.queue.heartbeat(r.Context(), v.token)
	switch {
	case err != nil:
		g.cfg.Logger.Warn("gate: heartbeat failed", "err", err)
		return v, true
	case res.status == http.StatusOK:
		v.heartbeat = now
		if res.expiresAt.After(v.expires) {
			v.expires = res.expiresAt
		}
		g.setCookie(w, r, v)
		return v, true
	case res.status == http.StatusGone || res.status == http.StatusUnauthorized:
		g.clearCookie(w, r)
		return v, false
	default:
		g.cfg.Logger.Warn("gate: heartbeat refused", "status", res.status)
		return v, true
	}
}

// ReleaseHandler gives the visitor's place back to the queue, clears the
// cookie and redirects to next. Mount it on a POST route.
func (g *Gate) ReleaseHandler(next string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie(g.cfg.CookieName); err == nil {
			if v, ok := g.cookie.decode(c.Value); ok {
				if _, err := g.queue.release(r.Context(), v.token); err != nil {
					g.cfg.Logger.Warn("gate: release failed", "err", err)
				}
			}
		}
		g.clearCookie(w, r)
		http.Redirect(w, r, next, http.StatusSeeOther)
	})
}

// AuthHandler answers nginx's auth_request subrequests: 204 with a valid
// session (heartbeating it when due; the refreshed cookie is in the answer's
// Set-Cookie for nginx to pass on), 401 otherwise.
func (g *Gate) AuthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := g.session(w, r); !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// toRoom redirects to the waiting room.
func (g *Gate) toRoom(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, g.cfg.RoomURL, http.StatusSeeOther)
}

func (g *Gate) setCookie(w http.ResponseWriter, r *http.Request, v cookieValue) {
	http.SetCookie(w, &http.Cookie{
		Name: g.cfg.CookieName, Value: g.cookie.encode(v), Path: "/",
		Expires: v.expires, HttpOnly: true, Secure: g.cfg.Secure || r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
}

func (g *Gate) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: g.cfg.CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: g.cfg.Secure || r.TLS != nil, SameSite: http.SameSiteLaxMode,
	})
}

// withoutPass is u's path and query less the pass parameter.
func withoutPass(u *url.URL) string {
	q := u.Query()
	q.Del("pass")
	out := url.URL{Path: u.Path, RawQuery: q.Encode()}
	if out.Path == "" {
		out.Path = "/"
	}
	return out.String()
}

// Sidecar is the gate as a service of its own, for a site behind a reverse
// proxy that asks it before serving (nginx auth_request; examples/nginx):
//
//	GET  /_waitroom/auth     204 with a valid session, 401 otherwise (AuthHandler)
//	POST /_waitroom/release  gives the place back, then redirects to afterRelease
//	anything else            the requests the proxy sent here because auth
//	                         failed: with ?pass= the visitor enters and is sent
//	                         back to the same URL with the cookie; without, to
//	                         the waiting room
func (g *Gate) Sidecar(afterRelease string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /_waitroom/auth", g.AuthHandler())
	mux.Handle("POST /_waitroom/release", g.ReleaseHandler(afterRelease))
	everything := *g
	everything.cfg.Prefix = "/"
	mux.Handle("/", everything.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// a valid session that the proxy did not see (it asked before the
		// cookie was set): send the visitor back to where they were going
		http.Redirect(w, r, r.URL.RequestURI(), http.StatusSeeOther)
	})))
	return mux
}
