package myredis

import (
	"bytes"
	"fmt"
	"math/bits"
	"os"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// INFO's counters as Redis keeps them: per command (commandstats, latencystats),
// per error code (errorstats), the network byte counts, sampled rates
// (instantaneous_*) and the memory peak. Everything here is executor-owned except
// netCounters, which connection goroutines add to.

// cmdStats are one command's figures; they live in its command entry, so the
// executor's hot path touches no map. Runs on the executor.
//
// Every call is timed while the slow log or the latency monitor is on (the
// default): exec reads the clock once per command for them (introspect.go).
// With both off, time is measured on a sample of the calls, the first of each
// command and then one in timeEvery, as a clock read costs 100-300 ns on the
// machines we measured (a PING runs in about 60 ns): usec is then the sampled
// time scaled to all calls, and the latency percentiles and LATENCY HISTOGRAM
// come from the sample.
type cmdStats struct {
	calls, rejected, failed int64
	timedCalls, timedNs     int64        // the sampled calls and their total time
	hist                    *latencyHist // allocated by the first timed call
}

// timeEvery is one timed call in so many.
const timeEvery = 32

// timeNext reports whether the coming call is to be timed.
func (st *cmdStats) timeNext() bool { return st.calls&(timeEvery-1) == 0 }

// record counts a call that succeeded and took ns (-1: not timed). Runs on the
// executor.
func (st *cmdStats) record(ns int64) {
	st.calls++
	if ns < 0 {
		return
	}
	st.timedCalls++
	st.timedNs += ns
	if st.hist == nil {
		st.hist = new(latencyHist)
	}
	st.hist.record(ns)
}

// usec is the estimated total run time, in microseconds.
func (st *cmdStats) usec() int64 {
	if st.timedCalls == 0 {
		return 0
	}
	return int64(float64(st.timedNs) / float64(st.timedCalls) * float64(st.calls) / 1000)
}

// maxErrorCodes caps errorstats as Redis's ERROR_STATS_NUMBER does.
const maxErrorCodes = 128

// execStats is the executor's share of INFO stats.
type execStats struct {
	errors       map[string]int64 // by code ("ERR", "WRONGTYPE")
	errorReplies int64            // total_error_replies
	peakMemory   uint64
	// instantaneous_* samples, as Redis's trackInstantaneousMetric
	opsSamples, inSamples, outSamples rateSampler
	replInSamples, replOutSamples     rateSampler // instantaneous_*_repl_kbps
	// unexpectedErrors counts error replies to the master's stream or the AOF
	// being loaded (unexpected_error_replies)
	unexpectedErrors int64
}

// netCounters count socket traffic; connection goroutines, replicas' outboxes
// and the replica's link to its master add to them, the executor reads them.
//
//   - in, out: clients' bytes; replIn, replOut: replication's, kept apart as
//     Redis keeps stat_net_repl_*: what a replica's socket carries once it is one
//     (its RDB and stream; its ACKs are client input, as Redis reads them from a
//     client), and what a replica reads from its master. INFO's
//     total_net_input_bytes / output are the sums, as Redis's.
//   - reads, writes: socket reads and writes, Redis's total_reads_processed /
//     total_writes_processed (one per readQueryFromClient / writeToClient there;
//     here one per read that returned data, EOF or an error, and one per write
//     of a batch's replies or an outbox's messages).
type netCounters struct {
	in, out, replIn, replOut atomic.Int64
	reads, writes            atomic.Int64
}

// read counts one socket read that returned v bytes (0: EOF or an error).
func (n *netCounters) read(v int) {
	if n != nil {
		n.reads.Add(1)
		n.in.Add(int64(v))
	}
}

// wrote counts one socket write of v bytes, to a replica (repl) or a client.
func (n *netCounters) wrote(v int, repl bool) {
	if n == nil {
		return
	}
	n.writes.Add(1)
	if repl {
		n.replOut.Add(int64(v))
	} else {
		n.out.Add(int64(v))
	}
}

// totalIn and totalOut are total_net_input_bytes / output: clients' and
// replication's bytes.
func (n *netCounters) totalIn() int64  { return n.in.Load() + n.replIn.Load() }
func (n *netCounters) totalOut() int64 { return n.out.Load() + n.replOut.Load() }

// reset is CONFIG RESETSTAT's share of the counters.
func (n *netCounters) reset() {
	for _, v := range []*atomic.Int64{&n.in, &n.out, &n.replIn, &n.replOut, &n.reads, &n.writes} {
		v.Store(0)
	}
}

// countCall records one executed command that took ns (-1: not timed), and its
// error reply in errorstats when countErr (a script that fails with the error
// of its redis.call does not count it twice). Runs on the executor.
func (s *Server) countCall(cmd *command, ns int64, failedReply []byte, countErr bool) {
	st := &cmd.stats
	st.calls++
	if ns >= 0 {
		st.timedCalls++
		st.timedNs += ns
		if st.hist == nil {
			st.hist = new(latencyHist)
		}
		st.hist.record(ns)
	}
	if failedReply != nil {
		st.failed++
		if countErr {
			s.countError(failedReply)
		}
	}
}

// countRejected records a command refused before it ran (arity, NOAUTH, MULTI).
func (s *Server) countRejected(cmd *command, msg string) {
	cmd.stats.rejected++
	s.countErrorText(msg)
}

// countError records an error reply ("-CODE message\r\n").
func (s *Server) countError(reply []byte) {
	end := len(reply)
	for i, b := range reply {
		if b == ' ' || b == '\r' {
			end = i
			break
		}
	}
	s.countErrorText(string(reply[1:end]))
}

// countErrorText records an error by its code, the message's first word.
func (s *Server) countErrorText(msg string) {
	code, _, _ := strings.Cut(msg, " ")
	s.estats.errorReplies++
	if s.estats.errors == nil {
		s.estats.errors = map[string]int64{}
	}
	if _, ok := s.estats.errors[code]; ok || len(s.estats.errors) < maxErrorCodes {
		s.estats.errors[code]++
	}
}

// callInternal runs a command of the master's stream or of the AOF being
// loaded for c, whose replies nobody reads; an error among them is counted in
// unexpected_error_replies and logged, as Redis's afterErrorReply does for its
// master and AOF clients (from names the sender). Runs on the executor.
func (s *Server) callInternal(c *Client, args [][]byte, w *Writer, from string) {
	before := s.estats.errorReplies
	w.Reset()
	s.call(c, args, w)
	n := s.estats.errorReplies - before
	if out := w.Bytes(); n == 0 && len(out) > 0 && out[0] == '-' {
		n = 1 // an error left out of errorstats (a script's own failure) is still one
	}
	if n == 0 {
		return
	}
	s.estats.unexpectedErrors += n
	msg := w.Bytes()
	if i := bytes.IndexByte(msg, '-'); i >= 0 {
		msg = msg[i:min(len(msg), i+4096)]
	}
	s.log.Warn("== CRITICAL == an error reply to "+from+" nobody reads", "command", string(args[0]),
		"reply", strings.TrimRight(string(msg), "\r\n"))
}

// resetExecStats is CONFIG RESETSTAT's share for this file. Runs on the executor.
func (s *Server) resetExecStats() {
	for _, cmd := range s.table {
		cmd.stats = cmdStats{}
		for _, sub := range cmd.subs {
			sub.stats = cmdStats{}
		}
	}
	s.estats = execStats{peakMemory: uint64(s.usedMemoryNow())}
	s.net.reset()
}

// --- latency histogram ---

// latencyHist is an HDR histogram of nanoseconds with 2 significant digits, the
// layout Redis's hdr_histogram uses for latencystats (1 ns to 1 s): values below
// 256 are exact, above that each power of two has 128 equal sub-buckets.
type latencyHist struct {
	counts [(histBuckets + 1) * 128]int64
	total  int64
}

const (
	histMax     = int64(time.Second)
	histBuckets = 23 // 2^(23+8) > 1e9
)

func histIndex(v int64) (bucket, sub int) {
	bucket = 63 - bits.LeadingZeros64(uint64(v)|255) - 7
	sub = int(v >> bucket)
	return bucket, sub
}

func (h *latencyHist) record(ns int64) {
	v := min(max(ns, 1), histMax)
	bucket, sub := histIndex(v)
	h.counts[(bucket+1)<<7+sub-128]++
	h.total++
}

// valueAt is hdr_value_at_percentile: the highest value equivalent to the one
// at percentile p.
func (h *latencyHist) valueAt(p float64) int64 {
	want := max(int64(p/100*float64(h.total)+0.5), 1)
	var seen int64
	for i, n := range h.counts {
		if seen += n; seen >= want {
			bucket := max(i>>7-1, 0)
			sub := i - (bucket+1)<<7 + 128
			if i < 256 {
				bucket, sub = 0, i
			}
			return int64(sub)<<bucket + 1<<bucket - 1
		}
	}
	return 0
}

// --- sampled rates ---

// rateSampler keeps Redis's 16 samples of a counter's per-second rate, taken every
// 100 ms by the cron.
type rateSampler struct {
	lastAt    time.Time
	lastValue int64
	samples   [16]int64
	idx       int
}

func (r *rateSampler) track(now time.Time, value int64) {
	if !r.lastAt.IsZero() {
		if ms := now.Sub(r.lastAt).Milliseconds(); ms > 0 {
			r.samples[r.idx] = (value - r.lastValue) * 1000 / ms
			r.idx = (r.idx + 1) % len(r.samples)
		}
	}
	r.lastAt, r.lastValue = now, value
}

func (r *rateSampler) perSec() int64 {
	var sum int64
	for _, v := range r.samples {
		sum += v
	}
	return sum / int64(len(r.samples))
}

// statsCron samples the rates and the memory peak. Runs on the executor every 100 ms.
func (s *Server) statsCron() {
	now := time.Now()
	s.estats.opsSamples.track(now, s.stats.commands)
	s.estats.inSamples.track(now, s.net.totalIn())
	s.estats.outSamples.track(now, s.net.totalOut())
	s.estats.replInSamples.track(now, s.net.replIn.Load())
	s.estats.replOutSamples.track(now, s.net.replOut.Load())
	s.memoryCron() // memory.go
}

func (s *Server) notePeak(used uint64) {
	s.estats.peakMemory = max(s.estats.peakMemory, used)
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// heapObjectBytes is the bytes of live and not yet swept heap objects (MemStats.HeapAlloc)
// read without stopping the world.
func heapObjectBytes() uint64 {
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return heapSample[0].Value.Uint64()
}

// processRSS is the resident set size from /proc/self/statm, as Redis's
// zmalloc_get_rss; 0 where there is no /proc.
func processRSS() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// --- INFO sections ---

func (s *Server) allCommands() []*command {
	var out []*command
	for _, cmd := range s.table {
		out = append(out, cmd)
		for _, sub := range cmd.subs {
			out = append(out, sub)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func infoCommandstats(s *Server) [][2]string {
	var out [][2]string
	for _, cmd := range s.allCommands() {
		st := &cmd.stats
		if st.calls == 0 && st.failed == 0 && st.rejected == 0 {
			continue
		}
		usec := st.usec()
		perCall := 0.0
		if st.calls > 0 {
			perCall = float64(usec) / float64(st.calls)
		}
		out = append(out, [2]string{"cmdstat_" + cmd.name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
			st.calls, usec, perCall, st.rejected, st.failed)})
	}
	return out
}

func infoErrorstats(s *Server) [][2]string {
	codes := make([]string, 0, len(s.estats.errors))
	for code := range s.estats.errors {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	out := make([][2]string, 0, len(codes))
	for _, code := range codes {
		out = append(out, [2]string{"errorstat_" + code, "count=" + itoa(s.estats.errors[code])})
	}
	return out
}

func infoLatencystats(s *Server) [][2]string {
	var out [][2]string
	for _, cmd := range s.allCommands() {
		h := cmd.stats.hist
		if h == nil || h.total == 0 {
			continue
		}
		out = append(out, [2]string{"latency_percentiles_usec_" + cmd.name, fmt.Sprintf("p50=%.3f,p99=%.3f,p99.9=%.3f",
			float64(h.valueAt(50))/1000, float64(h.valueAt(99))/1000, float64(h.valueAt(99.9))/1000)})
	}
	return out
}
