package myredis

import "time"

// activerehashing, as Redis's databasesCron: the keyspace table grows by
// incremental rehashing (dict.go), one bucket per lookup or write, so a table
// nobody touches would keep its two tables for ever. With activerehashing yes
// (the default), each cron tick (hz a second) spends up to 1 ms moving buckets,
// 100 at a time, of the first database whose table is being rehashed, and
// leaves the rest to the next tick. Not while a BGSAVE or an AOF rewrite walks
// the table with a cursor (the dict is paused), as Redis does not while it has
// a child; not in --workers mode.

// activeRehash runs once per cron tick, on the executor.
func (s *Server) activeRehash() {
	if !s.cfg.Ops.ActiveRehashing || s.par.on {
		return
	}
	start := time.Now() // a CPU budget on this machine, not the data's clock
	for _, db := range s.dbs {
		d := db.dict
		if !d.rehashing() || d.paused > 0 {
			continue
		}
		for d.rehashing() && time.Since(start) < time.Millisecond {
			d.rehash(100)
		}
		return
	}
}
