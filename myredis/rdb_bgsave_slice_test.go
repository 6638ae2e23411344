package myredis

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBgsaveSlicesLargeValues: a BGSAVE encodes a large sorted set or hash a
// slice per executor job (no job encodes more than zsetSlice members), the
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
		z, h := newZSet(), newHash()
		for i := range n {
			z.Add("m"+strconv.Itoa(i), float64(i)/7)
			h.set([]byte("f"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i)))
		}
		db.add("big", z)
		db.add("bighash", h)
		db.add("small", []byte("x"))
		require.NotNil(t, rdbSliceOf(h), "a hash of %d fields is sliced", n)
		whole = map[string][]byte{}
		for _, k := range []string{"big", "bighash"} {
			w := rdbWriter{}
			appendRDBKeyValue(&w, k, db.entry(k).val, 0)
			whole[k] = w.b
		}
	})
	for _, writeMidway := range []bool{false, true} {
		t.Run("write midway "+strconv.FormatBool(writeMidway), func(t *testing.T) {
			recs := map[string][]byte{}
			var order []string
			cur, steps, maxStep := "", 0, 0
			bg := &bgsave{touched: map[dbKey]struct{}{}}
			for done := false; !done; {
				var items []rdbItem
				s.submit(func() {
					items, done, _ = s.bgsaveStep(bg)
					if writeMidway && steps == 2 {
						// ZADD big: the executor's write hook finishes the value first
						s.bgsaveCapture(bg, dbKey{s.dbs[0], "big"})
						s.bgsaveCapture(bg, dbKey{s.dbs[0], "bighash"})
					}
				})
				steps++
				size := 0
				for _, it := range items {
					if it.key != "" {
						cur = it.key
						order = append(order, cur)
					}
					recs[cur] = append(recs[cur], it.rec...)
					size += len(it.rec)
				}
				maxStep = max(maxStep, size)
			}
			// a continuation slice goes to the last record begun: another record
			// between two slices would spoil both comparisons
			for k, want := range whole {
				assert.True(t, bytes.Equal(want, recs[k]), "%s: the slices make the whole record", k)
			}
			assert.ElementsMatch(t, []string{"big", "bighash", "small"}, order, "each record once")
			if !writeMidway {
				assert.Greater(t, steps, 2*5, "each large value took several jobs")
				assert.Less(t, maxStep, len(whole["big"])/3, "no job encoded a large value whole")
			}
		})
	}
}
