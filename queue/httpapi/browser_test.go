package httpapi_test

// The waiting-room page in headless Chromium (chrome_test.go).

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/demosite"
	"waitroom/queue/storetest"
)

// room is a protected site in front of one waiting room, all in process.
type browserRoom struct {
	e     *env
	q     string
	site  string // the demo target's base URL
	users []string
}

func newBrowserRoom(t *testing.T, slot, ahead int) *browserRoom {
	st := storetest.Start(t)
	var site http.Handler
	siteTS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { site.ServeHTTP(w, r) }))
	t.Cleanup(siteTS.Close)
	q := uniq("browser")
	// A long period: only releases (and joins at the head) admit, so the
	// test decides when the page's turn comes.
	e := newEnv(t, st.Addr, envOpt{period: time.Minute},
		queueConf{name: q, set: queue.Settings{Slot: slot}, target: siteTS.URL + "/checkout"})
	s, err := demosite.New(demosite.Config{QueueURLs: []string{e.ts.URL}, Queue: q, Logger: quietLog()})
	require.NoError(t, err)
	site = s
	return &browserRoom{e: e, q: q, site: siteTS.URL, users: e.fill(q, slot+ahead, slot)}
}

// release frees the place of the oldest admitted API user.
func (b *browserRoom) release(t *testing.T) {
	t.Helper()
	r := b.e.do("POST", "/v1/queues/"+b.q+"/release", b.users[0], "")
	require.Equal(t, 200, r.code, r.raw)
	require.Equal(t, true, r.body["released"])
	b.users = b.users[1:]
}

const (
	jsWaitingPosition = `(function(){var r=document.getElementById("room");
		return r && r.dataset.state==="waiting" ? document.getElementById("position").textContent : ""})()`
	jsLive = `(function(){var r=document.getElementById("room"); return r && r.dataset.live==="on" ? "live" : ""})()`
)

func jsPosition(want string) string {
	return `(function(){var r=document.getElementById("room");
		return r && r.dataset.state==="waiting" && document.getElementById("position").textContent===` + jsString(want) + ` ? "ok" : ""})()`
}

func jsEntered(site string) string {
	return `(function(){var m=document.getElementById("result");
		return location.href===` + jsString(site+"/checkout") + ` && m && m.dataset.state==="entered" ? location.href : ""})()`
}

func TestBrowserWaitingRoom(t *testing.T) {
	browser := newBrowser(t)
	dir := artifactsDir(t)

	t.Run("live", func(t *testing.T) {
		b := newBrowserRoom(t, 1, 2) // one admitted, two waiting before the page
		page := newTab(t, browser)
		page.viewport(t, 1280, 860, 1, false)
		page.navigate(t, b.e.ts.URL+"/q/"+b.q)

		// The page joins and shows its place: third in line, two ahead.
		page.waitFor(t, "position 3", jsPosition("3"), 10*time.Second)
		page.waitFor(t, "the live stream", jsLive, 10*time.Second)
		ahead, err := page.eval(`document.getElementById("ahead").textContent`)
		require.NoError(t, err)
		assert.Equal(t, "2", ahead)
		ticket, err := page.eval(`localStorage.getItem("waitroom:` + b.q + `:ticket")`)
		require.NoError(t, err)
		require.NotEmpty(t, ticket, "the ticket is kept in localStorage")
		m := b.e.do("GET", "/metrics", "", "")
		assert.Contains(t, m.raw, "queue_event_streams 1", "the page follows the queue over server-sent events")

		// A reload keeps the place.
		page.reload(t)
		page.waitFor(t, "position 3 after a reload", jsPosition("3"), 10*time.Second)
		again, _ := page.eval(`localStorage.getItem("waitroom:` + b.q + `:ticket")`)
		assert.Equal(t, ticket, again, "a reload keeps the ticket")

		// One slot freed: the people ahead move in, the page moves up.
		b.release(t)
		page.waitFor(t, "position 2", jsPosition("2"), 10*time.Second)
		time.Sleep(700 * time.Millisecond) // the progress bar's transition
		page.screenshot(t, filepath.Join(dir, "waiting-room-desktop.png"))
		page.viewport(t, 390, 844, 2, true)
		time.Sleep(200 * time.Millisecond) // let the layout settle
		page.screenshot(t, filepath.Join(dir, "waiting-room-phone.png"))
		wide, err := page.eval(`document.documentElement.scrollWidth <= window.innerWidth ? "fits" : "overflows"`)
		require.NoError(t, err)
		assert.Equal(t, "fits", wide, "no horizontal scrolling on a phone")
		page.viewport(t, 1280, 860, 1, false)

		b.release(t)
		page.waitFor(t, "position 1", jsPosition("1"), 10*time.Second)

		// The last one ahead leaves: the page is admitted and arrives at the
		// target, which accepts the pass.
		b.release(t)
		page.waitFor(t, "the admitted view", `document.getElementById("room") && document.getElementById("room").dataset.state==="admitted" ? "ok" : ""`, 10*time.Second)
		page.screenshot(t, filepath.Join(dir, "waiting-room-admitted.png"))
		href := page.waitFor(t, "arrival at the target", jsEntered(b.site), 15*time.Second)
		assert.Equal(t, b.site+"/checkout", href, "the gate took the pass and dropped it from the URL")
		page.screenshot(t, filepath.Join(dir, "target-entered.png"))
		info := b.e.do("GET", "/v1/queues/"+b.q, "", "")
		assert.EqualValues(t, 1, info.num("active"))
		assert.EqualValues(t, 0, info.num("waiting"))
		m = b.e.do("GET", "/metrics", "", "")
		assert.Contains(t, m.raw, `queue_enters_total{queue="`+b.q+`"} 1`, "the target consumed the pass")
	})

	// Without EventSource the page polls and still gets in.
	t.Run("polling", func(t *testing.T) {
		b := newBrowserRoom(t, 1, 0)
		page := newTab(t, browser)
		page.onNewDocument(t, "delete window.EventSource;")
		page.navigate(t, b.e.ts.URL+"/q/"+b.q)
		page.waitFor(t, "position 1", jsPosition("1"), 10*time.Second)
		m := b.e.do("GET", "/metrics", "", "")
		assert.Contains(t, m.raw, "queue_event_streams 0")
		b.release(t)
		page.waitFor(t, "arrival at the target", jsEntered(b.site), 15*time.Second)
	})
}
