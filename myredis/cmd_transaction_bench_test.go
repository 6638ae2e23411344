package myredis

import "testing"

// BenchmarkMultiIncrExec is MULTI / INCR / EXEC on the executor, without the network.
func BenchmarkMultiIncrExec(b *testing.B) {
	s := New(Config{})
	defer s.Close()
	c := newClient(s, nil)
	c.authed = true
	m, i, e := bargs("MULTI"), bargs("INCR", "counter"), bargs("EXEC")
	var w Writer
	b.ReportAllocs()
	b.ResetTimer()
	s.submit(func() {
		for n := 0; n < b.N; n++ {
			w.Reset()
			s.call(c, m, &w)
			s.call(c, i, &w)
			s.call(c, e, &w)
		}
	})
}
