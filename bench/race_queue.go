package bench

import "context"

// raceQueue runs p.Instances optimistic admission loops against t.
// It returns the figures, or why it was not run.
func (e *Env) raceQueue(ctx context.Context, t *Target, p RaceParams) (*QueueRace, string) {
	return nil, "the queue engine is not merged yet"
}
