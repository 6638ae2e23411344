package myredis

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// The latency monitor, as Redis's latency.c: events that took at least
// latency-monitor-threshold milliseconds are recorded per event name, one
// sample per second (the worst), the last 160 of them. The events MyRedis
// records: "command" and "fast-command" (exec), "expire-cycle" (expire.go).
// LATENCY HISTOGRAM reports the per-command histograms of INFO latencystats
// (stats.go). Everything here runs on the executor goroutine.

const latencyTSLen = 160 // LATENCY_TS_LEN

type latencySample struct {
	unix    int64 // 0: empty
	latency int64 // ms
}

// latencySeries is one event's ring of samples.
type latencySeries struct {
	samples [latencyTSLen]latencySample
	idx     int   // where the next sample goes
	max     int64 // all-time high
}

// latencyMonitor holds the series by event, in the order events first occurred.
type latencyMonitor struct {
	series map[string]*latencySeries
	order  []string
}

// add records a sample of ms for event at unix seconds (latencyAddSample).
func (m *latencyMonitor) add(event string, ms, unix int64) {
	ts := m.series[event]
	if ts == nil {
		if m.series == nil {
			m.series = map[string]*latencySeries{}
		}
		ts = &latencySeries{}
		m.series[event] = ts
		m.order = append(m.order, event)
	}
	ts.max = max(ts.max, ms)
	prev := &ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
	if prev.unix == unix { // one sample per second: the worst
		prev.latency = max(prev.latency, ms)
		return
	}
	ts.samples[ts.idx] = latencySample{unix: unix, latency: ms}
	ts.idx = (ts.idx + 1) % latencyTSLen
}

// addIfNeeded is latencyAddSampleIfNeeded: the sample counts when the monitor
// is on and ms reaches its threshold.
func (s *Server) latencyAddIfNeeded(event string, ms int64) {
	if t := s.cfg.Intro.LatencyThreshold; t > 0 && ms >= t {
		s.intro.latency.add(event, ms, s.clock.Now().Unix())
	}
}

// reset drops event's series (any letter case), or every series when event is
// "", returning how many it dropped.
func (m *latencyMonitor) reset(event string) int {
	n := 0
	kept := m.order[:0]
	for _, e := range m.order {
		if event == "" || strings.EqualFold(e, event) {
			delete(m.series, e)
			n++
			continue
		}
		kept = append(kept, e)
	}
	m.order = kept
	return n
}

// inOrder calls fn for each sample of ts, oldest first.
func (ts *latencySeries) inOrder(fn func(latencySample)) {
	for j := range latencyTSLen {
		if smp := ts.samples[(ts.idx+j)%latencyTSLen]; smp.unix != 0 {
			fn(smp)
		}
	}
}

// --- LATENCY ---

func cmdLatency(x *Ctx) {
	m := &x.s.intro.latency
	n := x.nargs()
	switch sub := strings.ToLower(x.arg(1)); {
	case sub == "history" && n == 3:
		ts := m.series[x.arg(2)]
		if ts == nil {
			x.w.Array(0)
			return
		}
		var samples []latencySample
		ts.inOrder(func(smp latencySample) { samples = append(samples, smp) })
		x.w.Array(len(samples))
		for _, smp := range samples {
			x.w.Array(2)
			x.w.Int(smp.unix)
			x.w.Int(smp.latency)
		}
	case sub == "graph" && n == 3:
		ts := m.series[x.arg(2)]
		if ts == nil {
			x.w.Errorf("ERR No samples available for event '%s'", x.arg(2))
			return
		}
		x.w.Verbatim(latencyGraph(x.arg(2), ts, x.s.clock.Now().Unix()))
	case sub == "latest" && n == 2:
		x.w.Array(len(m.order))
		for _, e := range m.order {
			ts := m.series[e]
			last := ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
			x.w.Array(4)
			x.w.BulkString(e)
			x.w.Int(last.unix)
			x.w.Int(last.latency)
			x.w.Int(ts.max)
		}
	case sub == "doctor" && n == 2:
		x.w.Verbatim(x.s.latencyReport())
	case sub == "reset":
		if n == 2 {
			x.w.Int(int64(m.reset("")))
			return
		}
		resets := 0
		for _, e := range x.args[2:] {
			if len(e) > 0 {
				resets += m.reset(string(e))
			}
		}
		x.w.Int(int64(resets))
	case sub == "histogram":
		x.latencyHistogram()
	case sub == "help" && n == 2:
		x.help([]string{
			"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"DOCTOR",
			"    Return a human readable latency analysis report.",
			"GRAPH <event>",
			"    Return an ASCII latency graph for the <event> class.",
			"HISTORY <event>",
			"    Return time-latency samples for the <event> class.",
			"LATEST",
			"    Return the latest latency samples for all events.",
			"RESET [<event> ...]",
			"    Reset latency data of one or more <event> classes.",
			"    (default: reset all data for all event classes)",
			"HISTOGRAM [COMMAND ...]",
			"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
			"    If no commands are specified then all histograms are replied.",
			"HELP",
			"    Prints this help.",
		})
	default:
		x.w.Errorf(msgSubcommandSyntax, x.arg(1), "LATENCY")
	}
}

// latencyHistogram answers LATENCY HISTOGRAM [command ...]: for each command
// with calls, its count and cumulative distribution by power-of-two
// microsecond buckets. A container named shows its subcommands.
func (x *Ctx) latencyHistogram() {
	var cmds []*command
	if x.nargs() == 2 {
		cmds = x.s.allCommands() // stats.go
	} else {
		for _, a := range x.args[2:] {
			name := strings.ToLower(string(a))
			parent, sub, isSub := strings.Cut(name, "|")
			c := x.s.table[parent]
			if c == nil {
				continue
			}
			if isSub {
				if c = c.subs[sub]; c == nil {
					continue
				}
				cmds = append(cmds, c)
				continue
			}
			cmds = append(cmds, c)
			subs := make([]*command, 0, len(c.subs))
			for _, sc := range c.subs {
				subs = append(subs, sc)
			}
			sort.Slice(subs, func(i, j int) bool { return subs[i].name < subs[j].name })
			cmds = append(cmds, subs...)
		}
	}
	var with []*command
	for _, c := range cmds {
		if c.stats.hist != nil && c.stats.hist.total > 0 {
			with = append(with, c)
		}
	}
	x.w.Map(len(with))
	for _, c := range with {
		x.w.BulkString(c.name)
		x.writeCommandCDF(c.stats.hist)
	}
}

// writeCommandCDF is Redis's fillCommandCDF: calls, then the cumulative count
// at each power-of-two bucket from 1024 ns on, labelled in microseconds, the
// buckets that add nothing left out.
func (x *Ctx) writeCommandCDF(h *latencyHist) {
	x.w.Map(2)
	x.w.BulkString("calls")
	x.w.Int(h.total)
	x.w.BulkString("histogram_usec")
	var pairs []int64
	var prev int64
	for _, step := range h.log2Steps(1024) {
		if step[1] > prev {
			pairs = append(pairs, step[0]/1000, step[1])
		}
		prev = step[1]
	}
	x.w.Map(len(pairs) / 2)
	for _, v := range pairs {
		x.w.Int(v)
	}
}

// --- LATENCY GRAPH ---

const latencyGraphCols = 80

// latencyGraph draws event's samples as Redis's latencyCommandGenSparkeline.
func latencyGraph(event string, ts *latencySeries, now int64) string {
	var values []float64
	var labels []string
	var lo, hi int64
	ts.inOrder(func(smp latencySample) {
		if len(values) == 0 {
			lo, hi = smp.latency, smp.latency
		}
		lo, hi = min(lo, smp.latency), max(hi, smp.latency)
		elapsed := now - smp.unix
		var label string
		switch {
		case elapsed < 60:
			label = strconv.FormatInt(elapsed, 10) + "s"
		case elapsed < 3600:
			label = strconv.FormatInt(elapsed/60, 10) + "m"
		case elapsed < 3600*24:
			label = strconv.FormatInt(elapsed/3600, 10) + "h"
		default:
			label = strconv.FormatInt(elapsed/(3600*24), 10) + "d"
		}
		values = append(values, float64(smp.latency))
		labels = append(labels, label)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, ts.max)
	b.WriteString(strings.Repeat("-", latencyGraphCols))
	b.WriteByte('\n')
	renderSparkline(&b, values, labels, latencyGraphCols, 4)
	return b.String()
}

// renderSparkline is Redis's sparklineRender with SPARKLINE_FILL: rows of
// "_o#|" columns, then each column's label written downwards.
func renderSparkline(b *strings.Builder, values []float64, labels []string, columns, rows int) {
	if len(values) == 0 {
		return
	}
	lo, hi := values[0], values[0]
	nlabels := 0
	for i, v := range values {
		if i > 0 {
			if v < lo {
				lo = v
			} else if v > hi {
				hi = v
			}
		}
		if labels[i] != "" {
			nlabels++
		}
	}
	for off := 0; off < len(values); off += columns {
		if off != 0 {
			b.WriteByte('\n')
		}
		n := min(len(values)-off, columns)
		renderSparkRange(b, values[off:off+n], labels[off:off+n], lo, hi, nlabels, rows)
	}
}

func renderSparkRange(b *strings.Builder, values []float64, labels []string, lo, hi float64, nlabels, rows int) {
	const fill = "_o#"
	relmax := hi - lo
	if relmax == 0 {
		relmax = 1
	}
	steps := len(fill) * rows
	chars := make([]byte, len(values))
	for row := 0; ; row++ {
		more := false
		for j := range chars {
			chars[j] = ' '
		}
		for j, v := range values {
			step := int(float64(int((v-lo)*float64(steps))) / relmax)
			step = min(max(step, 0), steps-1)
			if row < rows {
				more = true
				idx := step - (rows-row-1)*len(fill)
				if idx >= 0 && idx < len(fill) {
					chars[j] = fill[idx]
				} else if idx >= len(fill) {
					chars[j] = '|'
				}
				continue
			}
			if nlabels > 0 && row-rows < 1 { // the margin above the labels
				more = true
				break
			}
			if at := row - rows - 1; at < len(labels[j]) {
				more = true
				chars[j] = labels[j][at]
			}
		}
		if !more {
			return
		}
		b.Write(chars)
		b.WriteByte('\n')
	}
}

// --- LATENCY DOCTOR ---

// latencyReport is Redis's createLatencyReport for the events MyRedis records.
func (s *Server) latencyReport() string {
	m := &s.intro.latency
	threshold := s.cfg.Intro.LatencyThreshold
	if len(m.order) == 0 && threshold == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	var b strings.Builder
	advice := map[string]bool{}
	advices := 0
	now := s.clock.Now().Unix()
	for i, e := range m.order {
		ts := m.series[e]
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		n, avg, mad, period := ts.analyze(now)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			i+1, e, n, avg, mad, float64(period)/float64(n), ts.max)
		switch strings.ToLower(e) {
		case "command":
			if s.cfg.Intro.SlowlogSlowerThan < 0 {
				advice["slowlog-enabled"] = true
				advices++
			} else if s.cfg.Intro.SlowlogSlowerThan/1000 > threshold {
				advice["slowlog-tuning"] = true
				advices++
			}
			advice["slowlog-inspect"], advice["large-objects"] = true, true
			advices += 2
		case "fast-command":
			advice["scheduler"] = true
			advices++
		case "expire-cycle":
			advice["hz"], advice["large-objects"] = true, true
			advices += 2
		}
		b.WriteByte('\n')
	}
	if anonHugePages() > 0 {
		advice["thp"] = true
		advices++
	}
	switch {
	case len(m.order) == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	case len(m.order) > 0 && advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
	default:
		b.WriteString("\nI have a few advices for you:\n\n")
		s.writeLatencyAdvice(&b, advice)
	}
	return b.String()
}

// writeLatencyAdvice writes the advice paragraphs in Redis's order.
func (s *Server) writeLatencyAdvice(b *strings.Builder, advice map[string]bool) {
	t := s.cfg.Intro.LatencyThreshold * 1000
	if advice["slowlog-enabled"] {
		fmt.Fprintf(b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", t)
	}
	if advice["slowlog-tuning"] {
		fmt.Fprintf(b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", t)
	}
	if advice["slowlog-inspect"] {
		b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
	}
	if advice["scheduler"] {
		b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
			"  1) Lower the system load.\n" +
			"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
			"  3) Check if you have a \"noisy neighbour\" problem.\n" +
			"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
			"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
	}
	if advice["hz"] && s.cfg.Hz < 100 {
		b.WriteString("- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n")
	}
	if advice["large-objects"] {
		b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
	}
	if advice["thp"] {
		b.WriteString("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n")
	}
}

// analyze is Redis's analyzeLatencyForEvent: the number of samples, their
// average and mean absolute deviation, and the seconds since the oldest.
func (ts *latencySeries) analyze(now int64) (n, avg, mad, period int64) {
	var sum, oldest int64
	ts.inOrder(func(smp latencySample) {
		n++
		sum += smp.latency
		if oldest == 0 || smp.unix < oldest {
			oldest = smp.unix
		}
	})
	if n == 0 {
		return 0, 0, 0, 0
	}
	avg = sum / n
	if period = now - oldest; period == 0 {
		period = 1
	}
	var dev int64
	ts.inOrder(func(smp latencySample) {
		d := avg - smp.latency
		dev += max(d, -d)
	})
	return n, avg, dev / n, period
}

// anonHugePages is the AnonHugePages of /proc/self/smaps in kB (0 where unknown).
func anonHugePages() int64 {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// log2Steps is hdr_histogram's logarithmic iteration from first ns on, doubling:
// for each level, the highest value equivalent to it and the count of values up
// to that, until every value is counted.
func (h *latencyHist) log2Steps(first int64) [][2]int64 {
	var out [][2]int64
	var seen int64
	i := 0
	for level := first; seen < h.total && level <= 4*histMax; level *= 2 {
		limit := level + level/128 - 1 // the end of level's sub-bucket
		for ; i < len(h.counts) && histHighestAt(i) <= limit; i++ {
			seen += h.counts[i]
		}
		out = append(out, [2]int64{limit, seen})
	}
	return out
}

// histHighestAt is the highest value counted at index i of latencyHist.counts.
func histHighestAt(i int) int64 {
	if i < 256 {
		return int64(i)
	}
	bucket := i>>7 - 1
	sub := i - (bucket+1)<<7 + 128
	return int64(sub)<<bucket + 1<<bucket - 1
}
