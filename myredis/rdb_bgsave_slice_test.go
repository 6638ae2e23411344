package myredis

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigValueKeys are the large values TestBgsaveSlicesLargeValues saves.
var bigValueKeys = []string{"big", "bighash", "bigset", "biglist", "bigstream"}

// TestBgsaveSlicesLargeValues: a BGSAVE encodes a large sorted set, hash,
// set, list or stream a slice per executor job (no job encodes more than zsetSlice members), the
// slices make exactly the record a whole encoding makes, with no other record
// in between, and a write to the value being sliced first encodes the rest of
// it as it was.
func TestBgsaveSlicesLargeValues(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	const n = 5*zsetSlice + 17
	var whole map[string][]byte
	s.submit(func() {
		db := s.dbs[0]
		z, h, set, l, st := newZSet(), newHash(), newSet(), newList(-2), newStream()
		for i := range n {
			z.Add("m"+strconv.Itoa(i), float64(i)/7)
			h.set([]byte("f"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i)), nil)
			set.add([]byte("s"+strconv.Itoa(i)), 512)
			l.PushBack([]byte("e" + strconv.Itoa(i)))
			st.add(streamID{ms: uint64(i + 1)}, [][]byte{[]byte("f"), []byte(strconv.Itoa(i))}, 4096, 100)
		}
		db.add("big", z)
		db.add("bighash", h)
		db.add("bigset", set)
		db.add("biglist", l)
		db.add("bigstream", st)
		db.add("small", []byte("x"))
		for _, k := range bigValueKeys {
			require.NotNil(t, rdbSliceOf(db.entry(k).value()), "%s of %d members is sliced", k, n)
		}
		whole = map[string][]byte{}
		for _, k := range bigValueKeys {
			w := rdbWriter{}
			appendRDBKeyValue(&w, k, db.entry(k).value(), 0)
			whole[k] = w.b
		}
	})
	// a snapshot in steps: BGSAVE's, or the AOF rewrite's with the RDB preamble
	type piece struct {
		key string
		rec []byte
	}
	type snapshot struct {
		step    func() ([]piece, bool)
		capture func(dk dbKey) // the write hook, before a write to dk
	}
	kinds := map[string]func() snapshot{
		"bgsave": func() snapshot {
			bg := &bgsave{touched: map[dbKey]struct{}{}}
			return snapshot{
				step: func() ([]piece, bool) {
					items, done, _ := s.bgsaveStep(bg)
					var out []piece
					for _, it := range items {
						out = append(out, piece{it.key, it.rec})
					}
					return out, done
				},
				capture: func(dk dbKey) { s.bgsaveCapture(bg, dk) },
			}
		},
		"aof preamble": func() snapshot {
			a := &aof{s: s}
			rw := &rewrite{touched: map[dbKey]struct{}{}, pre: &preamble{}}
			a.rw = rw
			return snapshot{
				step: func() ([]piece, bool) {
					items, done, _ := a.scanStep(rw)
					var out []piece
					for _, it := range items {
						out = append(out, piece{it.key, it.rec})
					}
					return out, done
				},
				capture: a.captureBeforeWrite,
			}
		},
	}
	for _, kind := range []string{"bgsave", "aof preamble"} {
		for _, writeMidway := range []bool{false, true} {
			t.Run(kind+" write midway "+strconv.FormatBool(writeMidway), func(t *testing.T) {
				recs := map[string][]byte{}
				var order []string
				cur, steps := "", 0
				maxStep := map[string]int{} // the most of a key's record one job encoded
				snap := kinds[kind]()
				for done := false; !done; {
					var items []piece
					s.submit(func() {
						items, done = snap.step()
						if writeMidway && steps == 2 {
							// ZADD big and the like: the executor's write hook finishes the value first
							for _, k := range bigValueKeys {
								snap.capture(dbKey{s.dbs[0], k})
							}
						}
					})
					steps++
					size := map[string]int{}
					for _, it := range items {
						if it.key != "" {
							cur = it.key
							order = append(order, cur)
						}
						recs[cur] = append(recs[cur], it.rec...)
						size[cur] += len(it.rec)
					}
					for k, n := range size {
						maxStep[k] = max(maxStep[k], n)
					}
				}
				// a continuation slice goes to the last record begun: another record
				// between two slices would spoil both comparisons
				for k, want := range whole {
					assert.True(t, bytes.Equal(want, recs[k]), "%s: the slices make the whole record", k)
				}
				assert.ElementsMatch(t, append([]string{"small"}, bigValueKeys...), order, "each record once")
				if !writeMidway {
					assert.Greater(t, steps, len(bigValueKeys)*5, "each large value took several jobs")
					for k, rec := range whole {
						assert.Less(t, maxStep[k], len(rec)/3, "%s: no job encoded it whole", k)
					}
				}
			})
		}
	}
}
