package httpapi_test

// Event streams pushed from the queue's round events (issue 17): two
// instances on one store, on MyRedis and on redis-server.

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/httpapi"
	"waitroom/queue/storetest"
)

// pageTab is an open event stream as a browser tab holds it: the latest status.
type pageTab struct {
	resp *http.Response
	mu   sync.Mutex
	last map[string]any
	n    int // statuses received
}

func openPage(t *testing.T, e *env, q, ticket string) *pageTab {
	t.Helper()
	resp := e.stream(q, ticket)
	require.Equal(t, 200, resp.StatusCode)
	t.Cleanup(func() { resp.Body.Close() })
	p := &pageTab{resp: resp}
	events := make(chan [2]string, 16)
	go readEvents(resp.Body, events)
	go func() {
		for ev := range events {
			if ev[0] != "status" {
				continue
			}
			var body map[string]any
			if json.Unmarshal([]byte(ev[1]), &body) == nil {
				p.mu.Lock()
				p.last, p.n = body, p.n+1
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// state is the page's latest state and people ahead (-1 when not waiting).
func (p *pageTab) state() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, _ := p.last["state"].(string)
	ahead, ok := p.last["ahead"].(float64)
	if !ok {
		return s, -1
	}
	return s, int(ahead)
}

func (p *pageTab) waitFor(t *testing.T, state string, ahead int) {
	t.Helper()
	require.Eventually(t, func() bool {
		s, a := p.state()
		return s == state && (state != "waiting" || a == ahead)
	}, 30*time.Second, 10*time.Millisecond, "page never showed %s (ahead %d)", state, ahead)
}

var zrankLine = regexp.MustCompile(`cmdstat_zrank:calls=(\d+)`)

// zranks is how many ZRANK the store ran (scripts included): the status
// script runs one per ticket it reads, so it counts per-page store work.
func zranks(t *testing.T, rdb redis.UniversalClient) int {
	t.Helper()
	info, err := rdb.Info(bg, "commandstats").Result()
	require.NoError(t, err)
	m := zrankLine.FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var bg = context.Background()

func shardSubscribers(t *testing.T, rdb redis.UniversalClient, q string) int64 {
	t.Helper()
	n, err := rdb.Do(bg, "PUBSUB", "SHARDNUMSUB", "wr:{"+q+"}:events").Slice()
	require.NoError(t, err)
	require.Len(t, n, 2)
	return n[1].(int64)
}

func waitSubscribers(t *testing.T, rdb redis.UniversalClient, q string, want int64) {
	t.Helper()
	require.Eventually(t, func() bool { return shardSubscribers(t, rdb, q) == want },
		30*time.Second, 20*time.Millisecond, "want %d subscribers of the queue's events", want)
}

const (
	farPages = 40  // pages open far back in the line, half on each instance
	fillers  = 100 // waiting users without a page between the front and them
)

// pageRun opens farPages pages behind fillers users on two instances in the
// given events mode, lets three users in one after another (each released
// through the other instance than the next user's page), and returns how
// many ZRANK the store ran meanwhile and for how long it counted.
func pageRun(t *testing.T, st storetest.Store, mode string) (zr int, took time.Duration) {
	q := uniq("pages-" + mode)
	o := envOpt{period: time.Minute, cfg: func(c *httpapi.Config) { c.Events = mode }}
	a := newEnv(t, st.Addr, o, queueConf{name: q, set: queue.Settings{Slot: 1}})
	b := newEnv(t, st.Addr, o, queueConf{name: q, set: queue.Settings{Slot: 1}})
	tickets := a.fill(q, 2+fillers+farPages, 1)
	front := openPage(t, b, q, tickets[1])
	front.waitFor(t, "waiting", 0)
	var far []*pageTab
	for i, tk := range tickets[2+fillers:] {
		far = append(far, openPage(t, []*env{a, b}[i%2], q, tk))
	}
	for i, p := range far {
		p.waitFor(t, "waiting", 1+fillers+i)
	}
	if mode == httpapi.EventsPush {
		waitSubscribers(t, a.rdb, q, 2) // one per instance, not one per page
	}

	before, start := zranks(t, a.rdb), time.Now()
	require.Equal(t, 200, a.do("POST", "/v1/queues/"+q+"/release", tickets[0], "").code)
	front.waitFor(t, "admitted", 0) // admitted by a's round, shown by b
	require.Equal(t, 200, b.do("POST", "/v1/queues/"+q+"/release", tickets[1], "").code)
	a.waitState(q, tickets[2], "admitted")
	require.Equal(t, 200, a.do("POST", "/v1/queues/"+q+"/release", tickets[2], "").code)
	for i, p := range far {
		p.waitFor(t, "waiting", fillers-2+i)
	}
	for time.Since(start) < 3*time.Second { // a window long enough for every poll to come round
		time.Sleep(50 * time.Millisecond)
	}
	return zranks(t, a.rdb) - before, time.Since(start)
}

// With push, a page sees "admitted" after a release on another instance,
// and pages far back follow the line, without the store being read for each
// page: the ZRANK count stays far below the number of pages, while poll mode
// (measured in the same run) reads every page.
func TestEventsArePushedNotPolled(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st storetest.Store) {
		push, pushTook := pageRun(t, st, httpapi.EventsPush)
		poll, pollTook := pageRun(t, st, httpapi.EventsPoll)
		t.Logf("%s, %d pages: push %d ZRANK in %v, poll %d ZRANK in %v", st.Name, farPages+1,
			push, pushTook.Round(time.Millisecond), poll, pollTook.Round(time.Millisecond))
		assert.GreaterOrEqual(t, poll, farPages, "poll mode reads every page")
		if pushTook > 50*time.Second {
			t.Logf("push window %v: the machine is too slow to bound the reads before the minute's re-read", pushTook)
			return
		}
		assert.Less(t, push, farPages/4, "push mode reads the store for the admitted page, not for every page")
	})
}

// With the subscription down (killed, and SSUBSCRIBE refused by an ACL so it
// cannot come back), pages still progress by the fallback poll; when
// SSUBSCRIBE is allowed again both instances subscribe again by themselves.
func TestEventsFallBackToPolling(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st storetest.Store) {
		q := uniq("fallback")
		a := newEnv(t, st.Addr, envOpt{period: time.Minute}, queueConf{name: q, set: queue.Settings{Slot: 1}})
		b := newEnv(t, st.Addr, envOpt{period: time.Minute}, queueConf{name: q, set: queue.Settings{Slot: 1}})
		tickets := a.fill(q, 5, 1)
		openPage(t, a, q, tickets[4]) // keep both hubs (and their subscriptions) alive
		openPage(t, b, q, tickets[4]).waitFor(t, "waiting", 3)
		waitSubscribers(t, a.rdb, q, 2)

		admin := storetest.ClientFor(t, st.Addr)
		require.NoError(t, admin.Do(bg, "ACL", "SETUSER", "default", "-ssubscribe").Err())
		killed, err := admin.Do(bg, "CLIENT", "KILL", "TYPE", "pubsub").Int()
		require.NoError(t, err)
		require.GreaterOrEqual(t, killed, 2)
		require.Zero(t, shardSubscribers(t, admin, q))

		p := openPage(t, b, q, tickets[1])
		p.waitFor(t, "waiting", 0)
		require.Equal(t, 200, a.do("POST", "/v1/queues/"+q+"/release", tickets[0], "").code)
		p.waitFor(t, "admitted", 0) // b has no subscription: its poll saw it
		require.Zero(t, shardSubscribers(t, admin, q), "nobody could subscribe meanwhile")

		require.NoError(t, admin.Do(bg, "ACL", "SETUSER", "default", "+ssubscribe").Err())
		waitSubscribers(t, admin, q, 2)
		p = openPage(t, b, q, tickets[2])
		p.waitFor(t, "waiting", 0)
		require.Equal(t, 200, a.do("POST", "/v1/queues/"+q+"/release", tickets[1], "").code)
		p.waitFor(t, "admitted", 0)
	})
}

// In push mode the tickets of open pages far from the front stay alive by
// their hub's holds (one store call for all of them every third of the
// ticket TTL), not by reading each page: across three ticket TTLs no page is
// read and every ticket keeps a deadline in the future. A page that closes is
// no longer held and its ticket expires.
func TestOpenPagesAreHeld(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st storetest.Store) {
		const ttl = 5 * time.Second
		q := uniq("held")
		a := newEnv(t, st.Addr, envOpt{period: time.Minute}, // no round sweeps: only reads end tickets
			queueConf{name: q, set: queue.Settings{Slot: 1, TicketTTL: ttl}})
		tickets := a.fill(q, 1+fillers+3, 1)
		var pages []*pageTab
		var ids []string
		for _, tk := range tickets[1+fillers:] {
			pages = append(pages, openPage(t, a, q, tk))
			id, _, _ := strings.Cut(tk, ".")
			ids = append(ids, id)
		}
		for i, p := range pages {
			p.waitFor(t, "waiting", fillers+i)
		}
		waitSubscribers(t, a.rdb, q, 1)
		before := zranks(t, a.rdb)
		holds := a.engs[q].Counters().Holds
		time.Sleep(3 * ttl)
		assert.Less(t, zranks(t, a.rdb)-before, len(pages), "the far pages were not read one by one")
		assert.GreaterOrEqual(t, a.engs[q].Counters().Holds-holds, uint64(2), "held every third of the TTL")
		now, err := a.rdb.Time(bg).Result()
		require.NoError(t, err)
		for _, id := range ids {
			dl, err := a.rdb.ZScore(bg, "wr:{"+q+"}:expiry", id).Result()
			require.NoError(t, err, "ticket %s still waiting", id)
			assert.Greater(t, int64(dl), now.UnixMilli(), "ticket %s alive", id)
		}
		for _, p := range pages {
			s, _ := p.state()
			assert.Equal(t, "waiting", s)
		}

		pages[0].resp.Body.Close()          // the tab closes: its ticket is no longer held
		require.Eventually(t, func() bool { // read without a status call, which would keep it alive
			now, err := a.rdb.Time(bg).Result()
			dl, err2 := a.rdb.ZScore(bg, "wr:{"+q+"}:expiry", ids[0]).Result()
			return err == nil && err2 == nil && int64(dl) < now.UnixMilli()
		}, 30*time.Second, 100*time.Millisecond, "the closed page's ticket is no longer held")
		assert.Equal(t, 410, a.status(q, tickets[1+fillers]).code, "it expired")
		assert.Equal(t, "waiting", a.status(q, tickets[2+fillers]).str("state"), "an open page's ticket does not")
	})
}

// In push mode a page far from the front follows the people who leave ahead
// of it (a leave, a round's sweep of tickets that stopped polling) from the
// round events, which name them by arrival number, without a store read of
// each page.
func TestPagesFollowDepartures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st storetest.Store) {
		const ahead = 120 // beyond the 100 nearest the front, whose pages are re-read every few seconds
		q := uniq("departures")
		a := newEnv(t, st.Addr, envOpt{period: time.Minute},
			queueConf{name: q, set: queue.Settings{Slot: 1, TicketTTL: time.Minute}})
		tickets := a.fill(q, 1+ahead+3, 1)
		var pages []*pageTab
		for _, tk := range tickets[1+ahead:] {
			pages = append(pages, openPage(t, a, q, tk))
		}
		for i, p := range pages {
			p.waitFor(t, "waiting", ahead+i)
		}
		waitSubscribers(t, a.rdb, q, 1)
		before := zranks(t, a.rdb)

		for _, tk := range tickets[1:4] { // three people ahead leave
			require.Equal(t, 200, a.do("POST", "/v1/queues/"+q+"/release", tk, "").code)
		}
		for i, p := range pages {
			p.waitFor(t, "waiting", ahead-3+i)
		}
		// Two stop polling: their deadlines pass, and the next round (the
		// release of a sixth one triggers it) sweeps them.
		now, err := a.rdb.Time(bg).Result()
		require.NoError(t, err)
		for _, tk := range tickets[4:6] {
			id, _, _ := strings.Cut(tk, ".")
			require.NoError(t, a.rdb.ZAddXX(bg, "wr:{"+q+"}:expiry",
				redis.Z{Score: float64(now.UnixMilli() - 1), Member: id}).Err())
		}
		require.Equal(t, 200, a.do("POST", "/v1/queues/"+q+"/release", tickets[6], "").code)
		for i, p := range pages {
			p.waitFor(t, "waiting", ahead-6+i)
		}
		assert.Less(t, zranks(t, a.rdb)-before, len(pages), "no page was read one by one")
	})
}
