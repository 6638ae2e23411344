package myredis

import (
	"errors"
	"os"
	"path/filepath"
	"time"
)

// BGREWRITEAOF while appendonly is no. Redis 7.0 rewrites anyway: the data as
// at the command goes to a new AOF base file (with no writes after it), which
// appendonly yes at the next start then loads. MyRedis keeps one AOF file
// (aof.go), so the rewrite writes dir/appendfilename, through a temp file
// renamed over it, with the same machinery as a running AOF's rewrite
// (aof_rewrite.go) on an aof that is not installed: no writer, no buffer of
// later writes. CONFIG SET appendonly yes and shutdown stop it, as Redis kills
// its child.
//
// The rewrites' figures of INFO persistence live in the server, not in the
// aof, so that they count every rewrite, on or off, as Redis's do.

// aofStats are the AOF rewrites' figures. Executor-owned.
type aofStats struct {
	detached  *aof  // the rewrite running while appendonly is no
	scheduled bool  // BGREWRITEAOF asked for inside MULTI or a script: start at the next tick
	rewrites  int64 // rewrites started (Redis's stat_aof_rewrites counts at the start)
	failures  int64 // failed in a row
	lastErr   bool  // the last finished rewrite failed
	finished  bool  // one has finished: lastDur is its duration
	lastDur   time.Duration
	started   time.Time // of the running rewrite
}

func init() {
	openHooks = append(openHooks, func(s *Server) error {
		s.submit(func() { s.closeHooks = append(s.closeHooks, func() { s.submit(s.stopDetachedRewrite) }) })
		return nil
	})
}

// startDetachedRewrite starts BGREWRITEAOF's rewrite while appendonly is no.
// Runs on the executor.
func (s *Server) startDetachedRewrite() error {
	if s.cfg.Workers > 1 {
		// its copy-on-write captures need the one executor's order (as appendonly yes)
		s.log.Warn("aof rewrite needs --workers 1")
		return errors.New("aof rewrite needs --workers 1")
	}
	if err := os.MkdirAll(s.cfg.Dir, 0o755); err != nil {
		s.log.Warn("can't open or create the append-only dir", "dir", s.cfg.Dir, "err", err)
		s.aofrw.lastErr = true
		return err
	}
	a := newAOF(s)
	a.detached = true
	s.aofrw.detached = a
	return a.startRewrite()
}

// stopDetachedRewrite abandons the rewrite running while appendonly is no
// (CONFIG SET appendonly yes, shutdown). Runs on the executor.
func (s *Server) stopDetachedRewrite() {
	if a := s.aofrw.detached; a != nil {
		s.aofrw.detached = nil
		a.abortRewrite()
	}
}

// rewriting reports whether an AOF rewrite runs, with the AOF on or off.
func (s *Server) aofRewriting() bool {
	return (s.aof != nil && s.aof.rewriting) || s.aofrw.detached != nil
}

// rewritingAOF is the aof whose rewrite captures keys before writes, nil when
// none does (rdb_bgsave.go's setWriteHooks).
func (s *Server) rewritingAOF() *aof {
	switch {
	case s.aof != nil && s.aof.rw != nil:
		return s.aof
	case s.aofrw.detached != nil && s.aofrw.detached.rw != nil:
		return s.aofrw.detached
	}
	return nil
}

// scheduleRewrite has BGREWRITEAOF's rewrite start once the running MULTI or
// script is done: the AOF's cron starts it while the AOF is on, the next
// executor job while it is off. Runs on the executor.
func (s *Server) scheduleRewrite() {
	s.aofrw.scheduled = true
	if s.aof == nil {
		go s.submit(s.startScheduledRewrite)
	}
}

// startScheduledRewrite starts a rewrite scheduled while the AOF is off.
// Runs on the executor.
func (s *Server) startScheduledRewrite() {
	if !s.aofrw.scheduled || s.aof != nil || s.aofRewriting() {
		return // started meanwhile, or the AOF, turned on, starts it (maybeRewrite)
	}
	s.aofrw.scheduled = false
	if err := s.startDetachedRewrite(); err != nil {
		s.log.Warn("scheduled aof rewrite failed to start", "err", err)
	}
}

// finishDetached puts the rewritten file in place of the AOF file. Runs on the
// rewriter goroutine; the rename runs on the executor so that an abandoned
// rewrite never replaces the file.
func (a *aof) finishDetached(rw *rewrite, f *os.File, tmp string) error {
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	var err error
	a.s.submit(func() {
		if rw.aborted {
			err = errRewriteAborted
			return
		}
		err = os.Rename(tmp, a.path)
	})
	if err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(a.path))
	return nil
}

// aofInfo is INFO persistence's AOF fields as Redis 7.0.15 shows them with
// the AOF on or off. MyRedis forks no child: the copy-on-write sizes are 0.
func (s *Server) aofInfo() [][2]string {
	st := &s.aofrw
	cur := int64(-1)
	if s.aofRewriting() {
		cur = int64(time.Since(st.started) / time.Second)
	}
	last := int64(-1)
	if st.finished {
		last = int64(st.lastDur / time.Second)
	}
	status := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "err"
	}
	writeOK := s.aof == nil || s.aof.writeErr.Load() == nil
	return [][2]string{
		{"aof_enabled", b01(s.aof != nil)},
		{"aof_rewrite_in_progress", b01(s.aofRewriting())},
		{"aof_rewrite_scheduled", b01(st.scheduled)},
		{"aof_last_rewrite_time_sec", itoa(last)},
		{"aof_current_rewrite_time_sec", itoa(cur)},
		{"aof_last_bgrewrite_status", status(!st.lastErr)},
		{"aof_rewrites", itoa(st.rewrites)},
		{"aof_rewrites_consecutive_failures", itoa(st.failures)},
		{"aof_last_write_status", status(writeOK)},
		{"aof_last_cow_size", "0"},
		{"module_fork_in_progress", "0"},
		{"module_fork_last_cow_size", "0"},
	}
}
