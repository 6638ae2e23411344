package gate

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue/gate/gatetest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	clk   *clock
	queue *gatetest.Queue
	gate  *Gate
	site  http.Handler
}

var secret = []byte("0123456789abcdef0123456789abcdef")

func newFixture(t *testing.T, urls ...string) *fixture {
	clk := &clock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	q := gatetest.NewQueue("shop", clk.now)
	srv := httptest.NewServer(q)
	t.Cleanup(srv.Close)
	g, err := New(Config{QueueURLs: append(urls, srv.URL), Queue: "shop", Prefix: "/checkout/",
		Secret: secret, Now: clk.now, HeartbeatEvery: 10 * time.Second})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/checkout/", g.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := FromContext(r.Context())
		if !ok {
			http.Error(w, "no session", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "inside "+s.Token)
	})))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "public") })
	mux.Handle("POST /leave", g.ReleaseHandler("/bye"))
	mux.Handle("/_auth", g.AuthHandler())
	return &fixture{clk: clk, queue: q, gate: g, site: mux}
}

// do sends a request with the given cookies and returns the recorder.
func (f *fixture) do(method, target string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	f.site.ServeHTTP(rec, req)
	return rec
}

func sessionCookie(t *testing.T, rec *httptest.ResponseRecorder) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if c.Name == "waitroom_session" {
			return c
		}
	}
	t.Fatalf("no session cookie in %v", rec.Header())
	return nil
}

func TestWithoutSessionGoesToRoom(t *testing.T) {
	f := newFixture(t)
	rec := f.do("GET", "/checkout/cart")
	assert.Equal(t, http.StatusSeeOther, rec.Code)
	loc, _ := url.Parse(rec.Header().Get("Location"))
	assert.Equal(t, "/q/shop", loc.Path)
	assert.Equal(t, "public", f.do("GET", "/about").Body.String(), "paths outside the prefix are not gated")
}

func TestPassEntersAndCookieKeepsTheSession(t *testing.T) {
	f := newFixture(t)
	rec := f.do("GET", "/checkout/cart?pass=good&item=7")
	require.Equal(t, http.StatusSeeOther, rec.Code)
	assert.Equal(t, "/checkout/cart?item=7", rec.Header().Get("Location"), "the pass is dropped from the URL")
	c := sessionCookie(t, rec)
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteLaxMode, c.SameSite)
	assert.NotContains(t, c.Value, "good")

	rec = f.do("GET", "/checkout/cart", c)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "inside tok-1", rec.Body.String())

	// the same pass again: used; with the session it is a reload, without it a thief
	assert.Equal(t, http.StatusSeeOther, f.do("GET", "/checkout/cart?pass=good", c).Code)
	assert.Equal(t, http.StatusForbidden, f.do("GET", "/checkout/cart?pass=good").Code)
	assert.Equal(t, http.StatusForbidden, f.do("GET", "/checkout/cart?pass=forged").Code)
}

func TestTamperedOrForeignCookieIsRefused(t *testing.T) {
	f := newFixture(t)
	c := sessionCookie(t, f.do("GET", "/checkout/?pass=good"))
	bad := *c
	bad.Value = strings.Replace(c.Value, ".", ".9", 1) // change the deadline
	rec := f.do("GET", "/checkout/", &bad)
	assert.Equal(t, http.StatusSeeOther, rec.Code)
	assert.Equal(t, -1, sessionCookie(t, rec).MaxAge, "a bad cookie is cleared")

	other, err := New(Config{QueueURLs: []string{"http://x"}, Queue: "shop", Secret: []byte(strings.Repeat("k", 32))})
	require.NoError(t, err)
	foreign := &http.Cookie{Name: "waitroom_session", Value: other.cookie.encode(cookieValue{token: "tok-1",
		expires: f.clk.now().Add(time.Hour), heartbeat: f.clk.now()})}
	assert.Equal(t, http.StatusSeeOther, f.do("GET", "/checkout/", foreign).Code)
}

func TestHeartbeatExtendsAndEndedSessionLeaves(t *testing.T) {
	f := newFixture(t)
	c := sessionCookie(t, f.do("GET", "/checkout/?pass=good"))
	f.clk.add(5 * time.Second)
	require.Equal(t, http.StatusOK, f.do("GET", "/checkout/", c).Code)
	assert.Equal(t, 0, f.queue.Heartbeats(), "no heartbeat before HeartbeatEvery")

	f.clk.add(50 * time.Second) // 55 s in: a heartbeat is due, the session (1 min) is alive
	rec := f.do("GET", "/checkout/", c)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, 1, f.queue.Heartbeats())
	c2 := sessionCookie(t, rec)
	f.clk.add(30 * time.Second) // past the first deadline, within the extended one
	assert.Equal(t, http.StatusOK, f.do("GET", "/checkout/", c2).Code)
	assert.Equal(t, http.StatusSeeOther, f.do("GET", "/checkout/", c).Code, "the old cookie's deadline has passed")

	// the queue ends the session (e.g. its maximum length): the next heartbeat sends the visitor out
	f.queue.End("tok-1")
	f.clk.add(11 * time.Second)
	rec = f.do("GET", "/checkout/", c2)
	assert.Equal(t, http.StatusSeeOther, rec.Code)
	assert.Equal(t, -1, sessionCookie(t, rec).MaxAge)
}

func TestReleaseGivesThePlaceBack(t *testing.T) {
	f := newFixture(t)
	c := sessionCookie(t, f.do("GET", "/checkout/?pass=good"))
	rec := f.do("POST", "/leave", c)
	assert.Equal(t, http.StatusSeeOther, rec.Code)
	assert.Equal(t, "/bye", rec.Header().Get("Location"))
	assert.Equal(t, -1, sessionCookie(t, rec).MaxAge)
	assert.Equal(t, []string{"tok-1"}, f.queue.Released())
}

func TestAuthHandlerForNginx(t *testing.T) {
	f := newFixture(t)
	assert.Equal(t, http.StatusUnauthorized, f.do("GET", "/_auth").Code)
	c := sessionCookie(t, f.do("GET", "/checkout/?pass=good"))
	assert.Equal(t, http.StatusNoContent, f.do("GET", "/_auth", c).Code)
}

func TestQueueDownAndFailover(t *testing.T) {
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	dead.Close() // connection refused
	f := newFixture(t, dead.URL)
	assert.Equal(t, http.StatusSeeOther, f.do("GET", "/checkout/?pass=good").Code, "the second instance answers")

	g, err := New(Config{QueueURLs: []string{dead.URL}, Queue: "shop", Secret: secret})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	g.Protect(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/x?pass=good", nil))
	assert.Equal(t, http.StatusBadGateway, rec.Code)
}

// TestEnterRetriedWithItsKey: an instance enters the pass but its answer is
// lost (503); the gate's retry on the next instance carries the same
// Idempotency-Key and gets the session, not 409.
func TestEnterRetriedWithItsKey(t *testing.T) {
	var f *fixture
	var keys []string
	lossy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		f.queue.ServeHTTP(httptest.NewRecorder(), r) // entered, the answer lost
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(lossy.Close)
	f = newFixture(t, lossy.URL)
	rec := f.do("GET", "/checkout/?pass=good")
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, "inside tok-1", f.do("GET", "/checkout/", sessionCookie(t, rec)).Body.String())
	require.Len(t, keys, 1)
	assert.Len(t, keys[0], 32, "a random key")
}

func TestNewChecksConfig(t *testing.T) {
	_, err := New(Config{Queue: "q", Secret: secret})
	assert.ErrorIs(t, err, ErrNoQueue)
	_, err = New(Config{QueueURLs: []string{"http://x"}, Queue: "q", Secret: []byte("short")})
	assert.ErrorIs(t, err, ErrShortSecret)
}

func TestCovers(t *testing.T) {
	g := &Gate{cfg: Config{Prefix: "/checkout/"}}
	assert.True(t, g.covers("/checkout"))
	assert.True(t, g.covers("/checkout/pay"))
	assert.False(t, g.covers("/checkouts"))
	assert.False(t, g.covers("/"))
	g.cfg.Prefix = "/shop"
	assert.True(t, g.covers("/shop/x"))
	assert.False(t, g.covers("/shopping"))
}

// TestCookieVector pins the cookie format; examples/node/gate.test.mjs checks
// the Node gate against the same value, so both can serve one site.
func TestCookieVector(t *testing.T) {
	c := cookieCodec{secret: []byte(strings.Repeat("s", 32))}
	v := cookieValue{token: "tok-1", expires: time.UnixMilli(1796212800000), heartbeat: time.UnixMilli(1796209200000)}
	assert.Equal(t, "dG9rLTE.1796212800000.1796209200000.54CxQq0-Ra1QW49o24vRr_X7v7bBf4S132X-uCaYWGY", c.encode(v))
}

func FuzzCookieDecode(f *testing.F) {
	c := cookieCodec{secret: secret}
	f.Add(c.encode(cookieValue{token: "t", expires: time.UnixMilli(5), heartbeat: time.UnixMilli(1)}))
	f.Add("a.b.c.d")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := c.decode(s)
		if ok && c.encode(v) != s {
			t.Fatalf("decoded %q but it encodes to %q", s, c.encode(v))
		}
	})
}
