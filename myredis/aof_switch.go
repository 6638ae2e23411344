package myredis

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
)

// CONFIG SET appendonly yes|no: turning the AOF on and off at run time, as Redis's
// startAppendOnly and stopAppendOnly do.
//
// On: a new aof is installed on the executor and a rewrite starts in the same job,
// so every write from then on is both in the rewrite buffer and handed to the
// writer. Until that rewrite switches files (Redis's AOF_WAIT_REWRITE: INFO shows
// aof_enabled:1, aof_rewrite_in_progress:1) the writer writes to a scratch file,
// temp-appendonly-wait-<pid>.aof, and the AOF file in dir is left as it was; the
// switch renames the rewritten file, which holds the data at the start plus every
// later write, over it, and the scratch file is removed. A failed rewrite is retried
// (maybeRewrite) while the state stays waiting.
//
// Off: the gathered writes are handed over, a running rewrite is abandoned, the
// writer writes and fsyncs what is left and closes the file before CONFIG SET
// replies (Redis flushes and fsyncs synchronously too); from then on nothing is
// appended.

const msgAOFOnFailed = "Unable to turn on AOF. Check server logs."

// setAppendOnly turns the AOF on or off. Runs on the executor.
func (s *Server) setAppendOnly(on bool) error {
	switch {
	case on && s.aof == nil:
		return s.startAppendOnly()
	case !on && s.aof != nil:
		s.aof.stopAppendOnly()
	}
	return nil
}

// startAppendOnly installs an AOF whose file is produced by a rewrite. Runs on the
// executor.
func (s *Server) startAppendOnly() error {
	if s.cfg.Workers > 1 {
		s.log.Error("aof: appendonly yes needs --workers 1")
		return errors.New(msgAOFOnFailed)
	}
	s.stopDetachedRewrite() // Redis kills a rewrite started while off, and starts one now (aof_detached.go)
	a := newAOF(s)
	if err := os.MkdirAll(s.cfg.Dir, 0o755); err != nil {
		s.log.Error("aof: cannot turn on", "err", err)
		return errors.New(msgAOFOnFailed)
	}
	a.waitFile = filepath.Join(s.cfg.Dir, fmt.Sprintf("temp-appendonly-wait-%d.aof", os.Getpid()))
	f, err := os.OpenFile(a.waitFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		s.log.Error("aof: cannot turn on", "err", err)
		return errors.New(msgAOFOnFailed)
	}
	a.file.Store(f)
	a.waiting = true
	a.install()
	if err := a.startRewrite(); err != nil { // a new aof runs no rewrite: cannot fail
		s.log.Error("aof: cannot start the rewrite", "err", err)
	}
	a.run()
	s.log.Info("AOF turned on at run time; writing the first file", "path", a.path)
	return nil
}

// switchedOn ends the waiting once the first rewrite's file is the AOF. Runs on the
// executor.
func (a *aof) switchedOn() {
	if !a.waiting {
		return
	}
	a.waiting = false
	os.Remove(a.waitFile) // closed by the writer's switch
	a.s.log.Info("AOF is on: the first rewrite is done", "path", a.path)
}

// stopAppendOnly flushes, fsyncs and closes the file and unhooks the AOF. Runs on
// the executor; waits for the writer.
func (a *aof) stopAppendOnly() {
	s := a.s
	a.closed = true
	a.flush()
	a.abortRewrite()
	s.holdReply = nil
	s.hooks = dropHook(s.hooks, a.feed)
	s.wrapHooks = dropHook(s.wrapHooks, a.wrap)
	s.configHooks = dropHook(s.configHooks, a.configChanged)
	s.closeHooks = dropHook(s.closeHooks, a.close)
	s.persistenceInfo = nil
	s.aof = nil
	s.setWriteHooks()
	a.stopWriter()
	if a.waiting {
		os.Remove(a.waitFile)
	}
	s.log.Info("AOF turned off")
}

// dropHook removes h, a method value of the (only) aof, from hooks. Method values of
// one method share their code pointer; no other listener uses the aof's methods.
func dropHook[F any](hooks []F, h F) []F {
	p := reflect.ValueOf(h).Pointer()
	out := hooks[:0]
	for _, x := range hooks {
		if reflect.ValueOf(x).Pointer() != p {
			out = append(out, x)
		}
	}
	clear(hooks[len(out):])
	return out
}
