package httpapi_test

// /metrics: the wait histogram observes the real waits of admitted users, and
// the queue's state is exported as it changes.

import (
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/storetest"
)

// scrape reads /metrics into metric families.
func (e *env) scrape() map[string]*dto.MetricFamily {
	e.t.Helper()
	r := e.do("GET", "/metrics", "", "")
	require.Equal(e.t, 200, r.code)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(r.raw))
	require.NoError(e.t, err)
	return fams
}

// series returns the metric of family name whose labels include want.
func series(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	f, ok := fams[name]
	require.True(t, ok, "no metric %s", name)
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && got[k] == v
		}
		if match {
			return m
		}
	}
	t.Fatalf("no series of %s with %v", name, want)
	return nil
}

// TestWaitHistogram: two users admitted, the second held in line for at
// least minWait: queue_wait_seconds counts both, its sum is at least
// minWait and at most the time the test took, and the buckets place the
// second wait above minWait.
func TestWaitHistogram(t *testing.T) {
	const minWait = 300 * time.Millisecond
	st := storetest.Start(t)
	q := uniq("wait")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q, set: queue.Settings{Slot: 1, TicketTTL: time.Hour}})
	lbl := map[string]string{"queue": q}

	h := series(t, e.scrape(), "queue_wait_seconds", lbl).GetHistogram()
	require.Zero(t, h.GetSampleCount(), "no admission yet")

	before := time.Now()
	users := fillPatiently(t, e, q, 2, 1)
	time.Sleep(minWait) // the second user stands in line at least this long
	rel := e.do("POST", "/v1/queues/"+q+"/release", users[0], "")
	require.Equal(t, 200, rel.code, rel.raw)
	pollUntil(t, "the second user admitted", func() bool { return e.status(q, users[1]).str("state") == "admitted" })
	elapsed := time.Since(before)

	fams := e.scrape()
	h = series(t, fams, "queue_wait_seconds", lbl).GetHistogram()
	require.EqualValues(t, 2, h.GetSampleCount())
	assert.GreaterOrEqual(t, h.GetSampleSum(), (minWait - time.Millisecond).Seconds())
	assert.LessOrEqual(t, h.GetSampleSum(), 2*(elapsed+time.Millisecond).Seconds())
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() < minWait.Seconds()-0.001 {
			assert.LessOrEqual(t, b.GetCumulativeCount(), uint64(1), "le=%v: the second wait is above it", b.GetUpperBound())
		}
		if b.GetUpperBound() >= 2*elapsed.Seconds() {
			assert.EqualValues(t, 2, b.GetCumulativeCount(), "le=%v holds both", b.GetUpperBound())
		}
	}
	adm := series(t, fams, "queue_admissions_total", lbl).GetCounter().GetValue()
	assert.EqualValues(t, 2, adm, "one observation per admission")
}

// TestStateMetrics: queue_state says the queue's state, one series per state.
func TestStateMetrics(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("statem")
	e := newEnv(t, st.Addr, envOpt{adminToken: adminToken}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	states := func() map[string]float64 {
		fams := e.scrape()
		out := map[string]float64{}
		for _, s := range []string{"open", "paused", "scheduled", "closed"} {
			out[s] = series(t, fams, "queue_state", map[string]string{"queue": q, "state": s}).GetGauge().GetValue()
		}
		return out
	}
	assert.Equal(t, map[string]float64{"open": 1, "paused": 0, "scheduled": 0, "closed": 0}, states())
	require.Equal(t, 200, e.do("PUT", "/v1/queues/"+q, adminToken, `{"state":"paused"}`).code)
	assert.Equal(t, map[string]float64{"open": 0, "paused": 1, "scheduled": 0, "closed": 0}, states())
	opens := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	require.Equal(t, 200, e.do("PUT", "/v1/queues/"+q, adminToken, `{"state":"open","opens_at":"`+opens+`"}`).code)
	e.join(q, "")
	fams := e.scrape()
	assert.EqualValues(t, 1, series(t, fams, "queue_state", map[string]string{"queue": q, "state": "scheduled"}).GetGauge().GetValue())
	assert.EqualValues(t, 1, series(t, fams, "queue_pre_queue_tickets", map[string]string{"queue": q}).GetGauge().GetValue())
	require.Equal(t, 200, e.do("PUT", "/v1/queues/"+q, adminToken, `{"state":"closed"}`).code)
	assert.Equal(t, map[string]float64{"open": 0, "paused": 0, "scheduled": 0, "closed": 1}, states())
}

// TestWaitShortMetric: with --wait-replicas 1 on a store that has no replica,
// every join's WAIT comes back short, and queue_wait_short_total counts it.
func TestWaitShortMetric(t *testing.T) {
	st := storetest.Start(t)
	q := uniq("waitshort")
	e := newEnv(t, st.Addr, envOpt{waitReplicas: 1}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	short := func() float64 {
		return series(t, e.scrape(), "queue_wait_short_total", nil).GetCounter().GetValue()
	}
	before := short()
	e.join(q, "")
	e.join(q, "")
	assert.GreaterOrEqual(t, short()-before, 2.0, "two joins, each WAIT short of the replica")
}
