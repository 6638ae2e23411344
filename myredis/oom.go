package myredis

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
)

// oom-score-adj, as Redis's setOOMScoreAdj: when it is not "no", the process's
// /proc/self/oom_score_adj is set to oom-score-adj-values' master value (the
// replica value while this server is a replica), plus the score the process had
// before for "relative" ("yes"), kept within -1000..1000. Turning it back to "no"
// restores that earlier score. The third value (Redis's background-save child)
// has no use: MyRedis saves in a goroutine, not a forked child. Written at
// start-up, by CONFIG SET (which fails if the file cannot be written) and when
// REPLICAOF changes the role.

const oomScoreAdjPath = "/proc/self/oom_score_adj"

// oomProc is the process's own state (one file per process, whatever the
// number of servers in it): whether MyRedis changed the score, and the score
// it found first.
var oomProc struct {
	sync.Mutex
	adjusted bool
	base     int
}

var errOOMScoreAdj = errors.New("Failed to set current oom_score_adj. Check server logs.")

func init() {
	openHooks = append(openHooks, func(s *Server) error {
		s.applyOOMScoreAdj(&s.cfg) // Redis goes on when this fails at start-up
		return nil
	})
}

// applyOOMScoreAdj writes the score cfg asks for. Runs on the executor (or in
// Open, before it serves).
func (s *Server) applyOOMScoreAdj(cfg *Config) error {
	cfg.initOps()
	o := &cfg.Ops
	oomProc.Lock()
	defer oomProc.Unlock()
	var val int
	switch {
	case o.OOMScoreAdj != oomAdjNo:
		if !oomProc.adjusted {
			data, err := os.ReadFile(oomScoreAdjPath)
			if err != nil {
				s.log.Warn("unable to read oom_score_adj", "err", err)
				return errOOMScoreAdj
			}
			oomProc.base, _ = strconv.Atoi(strings.TrimSpace(string(data)))
			oomProc.adjusted = true
		}
		val = o.OOMScoreAdjValues[0]
		if cfg.Repl.MasterHost != "" {
			val = o.OOMScoreAdjValues[1]
		}
		if o.OOMScoreAdj == oomAdjRelative {
			val += oomProc.base
		}
		val = min(max(val, -1000), 1000)
	case oomProc.adjusted:
		oomProc.adjusted = false
		val = oomProc.base
	default:
		return nil
	}
	if err := os.WriteFile(oomScoreAdjPath, []byte(strconv.Itoa(val)+"\n"), 0); err != nil {
		s.log.Warn("unable to write oom_score_adj", "err", err)
		return errOOMScoreAdj
	}
	return nil
}

// oomConfigChanged reports whether next changes the oom-score-adj settings.
func oomConfigChanged(old, next *Config) bool {
	return old.Ops.OOMScoreAdj != next.Ops.OOMScoreAdj || old.Ops.OOMScoreAdjValues != next.Ops.OOMScoreAdjValues
}

// firstOf is the first of names that is one of want (the setting CONFIG SET
// blames), or want[0].
func firstOf(names []string, want ...string) string {
	for _, n := range names {
		for _, w := range want {
			if n == w {
				return n
			}
		}
	}
	return want[0]
}
