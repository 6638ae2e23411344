package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// newReport starts a report for scenario with its parameters, this machine
// and where the load generator and the servers run.
func (e *Env) newReport(scenario string, params any) *Report {
	r := &Report{
		Scenario: scenario,
		Command:  commandLine(),
		Started:  time.Now(),
		Machine:  ThisMachine(),
		Params:   params,
	}
	if e.CPUs.Allowed != "" {
		r.CPUs = e.CPUs.String()
	}
	return r
}

// finish stamps the elapsed time.
func (r *Report) finish() *Report {
	r.Elapsed = Duration(time.Since(r.Started).Round(time.Millisecond))
	return r
}

// commandLine is how this process was started, for the report.
func commandLine() string {
	args := slices.Clone(os.Args)
	if len(args) > 0 {
		if i := strings.LastIndex(args[0], "/"); i >= 0 && !strings.HasSuffix(args[0], ".test") {
			args[0] = "bin/" + args[0][i+1:]
		}
	}
	return strings.Join(args, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// storeMissing lists what the queue needs that the store lacks: sorted sets and
// hashes always, EVAL for the atomic strategy.
func storeMissing(ctx context.Context, t *Target) (missing []string) {
	c := t.Client(1)
	defer c.Close()
	key := "bench:probe:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	defer c.Del(ctx, key+":z", key+":h")
	if err := c.ZAdd(ctx, key+":z", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		missing = append(missing, "sorted sets")
	}
	if err := c.HSetNX(ctx, key+":h", "f", "v").Err(); err != nil {
		missing = append(missing, "hashes")
	}
	if err := c.Eval(ctx, "return 1", nil).Err(); err != nil {
		missing = append(missing, "EVAL")
	}
	return missing
}

// needsEval reports whether a strategy runs a script.
func needsEval(strategy string) bool { return strategy == "atomic" }

// lacksEvalOnly reports whether the only thing missing is EVAL.
func lacksEvalOnly(missing []string) bool {
	return len(missing) == 1 && strings.HasPrefix(missing[0], "EVAL")
}

// percentiles formats p50 / p95 / p99 of v (ms).
func percentiles(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%s / %s / %s", ms(quantile(v, 0.50)), ms(quantile(v, 0.95)), ms(quantile(v, 0.99)))
}

func ms(f float64) string {
	if f >= 100 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

// Latency is the p50 / p95 / p99 of one kind of request, in milliseconds.
type Latency struct {
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	N   int     `json:"n"`
}

func latencyOf(v []float64) Latency {
	return Latency{P50: quantile(v, 0.5), P95: quantile(v, 0.95), P99: quantile(v, 0.99), N: len(v)}
}
