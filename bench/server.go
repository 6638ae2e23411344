package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ServerParams configure `bench server`.
type ServerParams struct {
	Clients  int      `json:"clients"`  // concurrent go-redis clients, one connection each
	Requests int      `json:"requests"` // commands per run (split over the clients)
	Runs     int      `json:"runs"`     // runs per command and server, servers alternating
	Pipeline int      `json:"pipeline"` // commands per round trip
	Commands []string `json:"commands"`
	// RedisURLs, when given: the first is measured against the second.
	RedisURLs []string `json:"redis_urls,omitempty"`
}

// DefaultServerParams: 50 clients, 100,000 requests per run, 3 runs, no pipelining.
func DefaultServerParams() ServerParams {
	return ServerParams{Clients: 50, Requests: 100000, Runs: 3, Pipeline: 1, Commands: slices.Clone(ServerCommands)}
}

// ServerCommands are the commands the queue sends, in the bench's names.
var ServerCommands = []string{"ZADD", "ZRANK", "ZPOPMIN", "ZCARD", "ZREMRANGEBYSCORE", "SETNXPX", "GETDEL", "EVALSHA"}

// serverOp is one measured command: prepare fills the store for n requests,
// then do sends request i of client c.
type serverOp struct {
	about   string
	prepare func(ctx context.Context, c *redis.Client, n, clients int) error
	do      func(ctx context.Context, p redis.Cmdable, client, i int)
}

// benchScript is the EVALSHA payload: a short read-and-write script in the style
// of the queue's admission round (count, pop one if there is room, put it back).
const benchScript = `local n = redis.call('ZCARD', KEYS[1])
if n < tonumber(ARGV[1]) then
  local p = redis.call('ZPOPMIN', KEYS[2])
  if p[1] then redis.call('ZADD', KEYS[2], p[2], p[1]) end
end
return n`

var benchScriptSHA = redis.NewScript(benchScript).Hash()

const sortedSetSize = 10000

func fillSortedSet(ctx context.Context, c *redis.Client, key string, n int) error {
	if err := c.Del(ctx, key).Err(); err != nil {
		return err
	}
	for lo := 0; lo < n; lo += 1000 {
		zs := make([]redis.Z, 0, 1000)
		for i := lo; i < min(lo+1000, n); i++ {
			zs = append(zs, redis.Z{Score: float64(i), Member: "m" + strconv.Itoa(i)})
		}
		if err := c.ZAdd(ctx, key, zs...).Err(); err != nil {
			return err
		}
	}
	return nil
}

var serverOps = map[string]serverOp{
	"ZADD": {
		about: "ZADD waiting <arrival> <ticket>: a new member each time",
		prepare: func(ctx context.Context, c *redis.Client, _, _ int) error {
			return c.Del(ctx, "bench:zadd").Err()
		},
		do: func(ctx context.Context, p redis.Cmdable, client, i int) {
			p.ZAdd(ctx, "bench:zadd", redis.Z{Score: float64(i), Member: strconv.Itoa(client) + ":" + strconv.Itoa(i)})
		},
	},
	"ZRANK": {
		about: "ZRANK on a 10,000-member set",
		prepare: func(ctx context.Context, c *redis.Client, _, _ int) error {
			return fillSortedSet(ctx, c, "bench:z", sortedSetSize)
		},
		do: func(ctx context.Context, p redis.Cmdable, client, i int) {
			p.ZRank(ctx, "bench:z", "m"+strconv.Itoa((i*7919+client)%sortedSetSize))
		},
	},
	"ZPOPMIN": {
		about: "ZPOPMIN from a set prefilled with one member per request",
		prepare: func(ctx context.Context, c *redis.Client, n, _ int) error {
			return fillSortedSet(ctx, c, "bench:zpop", n)
		},
		do: func(ctx context.Context, p redis.Cmdable, _, _ int) { p.ZPopMin(ctx, "bench:zpop") },
	},
	"ZCARD": {
		about: "ZCARD of a 10,000-member set",
		prepare: func(ctx context.Context, c *redis.Client, _, _ int) error {
			return fillSortedSet(ctx, c, "bench:z", sortedSetSize)
		},
		do: func(ctx context.Context, p redis.Cmdable, _, _ int) { p.ZCard(ctx, "bench:z") },
	},
	"ZREMRANGEBYSCORE": {
		about: "ZREMRANGEBYSCORE -inf <now> on a 10,000-member set with nothing expired (the reclaim's common case)",
		prepare: func(ctx context.Context, c *redis.Client, _, _ int) error {
			return fillSortedSet(ctx, c, "bench:z", sortedSetSize)
		},
		do: func(ctx context.Context, p redis.Cmdable, _, _ int) {
			p.ZRemRangeByScore(ctx, "bench:z", "-inf", "(0")
		},
	},
	"SETNXPX": {
		about: "SET leader <id> NX PX 200 on one key per client (mostly refused, as the leader lease)",
		do: func(ctx context.Context, p redis.Cmdable, client, i int) {
			p.SetArgs(ctx, "bench:lease:"+strconv.Itoa(client), i, redis.SetArgs{Mode: "NX", TTL: 200 * time.Millisecond})
		},
	},
	"GETDEL": {
		about: "GETDEL of a pass that exists (prefilled, one per request)",
		prepare: func(ctx context.Context, c *redis.Client, n, clients int) error {
			per := (n + clients - 1) / clients
			for cl := range clients {
				for lo := 0; lo < per; lo += 500 {
					var kv []any
					for i := lo; i < min(lo+500, per); i++ {
						kv = append(kv, passKey(cl, i), "1")
					}
					if err := c.MSet(ctx, kv...).Err(); err != nil {
						return err
					}
				}
			}
			return nil
		},
		do: func(ctx context.Context, p redis.Cmdable, client, i int) { p.GetDel(ctx, passKey(client, i)) },
	},
	"EVALSHA": {
		about: "EVALSHA of a ZCARD + ZPOPMIN + ZADD script (the shape of an admission round)",
		prepare: func(ctx context.Context, c *redis.Client, _, _ int) error {
			if err := fillSortedSet(ctx, c, "bench:z", sortedSetSize); err != nil {
				return err
			}
			if err := fillSortedSet(ctx, c, "bench:zq", 1000); err != nil {
				return err
			}
			return c.ScriptLoad(ctx, benchScript).Err()
		},
		do: func(ctx context.Context, p redis.Cmdable, _, _ int) {
			p.EvalSha(ctx, benchScriptSHA, []string{"bench:z", "bench:zq"}, sortedSetSize+1)
		},
	},
}

func passKey(client, i int) string {
	return "bench:pass:" + strconv.Itoa(client) + ":" + strconv.Itoa(i)
}

// ServerRun is one timed run of one command on one server.
type ServerRun struct {
	OpsPerSec float64 `json:"ops_per_sec"`
	Errors    int     `json:"errors"`
}

// ServerCell is one command on one server over all runs.
type ServerCell struct {
	Command   string      `json:"command"`
	Target    string      `json:"target"`
	Runs      []ServerRun `json:"runs"`
	OpsPerSec float64     `json:"ops_per_sec"` // all requests / all time
	P50us     float64     `json:"p50_us"`
	P99us     float64     `json:"p99_us"`
	Errors    int         `json:"errors"`
	Requests  int         `json:"requests"`
	FirstErr  string      `json:"first_error,omitempty"`
	latencies []float64   // µs, for the chart
}

// Unsupported reports whether every request failed (the server lacks the command).
func (c *ServerCell) Unsupported() bool { return c.Requests > 0 && c.Errors >= c.Requests }

// ServerResults is results.json's "results" for `bench server`.
type ServerResults struct {
	Cells  []ServerCell       `json:"cells"`
	Ratios map[string]float64 `json:"ratios"` // command -> ops/s of the first server / the second
}

// Server measures each command on MyRedis and real Redis in alternating runs.
func (e *Env) Server(ctx context.Context, p ServerParams) (*Report, error) {
	for _, name := range p.Commands {
		if _, ok := serverOps[name]; !ok {
			return nil, fmt.Errorf("server: unknown command %q (known: %v)", name, ServerCommands)
		}
	}
	if p.Clients < 1 || p.Requests < p.Clients || p.Runs < 1 || p.Pipeline < 1 {
		return nil, errors.New("server: need clients >= 1, requests >= clients, runs >= 1, pipeline >= 1")
	}
	r := e.newReport("server", p)
	var targets []*Target
	var err error
	if len(p.RedisURLs) > 0 {
		targets, err = e.DefaultTargets(ctx, p.RedisURLs, 0)
	} else {
		targets, err = e.DefaultTargets(ctx, nil, 1)
	}
	if err != nil {
		return nil, err
	}
	defer closeAll(targets)
	for _, t := range targets {
		r.Machine.Servers[t.Name] = t.Version
	}
	cells := map[[2]string]*ServerCell{}
	bar := e.bar(len(p.Commands)*p.Runs*len(targets), "server")
	defer bar.Finish()
	for _, name := range p.Commands {
		op := serverOps[name]
		for run := range p.Runs {
			order := slices.Clone(targets)
			if run%2 == 1 {
				slices.Reverse(order) // alternate who goes first
			}
			for _, t := range order {
				key := [2]string{name, t.Name}
				cell := cells[key]
				if cell == nil {
					cell = &ServerCell{Command: name, Target: t.Name}
					cells[key] = cell
				}
				if err := e.serverRun(ctx, t, op, p, cell); err != nil {
					return nil, err
				}
				bar.Add(1)
			}
		}
	}
	res := ServerResults{Ratios: map[string]float64{}}
	for _, name := range p.Commands {
		for _, t := range targets {
			c := cells[[2]string{name, t.Name}]
			c.finish()
			res.Cells = append(res.Cells, *c)
		}
		if len(targets) >= 2 {
			a, b := cells[[2]string{name, targets[0].Name}], cells[[2]string{name, targets[1].Name}]
			if a.Errors == 0 && b.Errors == 0 && b.OpsPerSec > 0 {
				res.Ratios[name] = a.OpsPerSec / b.OpsPerSec
			}
		}
	}
	r.Results = res
	serverTables(r, &res, targets, p, cells)
	return r.finish(), nil
}

// serverRun runs one command once on one server: p.Requests requests split over
// p.Clients connections, each timing its own round trips.
func (e *Env) serverRun(ctx context.Context, t *Target, op serverOp, p ServerParams, cell *ServerCell) error {
	admin := t.Client(1)
	defer admin.Close()
	per := p.Requests / p.Clients
	cell.Requests += per * p.Clients
	if op.prepare != nil {
		if err := op.prepare(ctx, admin, p.Requests, p.Clients); err != nil {
			cell.Runs = append(cell.Runs, ServerRun{Errors: per * p.Clients})
			cell.noteErr(per*p.Clients, err)
			return ctx.Err() // a command the server lacks: recorded, not fatal
		}
	}
	clients := make([]*redis.Client, p.Clients)
	for i := range clients {
		clients[i] = t.Client(1)
		defer clients[i].Close()
		if err := clients[i].Ping(ctx).Err(); err != nil {
			return err
		}
	}
	lat := make([][]float64, p.Clients)
	errs := make([]int, p.Clients)
	firstErr := make([]error, p.Clients)
	var wg sync.WaitGroup
	start := time.Now()
	for ci, c := range clients {
		wg.Go(func() {
			l := make([]float64, 0, per/p.Pipeline+1)
			for i := 0; i < per; i += p.Pipeline {
				t0 := time.Now()
				var cmds []redis.Cmder
				var err error
				if p.Pipeline == 1 {
					cmds, err = c.Pipelined(ctx, func(pp redis.Pipeliner) error { op.do(ctx, pp, ci, i); return nil })
				} else {
					cmds, err = c.Pipelined(ctx, func(pp redis.Pipeliner) error {
						for j := i; j < min(i+p.Pipeline, per); j++ {
							op.do(ctx, pp, ci, j)
						}
						return nil
					})
				}
				l = append(l, float64(time.Since(t0).Nanoseconds())/1e3)
				if err != nil && !errors.Is(err, redis.Nil) {
					for _, cmd := range cmds {
						if cerr := cmd.Err(); cerr != nil && !errors.Is(cerr, redis.Nil) {
							errs[ci]++
							if firstErr[ci] == nil {
								firstErr[ci] = cerr
							}
						}
					}
				}
			}
			lat[ci] = l
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	run := ServerRun{OpsPerSec: float64(per*p.Clients) / elapsed.Seconds()}
	for ci := range clients {
		run.Errors += errs[ci]
		cell.noteErr(0, firstErr[ci])
		cell.latencies = append(cell.latencies, lat[ci]...)
	}
	cell.Errors += run.Errors
	cell.Runs = append(cell.Runs, run)
	return ctx.Err()
}

func (c *ServerCell) noteErr(n int, err error) {
	c.Errors += n
	if err != nil && c.FirstErr == "" {
		c.FirstErr = err.Error()
		if len(c.FirstErr) > 80 {
			c.FirstErr = c.FirstErr[:80] + "..."
		}
	}
}

func (c *ServerCell) finish() {
	var sum float64
	for _, r := range c.Runs {
		if r.OpsPerSec > 0 {
			sum += 1 / r.OpsPerSec // equal requests per run: total time / total requests
		}
	}
	if sum > 0 {
		c.OpsPerSec = float64(len(c.Runs)) / sum
	}
	if c.Unsupported() {
		c.OpsPerSec, c.latencies = 0, nil
		return
	}
	c.P50us = quantile(c.latencies, 0.50)
	c.P99us = quantile(c.latencies, 0.99)
}

// quantile returns the q-quantile of v (sorting v), 0 when empty.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	if !slices.IsSorted(v) {
		slices.Sort(v)
	}
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)]
}

func serverTables(r *Report, res *ServerResults, targets []*Target, p ServerParams, cells map[[2]string]*ServerCell) {
	header := []string{"command"}
	for _, t := range targets {
		header = append(header, t.Name+" ops/s", t.Name+" p50 µs", t.Name+" p99 µs")
	}
	if len(targets) >= 2 {
		header = append(header, targets[0].Name+"/"+targets[1].Name)
	}
	tb := Table{
		Title:  fmt.Sprintf("go-redis, %d clients, %d requests per run, %d runs alternating, pipeline %d", p.Clients, p.Requests, p.Runs, p.Pipeline),
		Header: header,
	}
	var labels []string
	series := make([]Series, len(targets))
	var cdf []Series
	for i, t := range targets {
		series[i].Name = t.Name
	}
	for ci, name := range p.Commands {
		row := []any{name}
		for i, t := range targets {
			c := cells[[2]string{name, t.Name}]
			if c.Unsupported() {
				row = append(row, "unsupported", "-", "-")
			} else {
				row = append(row, fmt.Sprintf("%.0f", c.OpsPerSec), fmt.Sprintf("%.0f", c.P50us), fmt.Sprintf("%.0f", c.P99us))
			}
			switch {
			case c.Unsupported():
				r.Notes = append(r.Notes, fmt.Sprintf("%s on %s: unsupported (%s)", name, t.Name, c.FirstErr))
			case c.Errors > 0:
				r.Notes = append(r.Notes, fmt.Sprintf("%s on %s: %d of %d requests failed, first: %s", name, t.Name, c.Errors, c.Requests, c.FirstErr))
			}
			series[i].Y = append(series[i].Y, c.OpsPerSec)
			if len(c.latencies) > 0 {
				cdf = append(cdf, Series{Name: name + " " + t.Name, Y: c.latencies, Color: ci, Dash: i})
			}
		}
		if len(targets) >= 2 {
			if ratio, ok := res.Ratios[name]; ok {
				row = append(row, fmt.Sprintf("%.2f", ratio))
			} else {
				row = append(row, "-")
			}
		}
		tb.AddRow(row...)
		labels = append(labels, name)
	}
	r.Tables = append(r.Tables, tb)
	for _, name := range p.Commands {
		r.Notes = append(r.Notes, name+": "+serverOps[name].about+".")
	}
	if len(targets) < 2 {
		r.Notes = append(r.Notes, "only one server measured: no ratio (redis-server not found).")
	}
	r.Charts = append(r.Charts,
		barChart("server-throughput.png", "Requests per second by command", "requests/s", labels, series),
		cdfChart("server-latency.png", "Round-trip latency by command (solid: first server, dashed: second)", "µs", cdf))
}
