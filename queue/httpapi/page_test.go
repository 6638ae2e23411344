package httpapi_test

// The page's languages and a queue's branding, over HTTP (page.go, i18n.go,
// branding.go); the same in a browser: browser_i18n_test.go.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/storetest"
)

// TestPageLanguages: the page speaks the language Accept-Language prefers,
// ?lang= switches and is remembered in a cookie, and the cookie wins over
// the header afterwards.
func TestPageLanguages(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("lang")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q})
	page := "/q/" + q
	for _, c := range []struct{ accept, lang, heading string }{
		{"", "en", "The sale has not opened yet"},
		{"ko-KR,ko;q=0.9,en-US;q=0.8", "ko", "아직 판매가 시작되지 않았습니다"},
		{"ja,en;q=0.5", "ja", "まだ販売開始前です"},
		{"fr-FR,de;q=0.8", "en", "The sale has not opened yet"},
		{"en;q=0.2, ja;q=0.9", "ja", "まだ販売開始前です"},
	} {
		r := e.do("GET", page, "", "", "Accept-Language", c.accept)
		require.Equal(t, http.StatusOK, r.code)
		assert.Contains(t, r.raw, `<html lang="`+c.lang+`">`, "Accept-Language %q", c.accept)
		assert.Contains(t, r.raw, c.heading, "Accept-Language %q", c.accept)
		assert.Contains(t, r.raw, `data-lang="`+c.lang+`"`)
		assert.Contains(t, r.header.Get("Vary"), "Accept-Language")
		assert.Empty(t, r.header.Get("Set-Cookie"), "nothing remembered without a choice")
		// The switcher lists every language, the current one marked.
		for _, name := range []string{"한국어", "English", "日本語"} {
			assert.Contains(t, r.raw, ">"+name+"</a>")
		}
		assert.Contains(t, r.raw, `href="?lang=`+c.lang+`" hreflang="`+c.lang+`" lang="`+c.lang+`" data-lang="`+c.lang+`" aria-current="true"`)
	}

	// A switcher link: Japanese, and the choice is kept in a cookie.
	r := e.do("GET", page+"?lang=ja", "", "", "Accept-Language", "ko")
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.raw, `<html lang="ja">`)
	ck := r.header.Get("Set-Cookie")
	assert.Contains(t, ck, "wr_lang=ja")
	assert.Contains(t, ck, "Path=/")
	assert.Contains(t, ck, "Max-Age=31536000")
	assert.Contains(t, ck, "SameSite=Lax")
	// Back without the parameter, with the cookie: still Japanese, whatever the header says.
	r = e.do("GET", page, "", "", "Accept-Language", "ko", "Cookie", "wr_lang=ja")
	assert.Contains(t, r.raw, `<html lang="ja">`)
	// An unknown ?lang= is ignored and remembers nothing.
	r = e.do("GET", page+"?lang=xx", "", "", "Accept-Language", "ko")
	assert.Contains(t, r.raw, `<html lang="ko">`)
	assert.Empty(t, r.header.Get("Set-Cookie"))

	// The index and the unknown-queue page too, still without letting a name in unescaped.
	r = e.do("GET", "/", "", "", "Accept-Language", "ko")
	assert.Contains(t, r.raw, "대기열 목록")
	r = e.do("GET", "/q/%3Cscript%3E", "", "", "Accept-Language", "ja")
	assert.Equal(t, http.StatusNotFound, r.code)
	assert.Contains(t, r.raw, "該当する順番待ちはありません")
	assert.Contains(t, r.raw, "「&lt;script&gt;」")
	assert.NotContains(t, r.raw, "<script>")
}

// TestBranding: title, logo and colours through the admin API, validated;
// the page shows them and its CSP lets exactly the logo in.
func TestBranding(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("brand")
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken, runtime: true}, queueConf{name: q})
	base := "/v1/queues/" + q

	// Nothing set: the queue's name, no logo, no theme, the page's own origin only.
	r := e.do("GET", "/q/"+q, "", "")
	assert.Contains(t, r.raw, `<title>Waiting room · `+q+`</title>`)
	assert.NotContains(t, r.raw, "theme.css")
	assert.NotContains(t, r.raw, `class="logo"`)
	assert.Contains(t, r.header.Get("Content-Security-Policy"), "img-src 'self' data:;")
	css := e.do("GET", "/q/"+q+"/theme.css", "", "")
	require.Equal(t, http.StatusOK, css.code)
	assert.Equal(t, "", css.raw)

	for _, c := range []struct{ body, field string }{
		{`{"primary_color":"red"}`, "primary_color must be a hex colour"},
		{`{"background_color":"#12345"}`, "background_color must be a hex colour"},
		{`{"background_color":"#fff;}body{display:none"}`, "background_color must be a hex colour"},
		{`{"logo_url":"javascript:alert(1)"}`, "logo_url must be an absolute http or https URL"},
		{`{"logo_url":"data:image/png;base64,AAAA"}`, "logo_url must be an absolute http or https URL"},
		{`{"logo_url":"/logo.png"}`, "logo_url must be an absolute http or https URL"},
		{`{"logo_url":"https://cdn.example.com/a b.png"}`, "logo_url must be an absolute http or https URL"},
		{`{"title":"` + strings.Repeat("x", 121) + `"}`, "title must be valid UTF-8 of at most 120 bytes"},
		{`{"title":"a\u0007b"}`, "title must be valid UTF-8"},
		{`{"slot":3,"primary_color":"blue"}`, "primary_color must be a hex colour"},
	} {
		r := e.do("PUT", base, adminToken, c.body)
		assertError(t, r, http.StatusBadRequest)
		assert.Contains(t, r.str("error"), c.field, c.body)
	}
	info := e.do("GET", base, "", "")
	assert.NotEqual(t, 3.0, info.num("slot"), "a rejected change writes nothing")
	assert.Equal(t, "", info.str("primary_color"))

	logo := "https://cdn.example.com/brand/logo.png?v=3"
	r = e.do("PUT", base, adminToken, `{"title":"봄 콘서트 2027","logo_url":"`+logo+`","primary_color":"#E4002B","background_color":"#fdf"}`)
	require.Equal(t, http.StatusOK, r.code, r.raw)
	assert.Equal(t, "봄 콘서트 2027", r.str("title"))
	assert.Equal(t, logo, r.str("logo_url"))
	assert.Equal(t, "#E4002B", r.str("primary_color"))
	assert.Equal(t, "#fdf", r.str("background_color"))

	r = e.do("GET", "/q/"+q, "", "", "Accept-Language", "ko")
	assert.Contains(t, r.raw, "<title>대기열 · 봄 콘서트 2027</title>")
	assert.Contains(t, r.raw, `<span class="brand-title" id="brand-title">봄 콘서트 2027</span>`)
	assert.Contains(t, r.raw, `<img class="logo" id="logo" src="https://cdn.example.com/brand/logo.png?v=3"`)
	csp := r.header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "img-src 'self' data: https://cdn.example.com/brand/logo.png;", "exactly the logo, no more of its origin")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "style-src 'self';", "colours come as a stylesheet, no inline styles")
	assert.Contains(t, r.raw, `<link rel="stylesheet" href="/q/`+q+`/theme.css?v=E4002B-fdf">`)
	css = e.do("GET", "/q/"+q+"/theme.css?v=E4002B-fdf", "", "")
	require.Equal(t, http.StatusOK, css.code)
	assert.Contains(t, css.header.Get("Content-Type"), "text/css")
	assert.Contains(t, css.raw, "--accent: #e4002b;")
	assert.Contains(t, css.raw, "--on-accent: #ffffff;", "white on a dark red")
	assert.Contains(t, css.raw, "--page: #ffddff;")
	assert.Contains(t, css.raw, "--on-page: #111111;", "dark text on a light pink")

	// "" removes a field; the others stay.
	r = e.do("PUT", base, adminToken, `{"logo_url":"","primary_color":""}`)
	require.Equal(t, http.StatusOK, r.code, r.raw)
	assert.Equal(t, "", r.str("logo_url"))
	assert.Equal(t, "봄 콘서트 2027", r.str("title"))
	r = e.do("GET", "/q/"+q, "", "")
	assert.NotContains(t, r.raw, "cdn.example.com")
	assert.NotContains(t, r.header.Get("Content-Security-Policy"), "cdn.example.com")
	css = e.do("GET", "/q/"+q+"/theme.css", "", "")
	assert.NotContains(t, css.raw, "--accent")
	assert.Contains(t, css.raw, "--page: #ffddff;")

	assertError(t, e.do("GET", "/q/nope/theme.css", "", ""), http.StatusNotFound)

	// A queue created at run time takes its branding at creation, validated the same way.
	rq := uniq("brand-rt")
	assertError(t, e.do("POST", "/v1/queues", adminToken, `{"name":"`+rq+`","logo_url":"ftp://x.example/l.png"}`), http.StatusBadRequest)
	r = e.do("POST", "/v1/queues", adminToken, `{"name":"`+rq+`","title":"コンサート","primary_color":"#ff0"}`)
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	assert.Equal(t, "コンサート", r.str("title"))
	css = e.do("GET", "/q/"+rq+"/theme.css", "", "")
	assert.Contains(t, css.raw, "--accent: #ffff00;")
	assert.Contains(t, css.raw, "--on-accent: #111111;", "dark text on yellow")
}

// TestBrandingDefaults: a queue's branding from its configuration (the
// --queue flag's title=, logo-url=, ... become Settings.Branding).
func TestBrandingDefaults(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("brand-def")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Branding: queue.Branding{
		Title: "Tickets & more", LogoURL: "http://127.0.0.1:9/l.svg", BackgroundColor: "#000"}}})
	r := e.do("GET", "/q/"+q, "", "")
	assert.Contains(t, r.raw, "<title>Waiting room · Tickets &amp; more</title>")
	assert.Contains(t, r.header.Get("Content-Security-Policy"), "img-src 'self' data: http://127.0.0.1:9/l.svg;")
	css := e.do("GET", "/q/"+q+"/theme.css", "", "")
	assert.Contains(t, css.raw, "--on-page: #ffffff;")
}

// TestPageStoreDown: with the store unreachable the page is still drawn, in
// the visitor's language and with the branding last read; it says itself
// that it cannot join (the API answers 503).
func TestPageStoreDown(t *testing.T) {
	st := storetest.Start(t)
	proxy := storetest.NewProxy(t, st.Addr)
	q := uniq("brand-down")
	e := newEnv(t, proxy.Addr(), envOpt{}, queueConf{name: q, set: queue.Settings{Branding: queue.Branding{
		Title: "Sale", PrimaryColor: "#123456"}}})
	require.Contains(t, e.do("GET", "/q/"+q, "", "").raw, "<title>Waiting room · Sale</title>")
	proxy.Down()
	time.Sleep(200 * time.Millisecond) // past the period (50 ms): the page asks the store again
	start := time.Now()
	r := e.do("GET", "/q/"+q, "", "", "Accept-Language", "ja")
	t.Logf("page with the store down: %v", time.Since(start))
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.raw, "<title>順番待ち · Sale</title>")
	css := e.do("GET", "/q/"+q+"/theme.css", "", "")
	require.Equal(t, http.StatusOK, css.code)
	assert.Contains(t, css.raw, "--accent: #123456;")
	proxy.Up()
}
