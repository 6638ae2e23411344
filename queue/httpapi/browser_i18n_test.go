package httpapi_test

// The page in Korean, English and Japanese in headless Chromium
// (chrome_test.go): each language from Accept-Language, the switcher, times
// in the visitor's zone, the queue's branding with a logo from another
// origin, and screenshots of each language on a desktop and a phone.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones the test emulates, whatever the machine has

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/storetest"
)

// pageLang is what the test expects of each language.
var pageLangs = []struct {
	code, accept, zone string
	waiting, pre       string // headings
	live               string // the live indicator
	eta                string // waitroomI18n.eta(5400)
	checking           string
	h24                bool // the time of day on a 24-hour clock
}{
	{"ko", "ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7", "Asia/Seoul", "대기열에 들어왔습니다", "아직 판매가 시작되지 않았습니다",
		"실시간", "약 1시간 30분", "브라우저를 확인하고 있습니다", false},
	{"en", "en-US,en;q=0.9", "America/New_York", "You're in line", "The sale has not opened yet",
		"Live", "About 1 hour 30 minutes", "Checking your browser", false},
	{"ja", "ja,en-US;q=0.8", "Asia/Tokyo", "順番待ちの列に並んでいます", "まだ販売開始前です",
		"リアルタイム", "約1時間30分", "ブラウザを確認しています", true},
}

const logoSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40">` +
	`<rect width="120" height="40" rx="8" fill="#e4002b"/><text x="60" y="27" font-size="18" font-family="sans-serif" ` +
	`font-weight="700" fill="#fff" text-anchor="middle">TICKETS</text></svg>`

// logoServer is another origin serving the queue's logo (and a second image
// the page's CSP must not let in).
func logoServer(t *testing.T) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Write([]byte(logoSVG))
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// speak makes the tab ask for a language and live in a time zone.
func (p *tab) speak(t *testing.T, accept, zone string) {
	t.Helper()
	_, err := chromedp.Call(p.ctx, network.SetExtraHTTPHeaders,
		network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": accept}})
	require.NoError(t, err)
	_, err = chromedp.Call(p.ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone})
	require.NoError(t, err)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func jsState(state string) string {
	return `(function(){var r=document.getElementById("room"); return r && r.dataset.state===` + jsString(state) + ` ? "ok" : ""})()`
}

func jsText(sel string) string {
	return `(function(){var e=document.querySelector(` + jsString(sel) + `); return e ? e.textContent : ""})()`
}

func TestBrowserLanguages(t *testing.T) {
	browser := newBrowser(t)
	dir := artifactsDir(t)
	st := storetest.Start(t)
	logo := logoServer(t)
	q, pre, pow := uniq("i18n"), uniq("i18n-pre"), uniq("i18n-pow")
	brand := queue.Branding{Title: "Spring Concert 2027", LogoURL: logo + "/logo.svg",
		PrimaryColor: "#e4002b", BackgroundColor: "#fbeff1"}
	// A long period: nobody is admitted while the test looks.
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken, period: time.Minute},
		queueConf{name: q, set: queue.Settings{Slot: 1, Branding: brand}},
		queueConf{name: pre, set: queue.Settings{Slot: 1, Branding: brand}},
		queueConf{name: pow, set: queue.Settings{Slot: 1}})
	e.fill(q, 3, 1) // one admitted, two waiting ahead of the pages
	opens := time.Now().Add(5*time.Hour + 7*time.Minute).Truncate(time.Minute)
	r := e.do("PUT", "/v1/queues/"+pre, adminToken, `{"opens_at":"`+opens.UTC().Format(time.RFC3339)+`"}`)
	require.Equal(t, 200, r.code, r.raw)
	// A difficulty no test waits out: the page stays on its browser check.
	r = e.do("PUT", "/v1/queues/"+pow, adminToken, `{"pow_bits":30}`)
	require.Equal(t, 200, r.code, r.raw)

	for _, l := range pageLangs {
		t.Run(l.code, func(t *testing.T) {
			page := newTab(t, browser)
			page.speak(t, l.accept, l.zone)
			page.viewport(t, 1280, 800, 1, false)
			page.navigate(t, e.ts.URL+"/q/"+q)
			page.waitFor(t, "the waiting view", jsState("waiting"), 15*time.Second)
			page.waitFor(t, "the live stream", jsLive, 15*time.Second)
			lang, _ := page.eval(`document.documentElement.lang`)
			assert.Equal(t, l.code, lang, "the language Accept-Language asks for")
			head, _ := page.eval(jsText("#headline"))
			assert.Equal(t, l.waiting, head)
			live, _ := page.eval(jsText("#live"))
			assert.Equal(t, l.live, live)
			eta, _ := page.eval(`waitroomI18n.eta(5400)`)
			assert.Equal(t, l.eta, eta, "durations in the language's units")
			cur, _ := page.eval(jsText(`#langs a[aria-current]`))
			assert.Equal(t, map[string]string{"ko": "한국어", "en": "English", "ja": "日本語"}[l.code], cur)

			// The branding: title, the logo from its own origin, the colours.
			bt, _ := page.eval(jsText("#brand-title"))
			assert.Equal(t, brand.Title, bt)
			assert.Contains(t, page.waitFor(t, "the logo", `(function(){var i=document.getElementById("logo");
				return i && i.complete && i.naturalWidth > 0 ? document.title : ""})()`, 10*time.Second), brand.Title)
			bg, _ := page.eval(`getComputedStyle(document.body).backgroundColor`)
			assert.Equal(t, "rgb(251, 239, 241)", bg)
			btn, _ := page.eval(`getComputedStyle(document.getElementById("bar")).backgroundColor`)
			assert.Equal(t, "rgb(228, 0, 43)", btn)
			// The policy lets in exactly the logo, not the rest of its origin.
			blocked := page.waitFor(t, "another image of the logo's origin", `(function(){
				if (!window.__probe) { window.__probe = "pending"; var i = new Image();
					i.onload = function(){ window.__probe = "loaded" }; i.onerror = function(){ window.__probe = "blocked" };
					i.src = `+jsString(logo+"/other.svg")+`; document.body.appendChild(i); }
				return window.__probe === "pending" ? "" : window.__probe })()`, 10*time.Second)
			assert.Equal(t, "blocked", blocked)
			page.eval(`document.querySelectorAll("body > img").forEach(function(i){ i.remove() })`)

			time.Sleep(700 * time.Millisecond) // the progress bar's transition
			page.screenshot(t, filepath.Join(dir, "page-"+l.code+"-desktop.png"))
			page.viewport(t, 390, 844, 2, true)
			time.Sleep(300 * time.Millisecond)
			page.screenshot(t, filepath.Join(dir, "page-"+l.code+"-phone.png"))
			wide, _ := page.eval(`document.documentElement.scrollWidth <= window.innerWidth ? "fits" : "overflows"`)
			assert.Equal(t, "fits", wide, "no horizontal scrolling on a phone")

			// Before the opening: the countdown, and the opening in the
			// visitor's zone, in the language's own way of writing it.
			page.viewport(t, 1280, 800, 1, false)
			page.navigate(t, e.ts.URL+"/q/"+pre)
			page.waitFor(t, "the pre-queue view", jsState("pre_queue"), 15*time.Second)
			h1, _ := page.eval(jsText(".when-pre_queue h1"))
			assert.Equal(t, l.pre, h1)
			cd, _ := page.eval(jsText("#countdown"))
			m := regexp.MustCompile(`^(\d+):(\d\d):(\d\d)$`).FindStringSubmatch(cd)
			require.NotNil(t, m, "countdown %q is h:mm:ss", cd)
			left := time.Duration(atoi(m[1])*3600+atoi(m[2])*60+atoi(m[3])) * time.Second
			assert.InDelta(t, time.Until(opens).Seconds(), left.Seconds(), 90, "countdown %q", cd)
			at, _ := page.eval(jsText("#opens-at"))
			loc, err := time.LoadLocation(l.zone)
			require.NoError(t, err)
			local := opens.In(loc)
			hour := local.Hour()
			if !l.h24 {
				hour = (hour+11)%12 + 1
			}
			assert.Contains(t, at, fmt.Sprintf("%d:%02d", hour, local.Minute()), "%s in %s", opens.UTC(), l.zone)
			assert.Contains(t, at, fmt.Sprint(local.Day()), "the day of the month in %s", l.zone)
			want, _ := page.eval(`new Intl.DateTimeFormat(` + jsString(l.code) + `, {dateStyle: "full", timeStyle: "short"}).format(new Date(` +
				fmt.Sprint(opens.UnixMilli()) + `))`)
			assert.Contains(t, at, want, "the date as the language writes it")
			page.screenshot(t, filepath.Join(dir, "page-"+l.code+"-prequeue-desktop.png"))

			// The proof of work's browser check.
			page.navigate(t, e.ts.URL+"/q/"+pow)
			page.waitFor(t, "the browser check", jsState("checking"), 15*time.Second)
			ck, _ := page.eval(jsText(".when-checking h1"))
			assert.Equal(t, l.checking, ck)
			page.navigate(t, "about:blank") // stop the worker
		})
	}

	// The switcher: English by the header, 日本語 by a click, the place kept,
	// and the choice remembered on the next visit whatever the header says.
	t.Run("switcher", func(t *testing.T) {
		page := newTab(t, browser)
		page.speak(t, "en-US,en;q=0.9", "Europe/London")
		page.navigate(t, e.ts.URL+"/q/"+q)
		page.waitFor(t, "the waiting view", jsState("waiting"), 15*time.Second)
		before, _ := page.eval(jsText("#position"))
		head, _ := page.eval(jsText("#headline"))
		require.Equal(t, "You're in line", head)
		_, err := chromedp.Run(page.ctx, chromedp.Click(`#langs a[data-lang="ja"]`))
		require.NoError(t, err)
		page.waitFor(t, "the page in Japanese", `document.documentElement.lang === "ja" && document.getElementById("room").dataset.state === "waiting" ? "ok" : ""`, 15*time.Second)
		head, _ = page.eval(jsText("#headline"))
		assert.Equal(t, "順番待ちの列に並んでいます", head)
		after, _ := page.eval(jsText("#position"))
		assert.Equal(t, before, after, "switching keeps the place")
		page.navigate(t, e.ts.URL+"/q/"+q)
		page.waitFor(t, "Japanese again, from the cookie", `document.documentElement.lang === "ja" ? "ok" : ""`, 15*time.Second)
		href, _ := page.eval(`location.href`)
		assert.False(t, strings.Contains(href, "lang="), "no parameter this time")
		page.navigate(t, e.ts.URL+"/")
		idx, _ := page.eval(jsText("h1"))
		assert.Equal(t, "順番待ち一覧", idx)
	})
}
