package myredis

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkBgsaveLongestJob measures, for a value of a million members, how
// long the executor is held: "whole-ms" is one job encoding the value whole
// (what a BGSAVE did for sets, lists and streams before they were sliced, and
// still does for a value a write is about to change), "longest-job-ms" the
// longest of the jobs of a BGSAVE that slices it, "jobs" their number.
//
//	go test ./myredis -run '^$' -bench BgsaveLongestJob -benchtime 3x
func BenchmarkBgsaveLongestJob(b *testing.B) {
	const n = 1_000_000
	build := map[string]func() any{
		"set": func() any {
			v := newSet()
			for i := range n {
				v.add([]byte("member:"+strconv.Itoa(i)), 512)
			}
			return v
		},
		"list": func() any {
			v := newList(-2)
			for i := range n {
				v.PushBack([]byte("element:" + strconv.Itoa(i)))
			}
			return v
		},
		"stream": func() any {
			v := newStream()
			for i := range n {
				v.add(streamID{ms: uint64(i + 1)}, [][]byte{[]byte("field"), []byte(strconv.Itoa(i))}, 4096, 100)
			}
			return v
		},
		"zset": func() any {
			v := newZSet()
			for i := range n {
				v.Add("member:"+strconv.Itoa(i), float64(i))
			}
			return v
		},
	}
	for _, typ := range []string{"set", "list", "stream", "zset"} {
		b.Run(typ, func(b *testing.B) {
			s := New(Config{})
			defer s.Close()
			v := build[typ]()
			s.submit(func() { s.dbs[0].add("big", v) })
			var whole, longest time.Duration
			jobs := 0
			for b.Loop() {
				s.submit(func() {
					start := time.Now()
					w := rdbWriter{compress: true}
					appendRDBKeyValue(&w, "big", v, 0)
					whole = max(whole, time.Since(start))
				})
				bg := &bgsave{touched: map[dbKey]struct{}{}, compress: true}
				jobs = 0
				for done := false; !done; jobs++ {
					s.submit(func() {
						start := time.Now()
						_, done, _ = s.bgsaveStep(bg)
						longest = max(longest, time.Since(start))
					})
				}
			}
			b.ReportMetric(float64(whole.Microseconds())/1000, "whole-ms")
			b.ReportMetric(float64(longest.Microseconds())/1000, "longest-job-ms")
			b.ReportMetric(float64(jobs), "jobs")
		})
	}
}
