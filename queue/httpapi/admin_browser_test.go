package httpapi_test

// The admin dashboard in headless Chromium (chrome_test.go): sign in, change
// a queue's slot and pause it by typing and clicking in the page, and check
// each change through the API. Screenshots go to the artifacts directory.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/storetest"
)

// browserWait bounds every wait for the page: generous, for a loaded machine.
const browserWait = 60 * time.Second

// do runs actions (queries wait for their elements) within browserWait.
func (p *tab) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		body, _ := p.eval(`location.href + "\n" + (document.body ? document.body.innerText : "")`)
		t.Fatalf("%s: %v; page:\n%s", what, err, body)
	}
}

// retype replaces the text of the input matching sel by typing: it moves to
// the end, deletes what is there and types text.
func (p *tab) retype(t *testing.T, sel chromedp.CSS, text string) {
	t.Helper()
	old, err := p.eval(`document.querySelector(` + jsString(string(sel)) + `).value`)
	require.NoError(t, err)
	p.do(t, "type into "+string(sel), chromedp.Click(sel),
		chromedp.SendKeys(sel, kb.End+strings.Repeat(kb.Backspace, len(old))+text))
}

// jsVisible is an expression that says "yes" when the element matching sel
// is rendered, "no" when it is not, and "" when there is no such element.
func jsVisible(sel string) string {
	return `(function(){var el=document.querySelector(` + jsString(sel) + `);
		return !el ? "" : (el.getClientRects().length > 0 ? "yes" : "no")})()`
}

// jsEquals says "ok" when expr (a string expression) equals want.
func jsEquals(expr, want string) string {
	return `(function(){try{return String(` + expr + `)===` + jsString(want) + ` ? "ok" : ""}catch(e){return ""}})()`
}

// TestBrowserAdmin: the dashboard lists the queue with its live counts; the
// controls show only after signing in; a slot typed into the page and saved
// admits the next user; a pause chosen in the page stops admissions while
// everyone keeps their place, as the API reports.
func TestBrowserAdmin(t *testing.T) {
	browser := newBrowser(t)
	dir := artifactsDir(t)
	st := storetest.Start(t)
	q := uniq("dash")
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken},
		queueConf{name: q, set: queue.Settings{Slot: 2, TicketTTL: 30 * time.Minute, Session: 30 * time.Minute}})
	users := fillPatiently(t, e, q, 3, 2) // two in, one waiting
	base := "/v1/queues/" + q
	card := `article[data-queue="` + q + `"]`
	slot := chromedp.CSS(card + ` input[name="slot"]`)
	state := chromedp.CSS(card + ` select[name="state"]`)
	text := func(sel string) string { return `document.querySelector(` + jsString(card+" "+sel) + `).textContent` }

	// Two history points from earlier steps (field: store time / 10 s; value:
	// active waiting admitted_total), so the chart has lines to draw.
	step := time.Now().Unix() / 10
	require.NoError(t, e.rdb.HSet(t.Context(), "wr:{"+q+"}:hist", step-60, "1 8 100", step-30, "2 3 160").Err())

	page := newTab(t, browser)
	page.viewport(t, 1280, 1000, 1, false)
	page.navigate(t, e.ts.URL+"/admin")
	// The chart: a line of at least those two points and the loop's own.
	page.waitFor(t, "the chart", `(function(){var c=document.querySelector(`+jsString(card)+`);
		var pl=c && c.querySelector(".line-waiting");
		return pl && +c.dataset.points >= 3 && pl.getAttribute("points").split(" ").length >= 3 ? "ok" : ""})()`, browserWait)

	// Signed out: the live counts, no controls.
	page.waitFor(t, "the queue's live counts", jsEquals(text(".active")+`+"/"+`+text(".waiting"), "2/1"), browserWait)
	page.waitFor(t, "the open badge", jsEquals(text(".state"), "open"), browserWait)
	assert.Equal(t, "no", page.waitFor(t, "the settings form", jsVisible(card+" .settings"), browserWait),
		"no controls without the admin token")
	assert.Equal(t, "no", page.waitFor(t, "the codes form", jsVisible(card+" .codes"), browserWait))

	// Sign in by typing the token.
	page.do(t, "sign in", chromedp.SendKeys(chromedp.ID("token"), adminToken),
		chromedp.Click(chromedp.CSS(`#login button[type="submit"]`)))
	page.waitFor(t, "signed in", jsEquals(`document.body.dataset.auth`, "yes"), browserWait)
	page.waitFor(t, "the settings form", jsEquals(jsVisible(card+" .settings"), "yes"), browserWait)
	assert.Equal(t, "no", page.waitFor(t, "the login form", jsVisible("#login"), browserWait),
		"the login form goes once signed in")
	page.waitFor(t, "the form filled with the slot", jsEquals(`document.querySelector(`+jsString(string(slot))+`).value`, "2"), browserWait)
	page.screenshot(t, filepath.Join(dir, "admin-dashboard.png"))

	// The slot, typed and saved: the API has it, and the waiting user gets in.
	page.retype(t, slot, "3")
	page.waitFor(t, "the typed slot", jsEquals(`document.querySelector(`+jsString(string(slot))+`).value`, "3"), browserWait)
	page.do(t, "save the slot", chromedp.Click(chromedp.CSS(card+` button.save`)))
	page.waitFor(t, "the page's save 1", jsEquals(`document.querySelector(`+jsString(card)+`).dataset.saves`, "1"), browserWait)
	waitAPI(t, e, base, "slot 3", func(r res) bool { return r.num("slot") == 3 })
	waitAPI(t, e, base, "the third user admitted", func(r res) bool { return r.num("active") == 3 && r.num("waiting") == 0 })
	assert.Equal(t, "admitted", e.status(q, users[2]).str("state"))
	page.waitFor(t, "the new counts", jsEquals(text(".active")+`+"/"+`+text(".waiting"), "3/0"), browserWait)

	// Pause, chosen with the keyboard in the state list and saved.
	late := e.join(q, "").str("ticket")
	page.do(t, "choose paused", chromedp.SendKeys(state, "p"))
	page.waitFor(t, "paused chosen", jsEquals(`document.querySelector(`+jsString(string(state))+`).value`, "paused"), browserWait)
	page.do(t, "save the pause", chromedp.Click(chromedp.CSS(card+` button.save`)))
	page.waitFor(t, "the page's save 2", jsEquals(`document.querySelector(`+jsString(card)+`).dataset.saves`, "2"), browserWait)
	info := waitAPI(t, e, base, "paused", func(r res) bool { return r.str("admin_state") == "paused" })
	assert.Equal(t, "paused", info.str("state"))
	assert.EqualValues(t, 3, info.num("slot"), "the pause left the slot alone")

	// A place frees up, yet a paused queue admits nobody: the late user keeps
	// its place through many admission rounds.
	rel := e.do("POST", base+"/release", users[0], "")
	require.Equal(t, 200, rel.code, rel.raw)
	eng := e.engs[q]
	from := eng.Counters().Rounds
	pollUntil(t, "ten admission rounds", func() bool { return eng.Counters().Rounds >= from+10 })
	s := e.status(q, late)
	assert.Equal(t, "waiting", s.str("state"), s.raw)
	assert.Equal(t, "paused", s.str("queue_state"))
	assert.EqualValues(t, 1, s.num("position"))
	page.waitFor(t, "the paused badge", jsEquals(text(".state"), "paused"), browserWait)
	page.waitFor(t, "the counts while paused", jsEquals(text(".active")+`+"/"+`+text(".waiting"), "2/1"), browserWait)
	assert.Equal(t, "no", page.waitFor(t, "the error line", jsVisible("#status"), browserWait), "no error shown")
	page.screenshot(t, filepath.Join(dir, "admin-paused.png"))
	page.viewport(t, 390, 844, 2, true)
	page.waitFor(t, "the phone layout", jsEquals(`document.documentElement.scrollWidth <= window.innerWidth`, "true"), browserWait)
	page.screenshot(t, filepath.Join(dir, "admin-phone.png"))

	// Open again from the page: the late user gets in.
	page.do(t, "choose open", chromedp.SendKeys(state, "o"))
	page.waitFor(t, "open chosen", jsEquals(`document.querySelector(`+jsString(string(state))+`).value`, "open"), browserWait)
	page.do(t, "save open", chromedp.Click(chromedp.CSS(card+` button.save`)))
	page.waitFor(t, "the page's save 3", jsEquals(`document.querySelector(`+jsString(card)+`).dataset.saves`, "3"), browserWait)
	waitAPI(t, e, base, "open", func(r res) bool { return r.str("admin_state") == "open" })
	pollUntil(t, "the late user admitted", func() bool { return e.status(q, late).str("state") == "admitted" })
}

// fillPatiently is env.fill with browserWait for the admissions.
func fillPatiently(t *testing.T, e *env, q string, n, admitted int) []string {
	t.Helper()
	var tickets []string
	for range n {
		tickets = append(tickets, e.join(q, "").str("ticket"))
	}
	for _, tk := range tickets[:admitted] {
		pollUntil(t, "an admission", func() bool { return e.status(q, tk).str("state") == "admitted" })
	}
	return tickets
}

// waitAPI polls GET path until ok holds, within browserWait.
func waitAPI(t *testing.T, e *env, path, what string, ok func(res) bool) res {
	t.Helper()
	var r res
	pollUntil(t, what, func() bool {
		r = e.do("GET", path, "", "")
		return r.code == 200 && ok(r)
	})
	return r
}

// pollUntil polls cond until it holds, failing the test after browserWait.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(browserWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after %v", what, browserWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
