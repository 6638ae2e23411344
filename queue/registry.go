package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The registry of queues created at run time (issue 19). Queues given by
// flags exist on the instances that were started with them; a queue created
// through the admin API is written here, and every instance serves it from
// its next check (each period it reads the version, one GET, and reloads the
// list only when the version moved).
//
//	wr:{registry}:queues   hash    queue name -> Spec as JSON        no TTL
//	wr:{registry}:version  string  bumped (INCR) by every change     no TTL
const (
	registryQueues  = "wr:{registry}:queues"
	registryVersion = "wr:{registry}:version"
)

// Spec is what an instance needs to serve a queue created at run time
// beyond its settings (which live in the queue's own settings hash).
type Spec struct {
	Strategy  Strategy `json:"strategy,omitempty"` // default: the instance's
	TargetURL string   `json:"target_url,omitempty"`
}

// ErrExists: a queue of that name is registered already.
var ErrExists = errors.New("queue: a queue of that name exists")

// ValidName tells whether name can name a queue.
func ValidName(name string) bool { return queueName.MatchString(name) }

// Register adds a queue to the registry; ErrExists when one of that name is
// there.
func Register(ctx context.Context, rdb redis.UniversalClient, name string, spec Spec) error {
	if !ValidName(name) {
		return fmt.Errorf("%w: bad queue name %q", ErrBadSettings, name)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	ok, err := rdb.HSetNX(ctx, registryQueues, name, b).Result()
	if err != nil {
		return err
	}
	if !ok {
		return ErrExists
	}
	return rdb.Incr(ctx, registryVersion).Err()
}

// Unregister removes a queue from the registry and deletes its keys (waiting
// line, pre-queue, sessions, settings, counters, bypass codes); its tickets'
// own keys run out by their TTLs. It reports whether the queue was
// registered.
func Unregister(ctx context.Context, rdb redis.UniversalClient, name string) (bool, error) {
	n, err := rdb.HDel(ctx, registryQueues, name).Result()
	if err != nil || n == 0 {
		return false, err
	}
	if err := rdb.Incr(ctx, registryVersion).Err(); err != nil {
		return true, err
	}
	k := newKeys(name)
	return true, rdb.Del(ctx, k.waiting, k.expiry, k.active, k.seq, k.settings, k.leader, k.admitted, k.rate,
		k.prefix+"pre", k.prefix+"codes", k.prefix+"hist").Err()
}

// RegistryVersion is the registry's version: it changes with every Register
// and Unregister.
func RegistryVersion(ctx context.Context, rdb redis.UniversalClient) (int64, error) {
	v, err := rdb.Get(ctx, registryVersion).Result()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// Registered lists the queues of the registry.
func Registered(ctx context.Context, rdb redis.UniversalClient) (map[string]Spec, error) {
	m, err := rdb.HGetAll(ctx, registryQueues).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]Spec, len(m))
	for name, v := range m {
		var sp Spec
		if json.Unmarshal([]byte(v), &sp) != nil || !ValidName(name) {
			continue // not ours to serve
		}
		out[name] = sp
	}
	return out, nil
}
