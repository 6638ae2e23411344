package httpapi

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"waitroom/queue"
)

// Queues created at run time. The admin API writes them to the store's
// registry (queue.Register); Run, on every instance, reads the registry's
// version each period and starts or stops queues when it moved, so a queue
// created or deleted through any instance is served, or gone, everywhere
// within one period. A queue given by an instance's flags is never touched
// by the registry.

// Run serves the registry's queues until ctx is done, then stops their
// admission loops. Without Config.Runtime it only waits for ctx.
func (s *Server) Run(ctx context.Context) error {
	if s.cfg.Runtime == nil || s.cfg.Store == nil {
		<-ctx.Done()
		return nil
	}
	s.runMu.Lock()
	s.runCtx = ctx
	s.runMu.Unlock()
	defer s.stopRuntime()
	t := time.NewTicker(s.cfg.Runtime.Period)
	defer t.Stop()
	for {
		if err := s.reconcile(ctx, false); err != nil && ctx.Err() == nil {
			s.log.Debug("registry check failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// reconcile brings the table in line with the registry: when its version
// moved (or always with force), the registered queues this instance does not
// serve start and the run-time queues no longer registered stop.
func (s *Server) reconcile(ctx context.Context, force bool) error {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.runCtx == nil {
		return errors.New("httpapi: Run is not running")
	}
	v, err := queue.RegistryVersion(ctx, s.cfg.Store)
	if err != nil {
		return err
	}
	old := s.table()
	if v == old.version && !force {
		return nil
	}
	specs, err := queue.Registered(ctx, s.cfg.Store)
	if err != nil {
		return err
	}
	next := &roomTable{rooms: map[string]*room{}, version: v}
	var stopped []*room
	for name, rm := range old.rooms {
		if _, still := specs[name]; rm.runtime && !still {
			stopped = append(stopped, rm)
			continue
		}
		next.rooms[name] = rm
	}
	for name, spec := range specs {
		if next.rooms[name] != nil {
			continue // served already, or one of this instance's own queues
		}
		rm, err := s.startRuntime(name, spec)
		if err != nil {
			s.log.Warn("cannot serve a registered queue", "queue", name, "err", err)
			continue
		}
		next.rooms[name] = rm
	}
	for name := range next.rooms {
		next.names = append(next.names, name)
	}
	sort.Strings(next.names)
	s.tab.Store(next)
	for _, rm := range stopped {
		rm.stop()
		s.log.Info("queue deleted", "queue", rm.eng.Name())
	}
	return nil
}

// startRuntime builds a registered queue's room and starts its admission loop.
func (s *Server) startRuntime(name string, spec queue.Spec) (*room, error) {
	eng, err := s.cfg.Runtime.NewEngine(name, spec)
	if err != nil {
		return nil, err
	}
	rm, err := s.newRoom(Queue{Engine: eng, TargetURL: spec.TargetURL})
	if err != nil {
		return nil, err
	}
	rm.runtime = true
	ctx, cancel := context.WithCancel(s.runCtx)
	var done sync.WaitGroup
	done.Add(1)
	go func() {
		defer done.Done()
		if err := eng.Run(ctx); err != nil {
			s.log.Error("admission loop stopped", "queue", name, "err", err)
		}
	}()
	rm.stop = func() { cancel(); done.Wait() }
	s.runWG.Add(1)
	go func() { <-ctx.Done(); done.Wait(); s.runWG.Done() }()
	if f := s.cfg.Runtime.OnEngine; f != nil {
		f(eng)
	}
	s.log.Info("queue created", "queue", name, "strategy", eng.Strategy())
	return rm, nil
}

// stopRuntime waits for the run-time queues' loops (their contexts derive
// from Run's, which is done).
func (s *Server) stopRuntime() {
	s.runWG.Wait()
	s.runMu.Lock()
	s.runCtx = nil
	s.runMu.Unlock()
}
