package httpapi_test

// Limits: the per-IP join limit shared through the store, trusted proxies,
// the admin failure limit, the event-stream caps and their shared reads.
// Needs a store (see queue/storetest).

import (
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/httpapi"
	"waitroom/queue/storetest"
)

// 300 anonymous joins from one client: the first `rate` pass, the rest get
// 429 with Retry-After, on every instance alike (the budget is in the store).
func TestJoinFloodIsLimited(t *testing.T) {
	st := storeFor(t)
	q := uniq("flood")
	const rate = 20
	a := newEnv(t, st.Addr, envOpt{joinRate: rate}, queueConf{name: q})
	b := newEnv(t, st.Addr, envOpt{joinRate: rate}, queueConf{name: q})
	ok, limited := 0, 0
	for i := 0; i < 300; i++ {
		e := a
		if i%2 == 1 {
			e = b
		}
		r := e.do("POST", "/v1/queues/"+q+"/join", "", `{}`)
		switch r.code {
		case 200:
			ok++
		case 429:
			limited++
			n, err := strconv.Atoi(r.header.Get("Retry-After"))
			require.NoError(t, err, "Retry-After %q", r.header.Get("Retry-After"))
			assert.Positive(t, n)
		default:
			t.Fatalf("join %d: %d %s", i, r.code, r.raw)
		}
	}
	t.Logf("300 joins from one address: %d admitted to the queue, %d refused", ok, limited)
	assert.LessOrEqual(t, ok, rate+2, "the burst, plus what refilled during the test")
	assert.GreaterOrEqual(t, ok, rate)
	assert.Equal(t, 300, ok+limited)
}

// X-Forwarded-For is believed only from trusted proxies.
func TestTrustedProxies(t *testing.T) {
	st := storeFor(t)
	join := func(e *env, q, xff string) int {
		return e.do("POST", "/v1/queues/"+q+"/join", "", `{}`, "X-Forwarded-For", xff).code
	}
	t.Run("untrusted peer", func(t *testing.T) {
		q := uniq("xff")
		e := newEnv(t, st.Addr, envOpt{joinRate: 2}, queueConf{name: q})
		// A client cannot dodge the limit by making up addresses.
		codes := []int{join(e, q, "1.1.1.1"), join(e, q, "2.2.2.2"), join(e, q, "3.3.3.3")}
		assert.Equal(t, []int{200, 200, 429}, codes)
	})
	t.Run("trusted proxy", func(t *testing.T) {
		q := uniq("xff")
		e := newEnv(t, st.Addr, envOpt{joinRate: 2, cfg: func(c *httpapi.Config) {
			c.TrustedProxies = mustPrefixes("127.0.0.0/8", "10.0.0.0/8")
		}}, queueConf{name: q})
		// Behind the proxy, each client has its own budget; the entry left of
		// the nearest untrusted hop is the client's to write, so it is ignored.
		codes := []int{join(e, q, "1.1.1.1"), join(e, q, "1.1.1.1"), join(e, q, "1.1.1.1"),
			join(e, q, "2.2.2.2, 10.0.0.5"), join(e, q, "9.9.9.9, 2.2.2.2")}
		assert.Equal(t, []int{200, 200, 429, 200, 200}, codes)
		assert.Equal(t, 429, join(e, q, "8.8.8.8, 2.2.2.2"), "2.2.2.2 spent its budget")
	})
}

// Failed admin attempts are limited per address; past the limit even the
// right token waits.
func TestAdminFailuresAreLimited(t *testing.T) {
	st := storeFor(t)
	q := uniq("adminlimit")
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken, cfg: func(c *httpapi.Config) { c.AdminFailures = 3 }},
		queueConf{name: q})
	path := "/v1/queues/" + q
	require.Equal(t, 200, e.do("PUT", path, adminToken, `{"slot":3}`).code)
	for i := 0; i < 3; i++ {
		assertError(t, e.do("PUT", path, fmt.Sprintf("guess-%d", i), `{"slot":5}`), 403)
	}
	r := e.do("PUT", path, "guess-4", `{"slot":5}`)
	assertError(t, r, 429)
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	assertError(t, e.do("PUT", path, adminToken, `{"slot":5}`), 429)
}

// A ticket may hold two streams per instance; the instance its cap. All
// streams of a queue share one store read per tick (poll mode; push mode
// reads far less, events_test.go).
func TestEventStreamCapsAndSharedReads(t *testing.T) {
	st := storeFor(t)
	q := uniq("caps")
	e := newEnv(t, st.Addr, envOpt{cfg: func(c *httpapi.Config) { c.MaxStreams = 12; c.Events = httpapi.EventsPoll }},
		queueConf{name: q, set: queue.Settings{Slot: 1}})
	tickets := e.fill(q, 12, 1)
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	for i := 0; i < 2; i++ {
		r := e.stream(q, tickets[1])
		require.Equal(t, 200, r.StatusCode)
		open = append(open, r)
	}
	third := e.stream(q, tickets[1])
	assert.Equal(t, 429, third.StatusCode, "a third stream of one ticket")
	assert.NotEmpty(t, third.Header.Get("Retry-After"))
	third.Body.Close()
	for _, tk := range tickets[2:] {
		r := e.stream(q, tk)
		if r.StatusCode != 200 {
			r.Body.Close()
			assert.Equal(t, 429, r.StatusCode)
			assert.Len(t, open, 12, "the instance's cap")
			break
		}
		open = append(open, r)
	}
	assert.Len(t, open, 12)

	// Let the hub tick for a while: every read served many streams.
	reads0, delivered0 := hubCounters(t, e)
	time.Sleep(3 * time.Second)
	reads, delivered := hubCounters(t, e)
	reads, delivered = reads-reads0, delivered-delivered0
	t.Logf("12 streams, 3 s: %d store reads delivered %d statuses", reads, delivered)
	require.Positive(t, reads)
	assert.GreaterOrEqual(t, float64(delivered)/float64(reads), 4.0, "statuses per store read")
}

var counterLine = regexp.MustCompile(`(?m)^(queue_event_store_reads_total|queue_event_statuses_delivered_total) (\d+)`)

func hubCounters(t *testing.T, e *env) (reads, delivered int) {
	m := e.do("GET", "/metrics", "", "")
	for _, g := range counterLine.FindAllStringSubmatch(m.raw, -1) {
		n, _ := strconv.Atoi(g[2])
		if g[1] == "queue_event_store_reads_total" {
			reads = n
		} else {
			delivered = n
		}
	}
	return reads, delivered
}

func storeFor(t *testing.T) storetest.Store { return storetest.Start(t) }

func mustPrefixes(cidrs ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range cidrs {
		out = append(out, netip.MustParsePrefix(c))
	}
	return out
}
