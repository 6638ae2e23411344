package myredis

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Returning memory once the server goes quiet.
//
// Go's collector lets the heap grow to about twice its live objects (GOGC=100)
// before it collects, and its background scavenger gives pages back to the OS
// only down to that goal. So after a burst of writes a MyRedis process holds
// about twice its data in RSS, where Redis (jemalloc) holds about its data plus
// fragmentation: 1M 16-byte SETs left 266 B/key of RSS against 145 of live heap.
// Lowering GOGC shrinks that all the time but costs throughput on every write
// (GOGC=25 took SET throughput down by a third or more on this machine).
//
// trimLoop does it only when nobody is waiting: after traffic, once two seconds
// in a row were quiet, if the heap holds much more than its live objects, it
// collects and returns the free pages (debug.FreeOSMemory), so an idle server's
// RSS is close to its live data. Under load RSS still reaches about twice the live heap
// (VmHWM shows it); see docs/performance.md.

const (
	trimQuietBytes = 64 << 10 // request bytes in a second below which the server is quiet
	trimMinSlack   = 16 << 20 // heap beyond the live objects worth a collection
)

var trimSamples = []string{
	"/gc/heap/live:bytes",                // live objects at the last collection
	"/memory/classes/heap/objects:bytes", // live and dead objects now
	"/memory/classes/heap/unused:bytes",  // room in spans that hold objects
	"/memory/classes/heap/free:bytes",    // free pages not yet returned
}

// heapSlack is what a collection and a scavenge could give back, at most: the
// heap memory the process holds (objects live and dead, room in their spans,
// free pages) beyond the live objects. Safe from any goroutine.
func heapSlack() (slack, live uint64) {
	smp := make([]metrics.Sample, len(trimSamples))
	for i, name := range trimSamples {
		smp[i].Name = name
	}
	metrics.Read(smp)
	var v [4]uint64
	for i := range smp {
		if smp[i].Value.Kind() == metrics.KindUint64 {
			v[i] = smp[i].Value.Uint64()
		}
	}
	live = v[0]
	if held := v[1] + v[2] + v[3]; held > live {
		slack = held - live
	}
	return slack, live
}

// trimLoop runs on its own goroutine for the server's life (see the top of the file).
func (s *Server) trimLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	tr := trimmer{last: s.net.in.Load()}
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		trim := tr.tick(s.net.in.Load(), heapSlack)
		if trim {
			debug.FreeOSMemory()
			s.trims.Add(1)
		}
		if tr.live > 0 {
			s.log.Debug("memory after traffic", "returned", trim, "slack", tr.slack, "live", tr.live)
			tr.live = 0
		}
	}
}

// trimmer decides, once a second, whether to trim: after traffic, once the
// server has been quiet for trimQuietTicks seconds in a row (a pause inside a bulk
// load is not idleness), when the slack is worth a collection.
type trimmer struct {
	last  int64 // request bytes read so far, at the previous tick
	busy  bool  // traffic since the last decision to trim or not
	quiet int   // quiet ticks in a row
	// the figures of the last decision, for the log
	slack, live uint64
}

const trimQuietTicks = 2

func (t *trimmer) tick(in int64, slack func() (uint64, uint64)) bool {
	quiet := in-t.last < trimQuietBytes
	t.last = in
	if !quiet {
		t.busy, t.quiet = true, 0
		return false
	}
	t.quiet++
	if !t.busy || t.quiet < trimQuietTicks {
		return false
	}
	t.busy = false
	t.slack, t.live = slack()
	return t.slack > max(trimMinSlack, t.live/4)
}
