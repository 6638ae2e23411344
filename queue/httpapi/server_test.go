package httpapi_test

// HTTP tests for every route and error status, through httptest against a
// real store (MyRedis in process, or redis-server; see queue/storetest).

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/httpapi"
	"waitroom/queue/storetest"
)

var secret = []byte("httpapi-test-secret-httpapi-test-secret")

const adminToken = "admin-token-for-tests-admin-token-for-tests"

var joinKey = []byte("join-key-of-the-protected-site-for-tests")

// signUser is what the protected site does: sign a user id for a join.
func signUser(key []byte, user string, expires int64) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(user + "\n" + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// userBody is a join body with a user id signed for an hour.
func userBody(user string) string {
	exp := time.Now().Add(time.Hour).Unix()
	return fmt.Sprintf(`{"user":%q,"expires":%d,"sig":%q}`, user, exp, signUser(joinKey, user, exp))
}

// env is one instance of the service in front of a store.
type env struct {
	t    *testing.T
	ts   *httptest.Server
	api  *httpapi.Server
	engs map[string]*queue.Engine
	rdb  redis.UniversalClient
}

type queueConf struct {
	name   string
	set    queue.Settings
	target string
}

var queueSeq atomic.Int64

// uniq makes queue names unique within a store shared by several envs.
func uniq(name string) string { return fmt.Sprintf("%s-%d", name, queueSeq.Add(1)) }

type envOpt struct {
	adminToken string
	secret     []byte
	period     time.Duration
	joinRate   int // 0: no limit in tests unless asked
	cfg        func(*httpapi.Config)
	runtime    bool // serve queues created at run time (httpapi.Runtime, Server.Run)
	// waitReplicas: the engines WAIT for this many replicas after each script
	waitReplicas int
}

func newEnv(t *testing.T, addr string, o envOpt, queues ...queueConf) *env {
	t.Helper()
	if o.secret == nil {
		o.secret = secret
	}
	if o.period == 0 {
		o.period = 50 * time.Millisecond
	}
	rdb := storetest.ClientFor(t, addr)
	e := &env{t: t, rdb: rdb, engs: map[string]*queue.Engine{}}
	ctx, cancel := context.WithCancel(context.Background())
	var rooms []httpapi.Queue
	for _, qc := range queues {
		name := qc.name
		eng, err := queue.New(rdb, name, queue.Options{Period: o.period, Secret: o.secret, Defaults: qc.set,
			InstanceID: "test-" + name, Logger: quietLog(), WaitReplicas: o.waitReplicas, WaitTimeout: 10 * time.Millisecond,
			Hooks: queue.Hooks{OnAdmit: func([]queue.Admission) {
				if e.api != nil {
					e.api.Notify(name)
				}
			}}})
		require.NoError(t, err)
		require.NoError(t, eng.Init(ctx))
		e.engs[name] = eng
		rooms = append(rooms, httpapi.Queue{Engine: eng, TargetURL: qc.target})
	}
	if o.joinRate == 0 {
		o.joinRate = -1
	}
	cfg := httpapi.Config{Queues: rooms, Store: rdb, AdminToken: o.adminToken,
		Logger: quietLog(), StoreTimeout: time.Second, JoinKey: joinKey, JoinRate: o.joinRate}
	if o.runtime {
		cfg.Runtime = &httpapi.Runtime{Period: o.period, NewEngine: func(name string, spec queue.Spec) (*queue.Engine, error) {
			return queue.New(rdb, name, queue.Options{Strategy: spec.Strategy, Period: o.period, Secret: o.secret,
				InstanceID: "test-" + name, Logger: quietLog(),
				Hooks: queue.Hooks{OnAdmit: func([]queue.Admission) {
					if e.api != nil {
						e.api.Notify(name)
					}
				}}})
		}}
	}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	api, err := httpapi.New(cfg)
	require.NoError(t, err)
	e.api = api
	for _, eng := range e.engs {
		go eng.Run(ctx)
	}
	go api.Run(ctx)
	e.ts = httptest.NewServer(api)
	t.Cleanup(func() { api.Drain(); e.ts.Close(); cancel() })
	return e
}

// res is a decoded response.
type res struct {
	code   int
	body   map[string]any
	raw    string
	header http.Header
}

func (r res) str(k string) string { s, _ := r.body[k].(string); return s }
func (r res) num(k string) float64 {
	n, _ := r.body[k].(float64)
	return n
}

func (e *env) do(method, path, token, body string, hdr ...string) res {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	require.NoError(e.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if method == "POST" || method == "PUT" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.ts.Client().Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	checkContract(e.t, req, resp, raw)
	r := res{code: resp.StatusCode, raw: string(raw), header: resp.Header, body: map[string]any{}}
	json.Unmarshal(raw, &r.body)
	return r
}

func (e *env) join(q, user string) res {
	e.t.Helper()
	body := ""
	if user != "" {
		body = userBody(user)
	}
	r := e.do("POST", "/v1/queues/"+q+"/join", "", body)
	require.Equal(e.t, 200, r.code, r.raw)
	require.NotEmpty(e.t, r.str("ticket"))
	return r
}

func (e *env) status(q, ticket string) res {
	return e.do("GET", "/v1/queues/"+q+"/status", ticket, "")
}

// waitState polls the status until the ticket reaches state.
func (e *env) waitState(q, ticket, state string) res {
	e.t.Helper()
	var r res
	require.Eventually(e.t, func() bool {
		r = e.status(q, ticket)
		return r.str("state") == state
	}, 5*time.Second, 20*time.Millisecond, "ticket never became %s; last %d %s", state, r.code, r.raw)
	return r
}

// fill joins n users and waits until the first `admitted` of them are in.
func (e *env) fill(q string, n, admitted int) []string {
	e.t.Helper()
	var tickets []string
	for i := 0; i < n; i++ {
		tickets = append(tickets, e.join(q, "").str("ticket"))
	}
	for i := 0; i < admitted; i++ {
		e.waitState(q, tickets[i], "admitted")
	}
	return tickets
}

func assertError(t *testing.T, r res, code int) {
	t.Helper()
	assert.Equal(t, code, r.code, r.raw)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	assert.NotEmpty(t, r.str("error"), "error body: %s", r.raw)
}

func TestJoin(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("join")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	path := "/v1/queues/" + q + "/join"

	first := e.join(q, "")
	e.waitState(q, first.str("ticket"), "admitted")

	a := e.join(q, "alice")
	assert.Equal(t, "waiting", a.str("state"))
	assert.EqualValues(t, 1, a.num("position"))
	assert.EqualValues(t, 0, a.num("ahead"))
	assert.Contains(t, a.body, "eta_seconds")
	assert.Positive(t, a.num("poll_after_ms"))

	b := e.join(q, "bob")
	assert.EqualValues(t, 2, b.num("position"), "position counts from 1")
	assert.EqualValues(t, 1, b.num("ahead"))

	again := e.join(q, "alice")
	assert.Equal(t, a.str("ticket"), again.str("ticket"), "joining twice with one user id keeps the ticket")
	assert.EqualValues(t, 1, again.num("position"))

	anon := e.do("POST", path, "", "")
	assert.Equal(t, 200, anon.code, "an empty body is an anonymous join")
	assert.EqualValues(t, 3, anon.num("position"))

	t.Run("signed user ids only", func(t *testing.T) {
		assertError(t, e.do("POST", path, "", `{"user":"alice"}`), 400) // place stealing
		exp := time.Now().Add(time.Hour).Unix()
		assertError(t, e.do("POST", path, "", fmt.Sprintf(`{"user":"alice","expires":%d,"sig":%q}`,
			exp, signUser([]byte("another key"), "alice", exp))), 400)
		assertError(t, e.do("POST", path, "", fmt.Sprintf(`{"user":"alice","expires":%d,"sig":%q}`,
			exp+1, signUser(joinKey, "alice", exp))), 400)
		old := time.Now().Add(-time.Minute).Unix()
		assertError(t, e.do("POST", path, "", fmt.Sprintf(`{"user":"alice","expires":%d,"sig":%q}`,
			old, signUser(joinKey, "alice", old))), 400)
		assertError(t, e.do("POST", path, "", `{"expires":5,"sig":"ab"}`), 400)
	})
	t.Run("json only", func(t *testing.T) {
		// A cross-site form cannot send application/json.
		assertError(t, e.do("POST", path, "", `user=alice`, "Content-Type", "application/x-www-form-urlencoded"), 415)
		assertError(t, e.do("POST", path, "", `{}`, "Content-Type", "text/plain"), 415)
		assertError(t, e.do("POST", path, "", ``, "Content-Type", ""), 415)
		assert.Equal(t, 200, e.do("POST", path, "", `{}`, "Content-Type", "application/json; charset=utf-8").code)
	})
	t.Run("bad input", func(t *testing.T) {
		assertError(t, e.do("POST", path, "", `{"user":`), 400)
		assertError(t, e.do("POST", path, "", `["user"]`), 400)
		assertError(t, e.do("POST", path, "", `{"user": 7}`), 400)
		assertError(t, e.do("POST", path, "", `{"usr":"x"}`), 400)
		assertError(t, e.do("POST", path, "", `{"user":"x"} {"user":"y"}`), 400)
		assertError(t, e.do("POST", path, "", userBody(strings.Repeat("u", 200))), 400)
		big := e.do("POST", path, "", `{"user":"`+strings.Repeat("u", 10_000)+`"}`)
		assertError(t, big, 413)
		assertError(t, e.do("POST", "/v1/queues/no-such-queue/join", "", ""), 404)
		assertError(t, e.do("POST", "/v1/queues/bad%20name!/join", "", ""), 404)
	})
	t.Run("wrong method", func(t *testing.T) {
		for _, m := range []string{"GET", "PUT", "DELETE", "PATCH"} {
			r := e.do(m, path, "", "")
			assertError(t, r, 405)
			assert.Equal(t, "POST", r.header.Get("Allow"))
		}
	})
}

func TestStatus(t *testing.T) {
	st := storetest.Start(t)
	q, other := uniq("status"), uniq("other")
	e := newEnv(t, st.Addr, envOpt{},
		queueConf{name: q, set: queue.Settings{Slot: 1}, target: "http://shop.example/checkout?lang=en"},
		queueConf{name: other})
	tickets := e.fill(q, 30, 1)

	in := e.status(q, tickets[0])
	require.Equal(t, 200, in.code, in.raw)
	assert.Equal(t, "admitted", in.str("state"))
	assert.NotEmpty(t, in.str("pass"))
	exp, err := time.Parse(time.RFC3339, in.str("expires_at"))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(queue.DefaultSettings.Session), exp, 10*time.Second)
	u, err := url.Parse(in.str("redirect_url"))
	require.NoError(t, err)
	assert.Equal(t, "shop.example", u.Host)
	assert.Equal(t, in.str("pass"), u.Query().Get("pass"))
	assert.Equal(t, "en", u.Query().Get("lang"), "the target's own query is kept")

	w := e.status(q, tickets[1])
	require.Equal(t, 200, w.code, w.raw)
	assert.Equal(t, "waiting", w.str("state"))
	assert.EqualValues(t, 1, w.num("position"))
	assert.EqualValues(t, 0, w.num("ahead"))
	assert.NotNil(t, w.body["eta_seconds"], "one admission gives the queue a rate")
	back := e.status(q, tickets[29])
	assert.EqualValues(t, 28, back.num("ahead"))
	assert.Greater(t, back.num("poll_after_ms"), w.num("poll_after_ms"), "those far back poll less often")
	assert.Greater(t, back.num("eta_seconds"), w.num("eta_seconds"))

	t.Run("401", func(t *testing.T) {
		r := e.status(q, "")
		assertError(t, r, 401)
		assert.Contains(t, r.header.Get("WWW-Authenticate"), "Bearer")
		assertError(t, e.do("GET", "/v1/queues/"+q+"/status", "", "", "Authorization", "Basic "+tickets[1]), 401)
		tampered := []byte(tickets[1])
		tampered[3] ^= 1 // another ticket id under the same MAC
		assertError(t, e.status(q, string(tampered)), 401)
		assertError(t, e.status(q, tickets[1]+"x"), 401)
		assertError(t, e.status(q, "not-a-ticket"), 401)
		assertError(t, e.status(q, in.str("pass")), 401) // a pass is not a ticket
		foreign := e.join(other, "").str("ticket")
		assertError(t, e.status(q, foreign), 401) // a ticket of another queue
	})
	t.Run("410 after release", func(t *testing.T) {
		r := e.do("POST", "/v1/queues/"+q+"/release", tickets[5], "")
		require.Equal(t, 200, r.code)
		gone := e.status(q, tickets[5])
		assertError(t, gone, 410)
		assert.Equal(t, "expired", gone.str("state"))
		assert.Equal(t, queue.ReasonReleased, gone.str("reason"))
	})
	t.Run("404", func(t *testing.T) {
		assertError(t, e.status("nope", tickets[1]), 404)
	})
}

// A waiting ticket nobody polls expires; polling keeps it.
func TestStatusTicketTTL(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("ttl")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 1, TicketTTL: 600 * time.Millisecond}})
	tickets := e.fill(q, 3, 1)
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) { // ticket 1 polls, ticket 2 does not
		r := e.status(q, tickets[1])
		require.Equal(t, 200, r.code, r.raw)
		assert.LessOrEqual(t, r.num("poll_after_ms"), 150.0, "poll_after_ms stays within the ticket TTL")
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, "waiting", e.status(q, tickets[1]).str("state"))
	r := e.status(q, tickets[2])
	assertError(t, r, 410)
	assert.Equal(t, "expired", r.str("state"))
	assert.Equal(t, queue.ReasonExpired, r.str("reason"))
}

// TestJoinIdempotencyKey: an anonymous join retried with its Idempotency-Key
// gets the same ticket; another key gets another; a malformed key is 400.
func TestJoinIdempotencyKey(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("joinkey")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 2}})
	path := "/v1/queues/" + q + "/join"
	assertError(t, e.do("POST", path, "", `{}`, "Idempotency-Key", "has space"), 400)
	first := e.do("POST", path, "", `{}`, "Idempotency-Key", "browser-try-1")
	require.Equal(t, 200, first.code, first.raw)
	retry := e.do("POST", path, "", `{}`, "Idempotency-Key", "browser-try-1")
	require.Equal(t, 200, retry.code, retry.raw)
	assert.Equal(t, first.str("ticket"), retry.str("ticket"))
	other := e.do("POST", path, "", `{}`, "Idempotency-Key", "browser-try-2")
	require.Equal(t, 200, other.code, other.raw)
	assert.NotEqual(t, first.str("ticket"), other.str("ticket"))
}

func TestEnter(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("enter")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 2}})
	tickets := e.fill(q, 3, 2)
	path := "/v1/queues/" + q + "/enter"
	pass := e.status(q, tickets[0]).str("pass")

	ok := e.do("POST", path, "", `{"pass":"`+pass+`"}`)
	require.Equal(t, 200, ok.code, ok.raw)
	assert.Equal(t, "entered", ok.str("state"))
	assert.NotEmpty(t, ok.str("session"), "the site gets the session token for heartbeat and release")
	assert.NotEqual(t, tickets[0], ok.str("session"))
	_, err := time.Parse(time.RFC3339, ok.str("expires_at"))
	assert.NoError(t, err)

	assertError(t, e.do("POST", path, "", `{"pass":"`+pass+`"}`), 409)

	forged := []byte(pass)
	forged[len(forged)-1] ^= 1
	assertError(t, e.do("POST", path, "", `{"pass":"`+string(forged)+`"}`), 401)
	assertError(t, e.do("POST", path, "", `{"pass":"`+tickets[2]+`"}`), 401) // a ticket is not a pass
	assertError(t, e.do("POST", path, "", `{"pass":""}`), 400)
	assertError(t, e.do("POST", path, "", ``), 400)
	assertError(t, e.do("POST", path, "", `{"pass":`), 400)
	assertError(t, e.do("GET", path, "", ``), 405)

	// The second user's site retries its unanswered enter with the same
	// Idempotency-Key: the same session again; another key, or none: 409.
	pass2 := e.status(q, tickets[1]).str("pass")
	body2 := `{"pass":"` + pass2 + `"}`
	assertError(t, e.do("POST", path, "", body2, "Idempotency-Key", "has space"), 400)
	assertError(t, e.do("POST", path, "", body2, "Idempotency-Key", strings.Repeat("k", 65)), 400)
	first := e.do("POST", path, "", body2, "Idempotency-Key", "site-try-7")
	require.Equal(t, 200, first.code, first.raw)
	retry := e.do("POST", path, "", body2, "Idempotency-Key", "site-try-7")
	require.Equal(t, 200, retry.code, retry.raw)
	assert.Equal(t, first.str("session"), retry.str("session"))
	assertError(t, e.do("POST", path, "", body2, "Idempotency-Key", "site-try-8"), 409)
	assertError(t, e.do("POST", path, "", body2), 409)

	// The second user's session ends before the site tries again: 410.
	require.Equal(t, 200, e.do("POST", "/v1/queues/"+q+"/release", first.str("session"), "").code)
	r := e.do("POST", path, "", `{"pass":"`+pass2+`"}`)
	assertError(t, r, 410)
	assert.Equal(t, "expired", r.str("state"))
}

func TestHeartbeatAndRelease(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("hb")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 1, Session: 30 * time.Second}})
	tickets := e.fill(q, 2, 1)
	hb := "/v1/queues/" + q + "/heartbeat"
	rel := "/v1/queues/" + q + "/release"
	in := e.status(q, tickets[0])
	entered := e.do("POST", "/v1/queues/"+q+"/enter", "", `{"pass":"`+in.str("pass")+`"}`)
	require.Equal(t, 200, entered.code, entered.raw)
	session := entered.str("session")

	// Only the entered session's token extends it: not the waiting-room
	// ticket (a visitor could keep the place forever), not the pass.
	assertError(t, e.do("POST", hb, tickets[0], ""), 401)
	assertError(t, e.do("POST", hb, in.str("pass"), ""), 401)
	assertError(t, e.do("POST", hb, tickets[1], ""), 401)
	before, _ := time.Parse(time.RFC3339, in.str("expires_at"))
	time.Sleep(20 * time.Millisecond)
	r := e.do("POST", hb, session, "")
	require.Equal(t, 200, r.code, r.raw)
	after, err := time.Parse(time.RFC3339, r.str("expires_at"))
	require.NoError(t, err)
	assert.True(t, after.After(before), "heartbeat extends the session: %v -> %v", before, after)
	assertError(t, e.do("POST", hb, "", ""), 401)
	assertError(t, e.do("POST", hb, "x.y", ""), 401)
	assertError(t, e.do("GET", hb, session, ""), 405)

	// The ticket cannot end the entered session either.
	assertError(t, e.do("POST", rel, tickets[0], ""), 403)
	// Release with the session: the next is admitted at once (not only at
	// the next period).
	r = e.do("POST", rel, session, "")
	require.Equal(t, 200, r.code, r.raw)
	assert.Equal(t, true, r.body["released"])
	e.waitState(q, tickets[1], "admitted")
	again := e.do("POST", rel, session, "")
	require.Equal(t, 200, again.code)
	assert.Equal(t, false, again.body["released"], "releasing twice is harmless")

	gone := e.do("POST", hb, session, "")
	assertError(t, gone, 410)
	assert.Equal(t, "expired", gone.str("state"))
	assert.Equal(t, queue.ReasonSessionOver, gone.str("reason"))
	assert.Equal(t, queue.ReasonReleased, e.status(q, tickets[0]).str("reason"))
	assertError(t, e.do("POST", rel, "", ""), 401)
	assertError(t, e.do("DELETE", rel, tickets[1], ""), 405)
	assertError(t, e.do("POST", "/v1/queues/nope/release", tickets[1], ""), 404)
}

// The max session: heartbeats stop extending a session at admission + max.
func TestMaxSession(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("max")
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken}, queueConf{name: q,
		set: queue.Settings{Slot: 1, Session: 30 * time.Second, MaxSession: 2 * time.Second}})
	tk := e.fill(q, 1, 1)[0]
	in := e.status(q, tk)
	session := e.do("POST", "/v1/queues/"+q+"/enter", "", `{"pass":"`+in.str("pass")+`"}`).str("session")
	r := e.do("POST", "/v1/queues/"+q+"/heartbeat", session, "")
	require.Equal(t, 200, r.code, r.raw)
	got, _ := time.Parse(time.RFC3339, r.str("expires_at"))
	first, _ := time.Parse(time.RFC3339, in.str("expires_at"))
	assert.Equal(t, first, got, "the admission's deadline is already admission + max session; no beat moves it")
	info := e.do("GET", "/v1/queues/"+q, "", "")
	assert.EqualValues(t, 2, info.num("max_session_seconds"))
	require.Eventually(t, func() bool {
		return e.do("POST", "/v1/queues/"+q+"/heartbeat", session, "").code == 410
	}, 10*time.Second, 100*time.Millisecond, "the session ends at the max however often it beats")
}

// Release triggers a round on the instance at once: with a one-minute period
// the next user is still admitted within moments.
func TestReleaseAdmitsAtOnce(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("rel")
	e := newEnv(t, st.Addr, envOpt{period: time.Minute}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	a := e.join(q, "").str("ticket")
	e.waitState(q, a, "admitted") // a join at the head triggers a round too
	b := e.join(q, "").str("ticket")
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, "waiting", e.status(q, b).str("state"))
	start := time.Now()
	require.Equal(t, 200, e.do("POST", "/v1/queues/"+q+"/release", a, "").code)
	e.waitState(q, b, "admitted")
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestQueueInfoAndAdmin(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("admin")
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken}, queueConf{name: q, set: queue.Settings{Slot: 2}})
	tickets := e.fill(q, 5, 2)
	path := "/v1/queues/" + q

	r := e.do("GET", path, "", "")
	require.Equal(t, 200, r.code, r.raw)
	assert.Equal(t, q, r.str("name"))
	assert.EqualValues(t, 2, r.num("slot"))
	assert.EqualValues(t, 2, r.num("active"))
	assert.EqualValues(t, 3, r.num("waiting"))
	assert.EqualValues(t, 2, r.num("admitted_total"))
	assert.Positive(t, r.num("admit_rate_per_s"))
	assert.Equal(t, "atomic", r.str("strategy"))
	assertError(t, e.do("GET", "/v1/queues/nope", "", ""), 404)
	assertError(t, e.do("POST", path, "", ""), 405)

	list := e.do("GET", "/v1/queues", "", "")
	require.Equal(t, 200, list.code)
	assert.Contains(t, list.raw, `"name":"`+q+`"`)

	t.Run("auth", func(t *testing.T) {
		r := e.do("PUT", path, "", `{"slot":5}`)
		assertError(t, r, 401)
		assert.NotEmpty(t, r.header.Get("WWW-Authenticate"))
		assertError(t, e.do("PUT", path, "wrong", `{"slot":5}`), 403)
		assertError(t, e.do("PUT", path, adminToken[:10], `{"slot":5}`), 403)
		assertError(t, e.do("PUT", path, tickets[0], `{"slot":5}`), 403) // a ticket is no admin token
	})
	t.Run("bad input", func(t *testing.T) {
		for _, body := range []string{``, `{}`, `{"slot":0}`, `{"slot":-1}`, `{"slot":1.5}`, `{"slot":"5"}`,
			`{"session_seconds":0}`, `{"ticket_ttl_seconds":-3}`, `{"session_seconds":1e9}`, `{"slots":5}`, `{"slot":5`} {
			assertError(t, e.do("PUT", path, adminToken, body), 400)
		}
		assertError(t, e.do("PUT", "/v1/queues/nope", adminToken, `{"slot":5}`), 404)
	})

	// Raising the slot lets the waiting users in within a period or so, on
	// every instance (the loop rereads the settings each round).
	r = e.do("PUT", path, adminToken, `{"slot":5,"session_seconds":120}`)
	require.Equal(t, 200, r.code, r.raw)
	assert.EqualValues(t, 5, r.num("slot"))
	assert.EqualValues(t, 120, r.num("session_seconds"))
	assert.EqualValues(t, 300, r.num("ticket_ttl_seconds"), "fields left out keep their value")
	for _, tk := range tickets {
		e.waitState(q, tk, "admitted")
	}
	r = e.do("GET", path, "", "")
	assert.EqualValues(t, 5, r.num("active"))

	// A second instance on the same store sees the new settings.
	e2 := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 2}})
	assert.EqualValues(t, 5, e2.do("GET", path, "", "").num("slot"), "the store's settings win over the defaults")
	assertError(t, e2.do("PUT", path, adminToken, `{"slot":7}`), 403) // admin API off there
}

// A ticket issued by one instance is accepted by another with the same
// secret, and refused by one with another secret.
func TestTicketAcrossInstances(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("cross")
	a := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	b := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	c := newEnv(t, st.Addr, envOpt{secret: []byte("another-secret-another-secret-another")}, queueConf{name: q})
	tickets := a.fill(q, 2, 1)
	assert.Equal(t, "waiting", b.status(q, tickets[1]).str("state"))
	assertError(t, c.status(q, tickets[1]), 401)
	require.Equal(t, 200, b.do("POST", "/v1/queues/"+q+"/release", tickets[0], "").code)
	b.waitState(q, tickets[1], "admitted")
}

func TestEvents(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("events")
	e := newEnv(t, st.Addr, envOpt{period: time.Minute}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	tickets := e.fill(q, 2, 1)
	path := "/v1/queues/" + q + "/events"

	resp := e.stream(q, tickets[1])
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := make(chan [2]string, 10)
	go readEvents(resp.Body, events)

	ev := next(t, events)
	assert.Equal(t, "status", ev[0])
	assert.Contains(t, ev[1], `"state":"waiting"`)
	assert.Contains(t, ev[1], `"ahead":0`)

	require.Equal(t, 200, e.do("POST", "/v1/queues/"+q+"/release", tickets[0], "").code)
	ev = next(t, events)
	for strings.Contains(ev[1], `"state":"waiting"`) { // the ETA may change meanwhile
		ev = next(t, events)
	}
	assert.Equal(t, "status", ev[0])
	assert.Contains(t, ev[1], `"state":"admitted"`)
	assert.Contains(t, ev[1], `"pass":"`)
	_, open := <-events
	assert.False(t, open, "the stream ends after the admission")

	// Bearer works too; bad tickets get a JSON status, not a stream.
	r := e.do("GET", path, tickets[1], "")
	assert.Equal(t, 200, r.code)
	assert.Contains(t, r.raw, `"state":"admitted"`)
	assertError(t, e.do("GET", path, "", ""), 401)
	assertError(t, e.do("GET", path, "", "", "Cookie", "wr_ticket=forged.x"), 401)
	assertError(t, e.do("GET", path+"?ticket="+url.QueryEscape(tickets[1]), "", ""), 401) // never in the URL
	require.Equal(t, 200, e.do("POST", "/v1/queues/"+q+"/release", tickets[1], "").code)
	assertError(t, e.do("GET", path, tickets[1], ""), 410)
	assertError(t, e.do("POST", path, tickets[1], ""), 405)
	assertError(t, e.do("GET", "/v1/queues/nope/events", tickets[1], ""), 404)
}

// stream opens an event stream as the page does: the ticket in the cookie.
func (e *env) stream(q, ticket string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.ts.URL+"/v1/queues/"+q+"/events", nil)
	require.NoError(e.t, err)
	req.AddCookie(&http.Cookie{Name: "wr_ticket", Value: ticket})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	return resp
}

func readEvents(body io.Reader, out chan<- [2]string) {
	defer close(out)
	sc := bufio.NewScanner(body)
	var name, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && name != "":
			out <- [2]string{name, data}
			name, data = "", ""
		}
	}
}

func next(t *testing.T, events <-chan [2]string) [2]string {
	t.Helper()
	select {
	case ev, ok := <-events:
		require.True(t, ok, "the stream ended early")
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return [2]string{}
}

func TestHealthMetricsAndPages(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("pages")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	e.fill(q, 2, 1)

	assert.Equal(t, 200, e.do("GET", "/healthz", "", "").code)
	assert.Equal(t, 200, e.do("GET", "/readyz", "", "").code)
	assertError(t, e.do("POST", "/healthz", "", ""), 405)

	m := e.do("GET", "/metrics", "", "")
	require.Equal(t, 200, m.code)
	for _, want := range []string{
		`queue_joins_total{queue="` + q + `"} 2`,
		`queue_admissions_total{queue="` + q + `"} 1`,
		`queue_active_sessions{queue="` + q + `"} 1`,
		`queue_waiting_tickets{queue="` + q + `"} 1`,
		`queue_releases_total{queue="` + q + `"}`,
		`queue_reclaims_total{queue="` + q + `"}`,
		`queue_rollbacks_total{queue="` + q + `"}`,
		`queue_lost_leases_total{queue="` + q + `"}`,
		`queue_http_request_duration_seconds_bucket{code="200",method="POST",route="/v1/queues/{q}/join"`,
		`queue_store_errors_total`,
	} {
		assert.Contains(t, m.raw, want)
	}

	page := e.do("GET", "/q/"+q, "", "")
	require.Equal(t, 200, page.code)
	assert.Contains(t, page.header.Get("Content-Type"), "text/html")
	assert.Contains(t, page.raw, `data-queue="`+q+`"`)
	assert.Contains(t, page.header.Get("Content-Security-Policy"), "default-src 'none'")
	assert.NotContains(t, page.raw, "http://", "the page loads nothing from elsewhere")
	assert.NotContains(t, page.raw, "https://")
	assert.Equal(t, 404, e.do("GET", "/q/nope", "", "").code)
	xss := e.do("GET", "/q/%3Cscript%3E", "", "")
	assert.Equal(t, 404, xss.code)
	assert.NotContains(t, xss.raw, "<script>")

	js := e.do("GET", "/assets/room.js", "", "")
	require.Equal(t, 200, js.code)
	assert.Contains(t, js.header.Get("Content-Type"), "javascript")
	css := e.do("GET", "/assets/room.css", "", "")
	require.Equal(t, 200, css.code)
	assert.Contains(t, css.header.Get("Content-Type"), "text/css")
	assertError(t, e.do("GET", "/assets/nope.js", "", ""), 404)
	assertError(t, e.do("GET", "/assets/..%2Fpage.go", "", ""), 404)

	idx := e.do("GET", "/", "", "")
	assert.Equal(t, 200, idx.code)
	assert.Contains(t, idx.raw, "/q/"+q)
	assertError(t, e.do("GET", "/no/such/route", "", ""), 404)
}

// Store down: every route that needs the store answers 503 with
// Retry-After, nothing panics, and the service recovers by itself.
func TestStoreDown(t *testing.T) {
	st := storetest.Start(t)
	proxy := storetest.NewProxy(t, st.Addr)
	q := uniq("down")
	e := newEnv(t, proxy.Addr(), envOpt{adminToken: adminToken}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	tickets := e.fill(q, 2, 1)
	pass := e.status(q, tickets[0]).str("pass")

	proxy.Down()
	base := "/v1/queues/" + q
	for _, c := range []struct{ method, path, token, body string }{
		{"POST", base + "/join", "", `{}`},
		{"GET", base + "/status", tickets[1], ""},
		{"GET", base + "/events", tickets[1], ""},
		{"POST", base + "/release", tickets[1], ""},
		{"POST", base + "/enter", "", `{"pass":"` + pass + `"}`},
		{"GET", base, "", ""},
		{"PUT", base, adminToken, `{"slot":2}`},
		{"GET", "/readyz", "", ""},
	} {
		r := e.do(c.method, c.path, c.token, c.body)
		assertError(t, r, 503)
		assert.Equal(t, "1", r.header.Get("Retry-After"), "%s %s", c.method, c.path)
	}
	assert.Equal(t, 200, e.do("GET", "/healthz", "", "").code, "the process is up")
	m := e.do("GET", "/metrics", "", "")
	assert.Equal(t, 200, m.code, "metrics still answer without the store")
	assert.Contains(t, m.raw, `queue_store_errors_total{op="join"} 1`)
	// Wrong input is still told apart from an outage.
	assertError(t, e.do("GET", base+"/status", "forged.x", ""), 401)

	proxy.Up()
	require.Eventually(t, func() bool { return e.do("GET", "/readyz", "", "").code == 200 },
		5*time.Second, 50*time.Millisecond)
	assert.Equal(t, "waiting", e.status(q, tickets[1]).str("state"))
	in := e.do("POST", base+"/enter", "", `{"pass":"`+pass+`"}`)
	require.Equal(t, 200, in.code, "the pass survived the outage")
	require.Equal(t, 200, e.do("POST", base+"/release", in.str("session"), "").code)
	e.waitState(q, tickets[1], "admitted") // the admission loop is back too
}

// An event stream survives an outage: it reports "unavailable" and carries
// on when the store returns.
func TestEventsStoreOutage(t *testing.T) {
	st := storetest.Start(t)
	proxy := storetest.NewProxy(t, st.Addr)
	q := uniq("evdown")
	e := newEnv(t, proxy.Addr(), envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	tickets := e.fill(q, 2, 1)
	resp := e.stream(q, tickets[1])
	defer resp.Body.Close()
	events := make(chan [2]string, 10)
	go readEvents(resp.Body, events)
	assert.Equal(t, "status", next(t, events)[0])
	proxy.Down()
	assert.Equal(t, "unavailable", next(t, events)[0])
	proxy.Up()
	ev := next(t, events)
	for ev[0] == "unavailable" {
		ev = next(t, events)
	}
	assert.Contains(t, ev[1], `"state":"waiting"`)
	require.Equal(t, 200, e.do("POST", "/v1/queues/"+q+"/release", tickets[0], "").code)
	ev = next(t, events)
	for strings.Contains(ev[1], `"state":"waiting"`) {
		ev = next(t, events)
	}
	assert.Contains(t, ev[1], `"state":"admitted"`)
}

func TestDrainEndsStreams(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("drain")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	tickets := e.fill(q, 2, 1)
	resp := e.stream(q, tickets[1])
	defer resp.Body.Close()
	events := make(chan [2]string, 10)
	go readEvents(resp.Body, events)
	next(t, events)
	e.api.Drain()
	select {
	case _, open := <-events:
		assert.False(t, open, "the stream ends on drain")
	case <-time.After(5 * time.Second):
		t.Fatal("stream still open after drain")
	}
	assertError(t, e.do("GET", "/readyz", "", ""), 503)
}
