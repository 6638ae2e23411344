// Command bench reproduces the design notes' experiments and measures them.
//
//	bench race      [flags]  SET NX leader race and optimistic admission, MyRedis --workers 1 / N / real Redis
//	bench overshoot [flags]  admission overshoot by strategy x instance count, through the HTTP API
//	bench period    [flags]  admit period against throughput and backlog
//	bench eta       [flags]  ETA shown at join against the wait that followed
//	bench server    [flags]  MyRedis against redis-server on the queue's command mix
//	bench sale      [flags]  the notes' ticket sale: overshoot by strategy, stepped load, --workers breakage
//	bench all       [flags]  every scenario, --out DIR/<scenario>
//
// Each starts what it needs on free loopback ports (bin/myredis, bin/queue,
// redis-server) unless given --redis-url / --queue-urls. Tables go to stdout,
// progress to stderr; --out DIR also writes results.json, report.md and charts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"waitroom/bench"
)

func usage() {
	fmt.Fprint(os.Stderr, `usage: bench <scenario> [flags]

scenarios:
  race       SET NX leader race and optimistic admission on MyRedis --workers 1, --workers N and real Redis
  overshoot  admission overshoot by strategy and instance count, through real queue processes
  period     admit period against admitted/s and backlog
  eta        accuracy of the ETA shown at join
  server     MyRedis against redis-server on the queue's command mix (go-redis, alternating runs)
  sale       a ticket sale: a backlog at the opening, waves of sessions, then stepped load; the notes' reproduction
  pages      open pages' store load and release->page latency, events poll against push (issue 17)
  all        every scenario in turn (with --out DIR, one sub-directory each)

run 'bench <scenario> -h' for its flags
`)
}

// common are the flags every scenario takes.
type common struct {
	out, bin, redisServer string
	redisURLs, queueURLs  string
	short, quiet          bool
	pin                   string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.out, "out", "", "write results.json, report.md and PNG charts to this directory")
	fs.StringVar(&c.bin, "bin", "bin", "directory with the myredis and queue binaries (built with go build when missing)")
	fs.StringVar(&c.redisServer, "redis-server", bench.DefaultRedisServer, "real redis-server to compare with (\"\" to skip)")
	fs.StringVar(&c.redisURLs, "redis-url", "", "use these stores (comma-separated redis:// URLs) instead of starting servers")
	fs.StringVar(&c.queueURLs, "queue-urls", "", "use these queue instances (comma-separated http:// URLs) instead of starting them")
	fs.BoolVar(&c.short, "short", false, "a short run (what make bench uses)")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bars")
	fs.StringVar(&c.pin, "pin", "auto", "CPU pinning with taskset: auto (load generator and servers on separate CPUs when there are two or more), on, off")
}

// env builds the scenario's environment and applies the CPU plan of --pin.
func (c *common) env() (*bench.Env, error) {
	e := &bench.Env{BinDir: c.bin, RedisServer: c.redisServer, Log: os.Stderr}
	if !c.quiet {
		e.Progress = os.Stderr
	}
	if c.out != "" {
		e.LogDir = filepath.Join(c.out, "logs")
	}
	plan, err := bench.PlanCPUs(c.pin)
	if err != nil {
		return nil, err
	}
	if err := e.ApplyCPUs(plan); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "bench: %s\n", plan)
	return e, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// scenario parses its flags and runs.
type scenario func(ctx context.Context, args []string, out io.Writer) error

var scenarios = map[string]scenario{
	"race":      runRace,
	"overshoot": runOvershoot,
	"period":    runPeriod,
	"eta":       runEta,
	"server":    runServer,
	"sale":      runSale,
	"pages":     runPages,
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	name, args := os.Args[1], os.Args[2:]
	var err error
	if name == "all" {
		err = runAll(ctx, args)
	} else if run, ok := scenarios[name]; ok {
		err = run(ctx, args, os.Stdout)
	} else {
		fmt.Fprintf(os.Stderr, "bench: unknown scenario %q\n\n", name)
		usage()
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// runAll runs every scenario with the same common flags, each into its own
// sub-directory of --out.
func runAll(ctx context.Context, args []string) error {
	var c common
	fs := flag.NewFlagSet("all", flag.ContinueOnError)
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	start := time.Now()
	var failed []string
	for _, name := range []string{"race", "sale", "overshoot", "period", "eta", "server", "pages"} {
		if err := scenarios[name](ctx, passCommon(c, name), os.Stdout); err != nil {
			if ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "bench all: %s: %v\n", name, err)
			failed = append(failed, name)
		}
		fmt.Println()
	}
	fmt.Fprintf(os.Stderr, "bench all: done in %s\n", time.Since(start).Round(time.Second))
	if len(failed) > 0 {
		return fmt.Errorf("failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

func passCommon(c common, name string) []string {
	var a []string
	if c.out != "" {
		a = append(a, "--out", filepath.Join(c.out, name))
	}
	a = append(a, "--bin", c.bin, "--redis-server", c.redisServer)
	if c.redisURLs != "" {
		a = append(a, "--redis-url", c.redisURLs)
	}
	if c.queueURLs != "" {
		a = append(a, "--queue-urls", c.queueURLs)
	}
	if c.short {
		a = append(a, "--short")
	}
	if c.quiet {
		a = append(a, "--quiet")
	}
	return append(a, "--pin", c.pin)
}

// emit prints the report and writes it to --out.
func emit(r *bench.Report, c common, out io.Writer) error {
	r.PrintTables(out)
	if c.out == "" {
		return nil
	}
	if err := r.Write(c.out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s\n", filepath.Join(c.out, "report.md"))
	return nil
}

func runRace(ctx context.Context, args []string, out io.Writer) error {
	var c common
	p := bench.DefaultRaceParams()
	fs := flag.NewFlagSet("race", flag.ContinueOnError)
	c.register(fs)
	fs.IntVar(&p.Contenders, "contenders", p.Contenders, "clients racing SET NX each round")
	fs.IntVar(&p.Rounds, "rounds", p.Rounds, "rounds per server")
	fs.IntVar(&p.Workers, "workers", p.Workers, "executor workers of the broken MyRedis")
	fs.DurationVar(&p.LeaseTTL, "lease", p.LeaseTTL, "PX of the leader key")
	fs.IntVar(&p.Instances, "instances", p.Instances, "queue instances running optimistic (0 to skip)")
	fs.IntVar(&p.Slot, "slot", p.Slot, "slot of the optimistic run")
	fs.IntVar(&p.Users, "users", p.Users, "users pushed through the optimistic run per server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.short && !flagSet(fs, "rounds") {
		p.Rounds = 5000
	}
	if c.short && !flagSet(fs, "users") {
		p.Users = 1500
	}
	p.RedisURLs = splitList(c.redisURLs)
	e, err := c.env()
	if err != nil {
		return err
	}
	r, err := e.Race(ctx, p)
	if err != nil {
		return err
	}
	return emit(r, c, out)
}

func runServer(ctx context.Context, args []string, out io.Writer) error {
	var c common
	p := bench.DefaultServerParams()
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	c.register(fs)
	fs.IntVar(&p.Clients, "clients", p.Clients, "concurrent go-redis clients")
	fs.IntVar(&p.Requests, "requests", p.Requests, "requests per run of one command (split over the clients)")
	fs.IntVar(&p.Runs, "runs", p.Runs, "runs per command and server, alternating servers")
	fs.IntVar(&p.Pipeline, "pipeline", p.Pipeline, "commands per round trip (1 = no pipelining)")
	commands := fs.String("commands", strings.Join(p.Commands, ","), "commands to measure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.short && !flagSet(fs, "requests") {
		p.Requests = 5000
	}
	if c.short && !flagSet(fs, "runs") {
		p.Runs = 2
	}
	p.Commands = splitList(*commands)
	p.RedisURLs = splitList(c.redisURLs)
	compare := c.pin == "compare" // pinned, then unpinned, side by side
	if compare {
		c.pin = "on"
	}
	e, err := c.env()
	if err != nil {
		return err
	}
	var r *bench.Report
	if compare {
		r, err = e.ServerPinning(ctx, p, e.CPUs)
	} else {
		r, err = e.Server(ctx, p)
	}
	if err != nil {
		return err
	}
	return emit(r, c, out)
}

func runSale(ctx context.Context, args []string, out io.Writer) error {
	var c common
	p := bench.DefaultSaleParams()
	fs := flag.NewFlagSet("sale", flag.ContinueOnError)
	c.register(fs)
	roomFlags(fs, &p.RoomParams)
	strategies := fs.String("strategies", strings.Join(p.Strategies, ","), "strategies to measure")
	instances := fs.String("instances", joinInts(p.Instances), "instance counts to measure")
	stages := fs.String("stages", bench.FormatStages(p.Stages), "arrival stages after the backlog, rate/s:duration, comma-separated")
	fs.IntVar(&p.Slot, "slot", p.Slot, "slot (cap of admitted users)")
	fs.IntVar(&p.Users, "users", p.Users, "users waiting when the sale opens")
	fs.DurationVar(&p.Session, "session", p.Session, "how long every admitted user stays (they release at its end)")
	fs.Float64Var(&p.Abandon, "abandon", p.Abandon, "share of admitted users who never release (reclaimed at the session's end)")
	fs.DurationVar(&p.Period, "period", p.Period, "admission period of the instances")
	fs.DurationVar(&p.PollCap, "poll-cap", p.PollCap, "users poll at least this often")
	fs.DurationVar(&p.Drain, "drain", p.Drain, "how long to wait for the backlog, and for the stages' users, to be done")
	fs.IntVar(&p.BreakWorkers, "workers", p.BreakWorkers, "executor workers of the broken MyRedis (0 skips the --workers runs)")
	fs.IntVar(&p.BreakInstances, "workers-instances", p.BreakInstances, "instances in the --workers runs")
	fs.BoolVar(&p.BreakRedis, "workers-redis", p.BreakRedis, "run the leader on redis-server too in the --workers runs")
	breakStrategies := fs.String("workers-strategies", strings.Join(p.BreakStrategies, ","), "strategies of the --workers runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.short {
		s := bench.ShortSaleParams()
		for name, apply := range map[string]func(){
			"users": func() { p.Users = s.Users }, "session": func() { p.Session = s.Session },
			"instances":     func() { p.Instances = s.Instances; *instances = joinInts(s.Instances) },
			"stages":        func() { p.Stages = s.Stages; *stages = bench.FormatStages(s.Stages) },
			"drain":         func() { p.Drain = s.Drain },
			"poll-cap":      func() { p.PollCap = s.PollCap },
			"workers-redis": func() { p.BreakRedis = s.BreakRedis },
		} {
			if !flagSet(fs, name) {
				apply()
			}
		}
	}
	var err error
	if p.Stages, err = bench.ParseStages(*stages); err != nil {
		return err
	}
	if p.Instances, err = parseInts(*instances); err != nil {
		return err
	}
	p.Strategies, p.BreakStrategies = splitList(*strategies), splitList(*breakStrategies)
	c.room(&p.RoomParams)
	e, err := c.env()
	if err != nil {
		return err
	}
	r, err := e.Sale(ctx, p)
	if err != nil {
		return err
	}
	return emit(r, c, out)
}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// roomFlags registers the flags of the scenarios that drive queue instances.
func roomFlags(fs *flag.FlagSet, p *bench.RoomParams) {
	fs.StringVar(&p.Store, "store", p.Store, "store the bench starts: myredis, redis, or auto (MyRedis if it has what the queue needs)")
	fs.StringVar(&p.Queue, "queue", p.Queue, "queue name on the instances given by --queue-urls")
}

func (c *common) room(p *bench.RoomParams) {
	urls := splitList(c.redisURLs)
	if len(urls) > 0 {
		p.RedisURL = urls[0]
	}
	p.QueueURLs = splitList(c.queueURLs)
}

func runOvershoot(ctx context.Context, args []string, out io.Writer) error {
	var c common
	p := bench.DefaultOvershootParams()
	fs := flag.NewFlagSet("overshoot", flag.ContinueOnError)
	c.register(fs)
	roomFlags(fs, &p.RoomParams)
	strategies := fs.String("strategies", strings.Join(p.Strategies, ","), "strategies to measure")
	instances := fs.String("instances", joinInts(p.Instances), "instance counts to measure")
	stages := fs.String("stages", bench.FormatStages(p.Stages), "arrival stages, rate/s:duration, comma-separated")
	fs.IntVar(&p.Slot, "slot", p.Slot, "slot (cap of admitted users)")
	fs.DurationVar(&p.HoldMin, "hold-min", p.HoldMin, "shortest stay of an admitted user")
	fs.DurationVar(&p.HoldMax, "hold-max", p.HoldMax, "longest stay of an admitted user")
	fs.Float64Var(&p.Abandon, "abandon", p.Abandon, "share of admitted users who never release")
	fs.DurationVar(&p.Session, "session", p.Session, "session length (abandoned sessions are reclaimed after it)")
	fs.DurationVar(&p.Period, "period", p.Period, "admission period of the instances")
	fs.DurationVar(&p.Drain, "drain", p.Drain, "how long to wait for the queue to empty after the last arrival")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if p.Stages, err = bench.ParseStages(*stages); err != nil {
		return err
	}
	if c.short && !flagSet(fs, "stages") {
		p.Stages = bench.ShortStages
	}
	if c.short && !flagSet(fs, "drain") {
		p.Drain = 20 * time.Second
	}
	if c.short && !flagSet(fs, "instances") {
		*instances = "3,10" // the sale scenario reproduces the notes; 1 instance is its control
	}
	p.Strategies = splitList(*strategies)
	if p.Instances, err = parseInts(*instances); err != nil {
		return err
	}
	c.room(&p.RoomParams)
	e, err := c.env()
	if err != nil {
		return err
	}
	r, err := e.Overshoot(ctx, p)
	if err != nil {
		return err
	}
	return emit(r, c, out)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func runPeriod(ctx context.Context, args []string, out io.Writer) error {
	var c common
	p := bench.DefaultPeriodParams()
	fs := flag.NewFlagSet("period", flag.ContinueOnError)
	c.register(fs)
	roomFlags(fs, &p.RoomParams)
	fs.IntVar(&p.Slot, "slot", p.Slot, "slot (cap of admitted users)")
	fs.Float64Var(&p.Arrival, "arrival", p.Arrival, "users arriving per second")
	fs.DurationVar(&p.Session, "session", p.Session, "how long every admitted user stays")
	periods := fs.String("periods", joinDurations(p.Periods), "admit periods to measure")
	fs.BoolVar(&p.Event, "event", p.Event, "also measure event-driven admission (release triggers a round)")
	fs.DurationVar(&p.Duration, "for", p.Duration, "how long users arrive in each run")
	fs.StringVar(&p.Strategy, "strategy", p.Strategy, "admission strategy of the instances")
	fs.IntVar(&p.Instances, "instances", p.Instances, "queue instances")
	fs.IntVar(&p.Backlog, "backlog", p.Backlog, "users waiting when each run starts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if p.Periods, err = parseDurations(*periods); err != nil {
		return err
	}
	if c.short && !flagSet(fs, "for") {
		p.Duration = 15 * time.Second
	}
	if c.short && !flagSet(fs, "periods") {
		p.Periods = []time.Duration{2 * time.Second, 500 * time.Millisecond, 200 * time.Millisecond}
	}
	c.room(&p.RoomParams)
	e, err := c.env()
	if err != nil {
		return err
	}
	r, err := e.Period(ctx, p)
	if err != nil {
		return err
	}
	return emit(r, c, out)
}

func runEta(ctx context.Context, args []string, out io.Writer) error {
	var c common
	p := bench.DefaultEtaParams()
	fs := flag.NewFlagSet("eta", flag.ContinueOnError)
	c.register(fs)
	roomFlags(fs, &p.RoomParams)
	fs.IntVar(&p.Slot, "slot", p.Slot, "slot (cap of admitted users)")
	stages := fs.String("stages", bench.FormatStages(p.Stages), "arrival stages, rate/s:duration, comma-separated")
	fs.DurationVar(&p.HoldMin, "hold-min", p.HoldMin, "shortest stay of an admitted user")
	fs.DurationVar(&p.HoldMax, "hold-max", p.HoldMax, "longest stay of an admitted user")
	fs.StringVar(&p.Strategy, "strategy", p.Strategy, "admission strategy of the instances")
	fs.IntVar(&p.Instances, "instances", p.Instances, "queue instances")
	fs.DurationVar(&p.Period, "period", p.Period, "admission period")
	fs.DurationVar(&p.Drain, "drain", p.Drain, "how long to wait for the queue to empty after the last arrival")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if p.Stages, err = bench.ParseStages(*stages); err != nil {
		return err
	}
	if c.short && !flagSet(fs, "stages") {
		p.Stages, _ = bench.ParseStages("10:4s,30:8s")
	}
	c.room(&p.RoomParams)
	e, err := c.env()
	if err != nil {
		return err
	}
	r, err := e.Eta(ctx, p)
	if err != nil {
		return err
	}
	return emit(r, c, out)
}

func joinDurations(v []time.Duration) string {
	s := make([]string, len(v))
	for i, d := range v {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}

func parseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range splitList(s) {
		d, err := time.ParseDuration(f)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("bad duration %q", f)
		}
		out = append(out, d)
	}
	return out, nil
}

func runPages(ctx context.Context, args []string, out io.Writer) error {
	var c common
	p := bench.DefaultPagesParams()
	fs := flag.NewFlagSet("pages", flag.ContinueOnError)
	c.register(fs)
	pages := fs.String("pages", joinInts(p.Pages), "open pages per run, comma-separated")
	modes := fs.String("modes", strings.Join(p.Modes, ","), "events modes of the instances: poll, push")
	fs.IntVar(&p.Instances, "instances", p.Instances, "queue instances")
	fs.DurationVar(&p.Window, "window", p.Window, "how long to release users and count store commands")
	fs.DurationVar(&p.Every, "every", p.Every, "one release per this, once the last admission reached its page")
	fs.DurationVar(&p.TicketTTL, "ticket-ttl", p.TicketTTL, "ticket TTL (push mode holds the open pages' tickets in one call per 1,000 every TTL/3)")
	fs.DurationVar(&p.Period, "period", p.Period, "admission period")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if p.Pages, err = parseInts(*pages); err != nil {
		return err
	}
	p.Modes = splitList(*modes)
	if c.short {
		if !flagSet(fs, "pages") {
			p.Pages = []int{300}
		}
		if !flagSet(fs, "window") {
			p.Window = 5 * time.Second
		}
	}
	p.RedisURLs = splitList(c.redisURLs)
	e, err := c.env()
	if err != nil {
		return err
	}
	r, err := e.Pages(ctx, p)
	if err != nil {
		return err
	}
	return emit(r, c, out)
}
