package httpapi_test

// Issue 19 over HTTP: queue states and messages, run-time queues through the
// admin API (seen by every instance within a period), the pre-queue of a
// scheduled queue.

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/storetest"
)

func TestQueueStatesHTTP(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("states")
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	base := "/v1/queues/" + q

	r := e.do("PUT", base, adminToken, `{"state":"paused","message":"Back at noon"}`)
	require.Equal(t, 200, r.code, r.raw)
	assert.Equal(t, "paused", r.str("state"))
	assert.Equal(t, "paused", r.str("admin_state"))
	assert.Equal(t, "Back at noon", r.str("message"))

	a := e.join(q, "")
	assert.Equal(t, "paused", a.str("queue_state"))
	assert.Equal(t, "Back at noon", a.str("message"))
	b := e.join(q, "")
	time.Sleep(150 * time.Millisecond) // three periods: a paused queue admits nobody
	s := e.status(q, a.str("ticket"))
	require.Equal(t, 200, s.code, "a paused queue answers status")
	assert.Equal(t, "waiting", s.str("state"))
	assert.Equal(t, "paused", s.str("queue_state"))
	assert.EqualValues(t, 1, s.num("position"))

	require.Equal(t, 200, e.do("PUT", base, adminToken, `{"state":"open","message":""}`).code)
	e.waitState(q, a.str("ticket"), "admitted")
	s = e.status(q, b.str("ticket"))
	assert.Equal(t, "open", s.str("queue_state"))
	assert.Empty(t, s.str("message"))

	require.Equal(t, 200, e.do("PUT", base, adminToken, `{"state":"closed","message":"Sold out"}`).code)
	r = e.do("POST", base+"/join", "", "")
	assertError(t, r, 409)
	assert.Equal(t, "closed", r.str("state"))
	assert.Equal(t, "Sold out", r.str("message"))
	s = e.status(q, b.str("ticket"))
	assert.Equal(t, 410, s.code)
	assert.Equal(t, "closed", s.str("reason"))
	assert.Equal(t, "Sold out", s.str("message"))

	for _, bad := range []string{`{"state":"sleeping"}`, `{"opens_at":"tomorrow"}`, `{"closes_at":"2026-13-01T00:00:00Z"}`,
		`{"message":"` + string(make([]byte, 0)) + `x` + `","state":1}`} {
		assertError(t, e.do("PUT", base, adminToken, bad), 400)
	}
	assertError(t, e.do("DELETE", base, adminToken, ""), 409) // a flag queue is closed, not deleted
}

func TestPreQueueHTTP(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("prequeue")
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	base := "/v1/queues/" + q
	opens := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r := e.do("PUT", base, adminToken, `{"opens_at":"`+opens+`","state":"paused"}`)
	require.Equal(t, 200, r.code, r.raw)
	assert.Equal(t, "scheduled", r.str("state"))
	assert.Equal(t, opens[:19], r.str("opens_at")[:19])

	var tickets []string
	for i := range 3 {
		j := e.join(q, "")
		assert.Equal(t, "pre_queue", j.str("state"))
		assert.EqualValues(t, i+1, j.num("pre_queue"))
		tickets = append(tickets, j.str("ticket"))
	}
	s := e.status(q, tickets[0])
	require.Equal(t, 200, s.code)
	assert.Equal(t, "pre_queue", s.str("state"))
	assert.EqualValues(t, 3, s.num("pre_queue"))
	assert.Equal(t, 3.0, e.do("GET", base, "", "").num("pre_queue"))

	// An opening in the past draws at once.
	require.Equal(t, 200, e.do("PUT", base, adminToken, `{"opens_at":"2001-02-03T04:05:06Z"}`).code)
	places := map[float64]bool{}
	for _, tk := range tickets {
		s := e.status(q, tk)
		require.Equal(t, "waiting", s.str("state"), s.raw)
		places[s.num("position")] = true
	}
	assert.Len(t, places, 3)
	info := e.do("GET", base, "", "")
	assert.EqualValues(t, 1, info.num("draws"))
	assert.EqualValues(t, 0, info.num("pre_queue"))
	assert.Equal(t, "paused", info.str("state"))
}

func TestRuntimeQueues(t *testing.T) {
	st := storetest.Start(t)
	proxy := storetest.NewProxy(t, st.Addr)
	a := newEnv(t, proxy.Addr(), envOpt{adminToken: adminToken, runtime: true}, queueConf{name: uniq("rt-a")})
	b := newEnv(t, st.Addr, envOpt{adminToken: adminToken, runtime: true}, queueConf{name: uniq("rt-b")})
	name := uniq("created")
	body := `{"name":"` + name + `","slot":2,"session_seconds":60,"state":"open","message":"Hello"}`

	assertError(t, a.do("POST", "/v1/queues", "", body), 401)
	assertError(t, a.do("POST", "/v1/queues", "wrong-token", body), 403)
	assertError(t, a.do("POST", "/v1/queues", adminToken, `{"name":"bad name!"}`), 400)
	assertError(t, a.do("POST", "/v1/queues", adminToken, `{"name":"x","slot":0}`), 400)
	assertError(t, a.do("POST", "/v1/queues", adminToken, `{"name":"x","target_url":"ftp://x"}`), 400)

	r := a.do("POST", "/v1/queues", adminToken, body)
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	assert.Equal(t, "/v1/queues/"+name, r.header.Get("Location"))
	assert.EqualValues(t, 2, r.num("slot"))
	assert.Equal(t, "Hello", r.str("message"))
	assert.Equal(t, true, r.body["runtime"])
	assertError(t, a.do("POST", "/v1/queues", adminToken, body), 409)

	// The other instance serves it within a period (50 ms here).
	require.Eventually(t, func() bool { return b.do("GET", "/v1/queues/"+name, "", "").code == 200 },
		2*time.Second, 10*time.Millisecond)
	j := b.join(name, "")
	assert.Equal(t, 200, a.status(name, j.str("ticket")).code, "a ticket of B is good on A")
	a.waitState(name, j.str("ticket"), "admitted")
	require.Equal(t, 200, b.do("PUT", "/v1/queues/"+name, adminToken, `{"slot":5}`).code)
	assert.EqualValues(t, 5, a.do("GET", "/v1/queues/"+name, "", "").num("slot"))

	proxy.Down()
	assertError(t, a.do("POST", "/v1/queues", adminToken, `{"name":"`+uniq("down")+`"}`), 503)
	assertError(t, a.do("DELETE", "/v1/queues/"+name, adminToken, ""), 503)
	proxy.Up()

	assertError(t, b.do("DELETE", "/v1/queues/"+name, "", ""), 401)
	assertError(t, b.do("DELETE", "/v1/queues/"+name, "wrong-token", ""), 403)
	r = b.do("DELETE", "/v1/queues/"+name, adminToken, "")
	require.Equal(t, 200, r.code, r.raw)
	assert.Equal(t, true, r.body["deleted"])
	assertError(t, b.do("GET", "/v1/queues/"+name, "", ""), 404)
	require.Eventually(t, func() bool { return a.do("GET", "/v1/queues/"+name, "", "").code == 404 },
		2*time.Second, 10*time.Millisecond, "deleted everywhere within a period")
	assertError(t, a.do("DELETE", "/v1/queues/"+name, adminToken, ""), 404)
	n, err := a.rdb.Exists(t.Context(), "wr:{"+name+"}:waiting", "wr:{"+name+"}:active").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "its keys are gone")
}

// TestBypassCodesHTTP: the admin API issues codes; a join with one is
// admitted at once when a place is free, else first in line; every use is
// counted; a malformed, forged or used-up code is 400, never 500.
func TestBypassCodesHTTP(t *testing.T) {
	st := storetest.Start(t)
	proxy := storetest.NewProxy(t, st.Addr)
	q := uniq("codes")
	e := newEnv(t, proxy.Addr(), envOpt{adminToken: adminToken}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	base := "/v1/queues/" + q

	assertError(t, e.do("POST", base+"/codes", "", ""), 401)
	assertError(t, e.do("POST", base+"/codes", "wrong", ""), 403)
	assertError(t, e.do("GET", base+"/codes", "", ""), 401)
	assertError(t, e.do("GET", base+"/codes", "wrong", ""), 403)
	assertError(t, e.do("POST", "/v1/queues/nope/codes", adminToken, ""), 404)
	assertError(t, e.do("GET", "/v1/queues/nope/codes", adminToken, ""), 404)
	assertError(t, e.do("POST", base+"/codes", adminToken, `{"uses":0}`), 400)
	assertError(t, e.do("POST", base+"/codes", adminToken, `{"count":1001}`), 400)
	r := e.do("POST", base+"/codes", adminToken, `{"count":1,"uses":2}`)
	require.Equal(t, 201, r.code, r.raw)
	codes := r.body["codes"].([]any)
	code := codes[0].(string)

	j := e.do("POST", base+"/join", "", `{"code":"`+code+`"}`)
	require.Equal(t, 200, j.code, j.raw)
	assert.Equal(t, "admitted", j.str("state"), "a free place: admitted at once")
	assert.NotEmpty(t, j.str("ticket"))
	assert.NotEmpty(t, j.str("pass"))
	a := e.join(q, "")
	j2 := e.do("POST", base+"/join", "", `{"code":"`+code+`"}`)
	require.Equal(t, 200, j2.code, j2.raw)
	assert.Equal(t, "waiting", j2.str("state"))
	assert.EqualValues(t, 1, j2.num("position"), "the head of the line")
	assert.EqualValues(t, 2, e.status(q, a.str("ticket")).num("position"))

	for _, bad := range []string{code, "x", "....", code + "x", `\u0000`, strings.Repeat("a", 3000),
		"0123456789abcdef." + strings.Repeat("A", 22), a.str("ticket")} {
		r := e.do("POST", base+"/join", "", `{"code":"`+bad+`"}`)
		assertError(t, r, 400)
	}
	assertError(t, e.do("POST", base+"/join", "", `{"code":12}`), 400)

	l := e.do("GET", base+"/codes", adminToken, "")
	require.Equal(t, 200, l.code, l.raw)
	list := l.body["codes"].([]any)
	require.Len(t, list, 1)
	c := list[0].(map[string]any)
	assert.EqualValues(t, 0, c["uses_left"])
	assert.EqualValues(t, 2, c["used"])
	assert.EqualValues(t, 2, e.do("GET", base, "", "").num("bypass_uses"))

	proxy.Down()
	assertError(t, e.do("POST", base+"/codes", adminToken, ""), 503)
	assertError(t, e.do("GET", base+"/codes", adminToken, ""), 503)
	proxy.Up()
}

// solve finds a proof of work for challenge at bits the slow, obvious way.
func solve(challenge string, bits int) string {
	for n := 0; ; n++ {
		s := strconv.Itoa(n)
		if queue.LeadingZeroBits(challenge, s) >= bits {
			return s
		}
	}
}

// TestProofOfWorkHTTP: with pow_bits set, a join needs a solved, unexpired,
// unused challenge of at least the queue's difficulty; anything else is 400.
func TestProofOfWorkHTTP(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("pow")
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken}, queueConf{name: q})
	base := "/v1/queues/" + q
	c := e.do("GET", base+"/challenge", "", "")
	require.Equal(t, 200, c.code)
	assert.EqualValues(t, 0, c.num("difficulty"), "off by default")
	e.join(q, "") // and joins need nothing

	easy := e.do("GET", base+"/challenge", "", "").str("challenge") // difficulty 0
	r := e.do("PUT", base, adminToken, `{"pow_bits":12}`)
	require.Equal(t, 200, r.code, r.raw)
	assert.EqualValues(t, 12, r.num("pow_bits"))
	assertError(t, e.do("PUT", base, adminToken, `{"pow_bits":33}`), 400)
	assertError(t, e.do("GET", "/v1/queues/nope/challenge", "", ""), 404)

	c = e.do("GET", base+"/challenge", "", "")
	require.EqualValues(t, 12, c.num("difficulty"))
	ch := c.str("challenge")
	sol := solve(ch, 12)
	body := func(ch, sol string) string { return `{"pow":{"challenge":"` + ch + `","solution":"` + sol + `"}}` }

	assertError(t, e.do("POST", base+"/join", "", ""), 400)
	bad := ""
	for n := 0; bad == ""; n++ { // a solution that does not solve it
		if s := strconv.Itoa(n); queue.LeadingZeroBits(ch, s) < 12 {
			bad = s
		}
	}
	for _, b := range []string{body(ch, bad), body(ch, ""), body("x", sol), body(ch+"x", sol),
		body(easy, solve(easy, 0)), body(strings.Repeat("a", 300), sol), body(ch, strings.Repeat("1", 65)),
		`{"pow":{"challenge":1}}`, `{"pow":"x"}`} {
		assertError(t, e.do("POST", base+"/join", "", b), 400)
	}
	j := e.do("POST", base+"/join", "", body(ch, sol))
	require.Equal(t, 200, j.code, j.raw)
	assertError(t, e.do("POST", base+"/join", "", body(ch, sol)), 400) // used
	require.Equal(t, 200, e.do("PUT", base, adminToken, `{"pow_bits":0}`).code)
	e.join(q, "")
}

// TestHistoryAndDashboard: the loop writes a history point per 10 s step
// (one per step whichever instance comes first), /history serves them with
// the admission rate between steps, and /admin is the embedded dashboard
// under the page's CSP.
func TestHistoryAndDashboard(t *testing.T) {
	st := storetest.Start(t)
	proxy := storetest.NewProxy(t, st.Addr)
	q := uniq("hist")
	e := newEnv(t, proxy.Addr(), envOpt{adminToken: adminToken}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	e.join(q, "")
	e.join(q, "")
	var h res
	require.Eventually(t, func() bool {
		h = e.do("GET", "/v1/queues/"+q+"/history", "", "")
		return h.code == 200 && len(h.body["points"].([]any)) > 0
	}, 5*time.Second, 20*time.Millisecond)
	assert.EqualValues(t, 10, h.num("step_seconds"))
	p := h.body["points"].([]any)[0].(map[string]any)
	assert.GreaterOrEqual(t, p["waiting"].(float64)+p["active"].(float64), 1.0)
	// Two points of the store: the rate is the admissions between them.
	hk := "wr:{" + q + "}:hist"
	b := time.Now().Unix()/10 - 3
	require.NoError(t, e.rdb.HSet(t.Context(), hk, b, "1 5 100", b+1, "1 4 120").Err())
	h = e.do("GET", "/v1/queues/"+q+"/history", "", "")
	var rates []float64
	for _, it := range h.body["points"].([]any) {
		rates = append(rates, it.(map[string]any)["admit_rate_per_s"].(float64))
	}
	assert.Contains(t, rates, 2.0, "20 admissions in 10 s")
	assertError(t, e.do("GET", "/v1/queues/nope/history", "", ""), 404)

	a := e.do("GET", "/admin", "", "")
	require.Equal(t, 200, a.code)
	assert.Contains(t, a.raw, "/assets/admin.js")
	assert.Contains(t, a.header.Get("Content-Security-Policy"), "script-src 'self'")
	for _, f := range []string{"admin.js", "admin.css", "pow.js"} {
		assert.Equal(t, 200, e.do("GET", "/assets/"+f, "", "").code, f)
	}
	proxy.Down()
	assertError(t, e.do("GET", "/v1/queues/"+q+"/history", "", ""), 503)
	proxy.Up()
}
