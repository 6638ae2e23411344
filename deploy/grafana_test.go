package deploy_test

// The Grafana dashboard (grafana/waitroom.json) against the metrics that
// exist. Needs nothing but the binaries TestMain builds: the store is MyRedis
// in process (queue/storetest), the queue instance the real cmd/queue.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"waitroom/queue/storetest"
)

// metricSet is every metric name a query may use, with its labels when
// known (nil: not known, as for redis_exporter's).
type metricSet map[string]map[string]bool

// liveQueueMetrics runs a queue instance, joins two users and waits until
// the first is admitted, then reads /metrics: every series name there (a
// histogram's _bucket, _sum and _count) with its labels.
func liveQueueMetrics(t *testing.T) metricSet {
	t.Helper()
	st := storetest.Start(t)
	port, err := storetest.FreePort()
	require.NoError(t, err)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	cmd := exec.Command(filepath.Join(binaries(t), "queue"), "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--redis-url", st.URL(), "--queue", "demo", "--slot", "1", "--period", "50ms")
	cmd.Env = append(os.Environ(), "QUEUE_SECRET=grafana-test-secret-grafana-test-secret")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	client := &http.Client{Timeout: 10 * time.Second}
	call := func(method, path, token string) (int, map[string]any, string) {
		req, err := http.NewRequest(method, base+path, strings.NewReader("{}"))
		require.NoError(t, err)
		if method == "POST" {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, ""
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var body map[string]any
		json.Unmarshal(raw, &body)
		return resp.StatusCode, body, string(raw)
	}
	poll(t, "the instance ready", func() bool { code, _, _ := call("GET", "/readyz", ""); return code == 200 }, &log)
	var tickets []string
	for range 2 {
		code, body, raw := call("POST", "/v1/queues/demo/join", "")
		require.Equal(t, 200, code, raw)
		tickets = append(tickets, body["ticket"].(string))
	}
	poll(t, "the first user admitted", func() bool {
		_, body, _ := call("GET", "/v1/queues/demo/status", tickets[0])
		return body["state"] == "admitted"
	}, &log)

	_, _, raw := call("GET", "/metrics", "")
	tp := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := tp.TextToMetricFamilies(strings.NewReader(raw))
	require.NoError(t, err)
	out := metricSet{}
	for name, f := range fams {
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			out[name+"_bucket"] = withLabel(labels, "le")
			out[name+"_sum"], out[name+"_count"] = labels, labels
		case dto.MetricType_SUMMARY:
			out[name] = withLabel(labels, "quantile")
			out[name+"_sum"], out[name+"_count"] = labels, labels
		default:
			out[name] = labels
		}
	}
	return out
}

func withLabel(labels map[string]bool, name string) map[string]bool {
	c := map[string]bool{name: true}
	for k := range labels {
		c[k] = true
	}
	return c
}

func poll(t *testing.T, what string, cond func() bool, log fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; log:\n%s", what, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exporterMetrics reads grafana/redis_exporter_metrics.txt (names derived
// from redis_exporter's source; its header says from where).
func exporterMetrics(t *testing.T) metricSet {
	f, err := os.Open("grafana/redis_exporter_metrics.txt")
	require.NoError(t, err)
	defer f.Close()
	out := metricSet{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = nil
		}
	}
	require.NoError(t, sc.Err())
	require.Contains(t, out, "redis_up")
	return out
}

// dashboard is the part of Grafana's dashboard model the test reads.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"` // a string, or {"query": "..."}
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int     `json:"id"`
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // a row's
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	GridPos *struct{ X, Y, W, H int } `json:"gridPos"`
}

var grafanaVar = regexp.MustCompile(`\$\{?(\w+)\}?`)

// checker checks PromQL queries against the metrics that exist.
type checker struct {
	known metricSet
	vars  map[string]bool // the dashboard's template variables
}

// expand replaces Grafana's variables with values PromQL accepts.
func (c checker) expand(q string) (string, error) {
	var bad error
	out := grafanaVar.ReplaceAllStringFunc(q, func(m string) string {
		name := grafanaVar.FindStringSubmatch(m)[1]
		switch {
		case name == "__rate_interval" || name == "__interval" || name == "__range":
			return "1m"
		case c.vars[name]:
			return "x"
		}
		bad = fmt.Errorf("unknown variable $%s", name)
		return m
	})
	return out, bad
}

// check parses query and returns the metric names it uses, or an error
// naming what does not exist.
func (c checker) check(query string) ([]string, error) {
	q, err := c.expand(query)
	if err != nil {
		return nil, err
	}
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(q)
	if err != nil {
		return nil, err
	}
	var names []string
	var errs []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			labels, ok := c.known[n.Name]
			if !ok {
				errs = append(errs, fmt.Sprintf("no metric %q", n.Name))
				return nil
			}
			names = append(names, n.Name)
			for _, m := range n.LabelMatchers {
				if m.Name != model.MetricNameLabel && !c.hasLabel(labels, m.Name) {
					errs = append(errs, fmt.Sprintf("%s has no label %q", n.Name, m.Name))
				}
			}
		case *parser.AggregateExpr:
			errs = append(errs, c.checkGrouping(n)...)
		}
		return nil
	})
	if len(errs) > 0 {
		return names, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return names, nil
}

// hasLabel: labels nil means unknown (any label passes); instance and job
// come from the scrape.
func (c checker) hasLabel(labels map[string]bool, name string) bool {
	return labels == nil || labels[name] || name == "instance" || name == "job"
}

// checkGrouping checks that the labels of by (...) are on a metric below.
func (c checker) checkGrouping(a *parser.AggregateExpr) []string {
	if a.Without {
		return nil
	}
	var sels []*parser.VectorSelector
	parser.Inspect(a.Expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			sels = append(sels, vs)
		}
		return nil
	})
	var errs []string
	for _, l := range a.Grouping {
		if !slices.ContainsFunc(sels, func(vs *parser.VectorSelector) bool { return c.hasLabel(c.known[vs.Name], l) }) {
			errs = append(errs, fmt.Sprintf("by (%s): no metric below has it", l))
		}
	}
	return errs
}

var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

// checkVariable checks a variable's label_values(selector, label) query.
func (c checker) checkVariable(q string) ([]string, error) {
	m := labelValues.FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return nil, fmt.Errorf("not label_values(selector, label): %q", q)
	}
	names, err := c.check(m[1])
	if err != nil {
		return names, err
	}
	for _, n := range names {
		if !c.hasLabel(c.known[n], m[2]) {
			return names, fmt.Errorf("%s has no label %q", n, m[2])
		}
	}
	return names, nil
}

func readDashboard(t *testing.T) dashboard {
	raw, err := os.ReadFile("grafana/waitroom.json")
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	return d
}

// TestGrafanaDashboard: grafana/waitroom.json is a dashboard whose every
// query is PromQL that names only metrics (and labels) that exist: the
// queue_* and Go/process metrics of a running queue instance, and
// redis_exporter's. It shows the wait histogram, the queue states and the
// store's health.
func TestGrafanaDashboard(t *testing.T) {
	d := readDashboard(t)
	require.NotEmpty(t, d.Title)
	require.NotEmpty(t, d.UID)

	known := liveQueueMetrics(t)
	for _, n := range []string{"queue_wait_seconds_bucket", "queue_state", "queue_waiting_tickets", "go_goroutines"} {
		require.Contains(t, known, n, "the live instance exports it")
	}
	for n, l := range exporterMetrics(t) {
		require.NotContains(t, known, n, "a name of both the queue and the exporter")
		known[n] = l
	}
	c := checker{known: known, vars: map[string]bool{}}
	for _, v := range d.Templating.List {
		c.vars[v.Name] = true
	}

	// The checker can fail: a missing metric, label or variable is caught.
	for _, bad := range []string{`queue_nope_total`, `rate(queue_joins_total{nope="x"}[5m])`,
		`sum by (nope) (queue_waiting_tickets)`, `queue_waiting_tickets{queue=~"$nope"}`, `sum(`} {
		_, err := c.check(bad)
		require.Error(t, err, bad)
	}

	used := map[string]bool{}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		names, err := c.checkVariable(q)
		require.NoError(t, err, "variable %s", v.Name)
		for _, n := range names {
			used[n] = true
		}
	}
	ids := map[int]bool{}
	queries := 0
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			require.False(t, ids[p.ID], "panel id %d twice", p.ID)
			ids[p.ID] = true
			require.NotNil(t, p.GridPos, "panel %q has no gridPos", p.Title)
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				require.False(t, refs[tg.RefID], "panel %q: refId %s twice", p.Title, tg.RefID)
				refs[tg.RefID] = true
				names, err := c.check(tg.Expr)
				require.NoError(t, err, "panel %q, query %s: %s", p.Title, tg.RefID, tg.Expr)
				require.NotEmpty(t, names, "panel %q, query %s names no metric", p.Title, tg.RefID)
				for _, n := range names {
					used[n] = true
				}
				queries++
			}
		}
	}
	walk(d.Panels)
	t.Logf("%d panels, %d queries, %d metrics", len(ids), queries, len(used))
	for _, n := range []string{"queue_wait_seconds_bucket", "queue_state", "queue_waiting_tickets", "queue_active_sessions",
		"queue_joins_total", "queue_admissions_total", "redis_up", "redis_connected_clients", "redis_memory_used_bytes",
		"redis_commands_processed_total"} {
		require.True(t, used[n], "the dashboard shows %s", n)
	}
}
