package queue

// The waiting room on a store with maxmemory: every key the queue writes per
// ticket or per user has a TTL, the queue's own keys have none, so under
// volatile-lru a flood of joins past the limit evicts dead tickets' keys and
// never the queue's sets or a live user's ticket. Needs the in-process MyRedis
// (package waitroom/myredis) for its injectable clock; the key audit also runs
// on redis-server when it is installed.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// keyLife is one line of the key layout (keys.go, README.md): a key name
// pattern under the queue's prefix, and whether the key carries a TTL.
type keyLife struct {
	pattern *regexp.Regexp
	ttl     bool
}

// queueKeyLayout is the documented layout, for the audit.
var queueKeyLayout = []keyLife{
	{regexp.MustCompile(`^waiting$`), false},
	{regexp.MustCompile(`^expiry$`), false},
	{regexp.MustCompile(`^active$`), false},
	{regexp.MustCompile(`^seq$`), false},
	{regexp.MustCompile(`^settings$`), false},
	{regexp.MustCompile(`^admitted$`), false},
	{regexp.MustCompile(`^rate$`), false},
	{regexp.MustCompile(`^hist$`), false},
	{regexp.MustCompile(`^codes$`), false},
	{regexp.MustCompile(`^pre$`), false},
	{regexp.MustCompile(`^leader$`), true},
	{regexp.MustCompile(`^round:.+$`), true},
	{regexp.MustCompile(`^pow:.+$`), true},
	{regexp.MustCompile(`^t:[0-9a-f]+$`), true},
	{regexp.MustCompile(`^user:.+$`), true},
}

// auditKeys checks every key of queue q against the layout: known, and with
// a TTL exactly when the layout says so. It returns how many keys of each
// pattern it saw.
func auditKeys(t *testing.T, rdb *redis.Client, q string) map[string]int {
	t.Helper()
	prefix := newKeys(q).prefix
	seen := map[string]int{}
	iter := rdb.Scan(bg, 0, prefix+"*", 1000).Iterator()
	for iter.Next(bg) {
		key := iter.Val()
		name := strings.TrimPrefix(key, prefix)
		var life *keyLife
		for i := range queueKeyLayout {
			if queueKeyLayout[i].pattern.MatchString(name) {
				life = &queueKeyLayout[i]
				break
			}
		}
		if life == nil {
			t.Errorf("key %s is not in the documented layout", key)
			continue
		}
		seen[life.pattern.String()]++
		ttl, err := rdb.PTTL(bg, key).Result()
		require.NoError(t, err)
		if ttl == -2*time.Nanosecond { // gone between SCAN and PTTL
			continue
		}
		if has := ttl > 0; has != life.ttl {
			t.Errorf("key %s: PTTL %v, the layout says TTL %v", key, ttl, life.ttl)
		}
	}
	require.NoError(t, iter.Err())
	return seen
}

// TestEveryTicketKeyHasTTL walks tickets through every step of their life
// under every strategy (join with and without a user, bypass code, pre-queue
// and draw, poll, admission, enter, heartbeat, leave, release, expiry, proof
// of work) and audits the store after each stage: each per-ticket and
// per-user key has a TTL, each queue key is documented and has none.
func TestEveryTicketKeyHasTTL(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, s := range Strategies {
			t.Run(string(s), func(t *testing.T) {
				needEval(t, tg, s)
				rdb := tg.client(4)
				defer rdb.Close()
				q := testQueue(t)
				e := newEngine(t, rdb, q, Options{Strategy: s, MarkRounds: true,
					Defaults: Settings{Slot: 2, TicketTTL: 300 * time.Millisecond, Session: time.Minute}})
				seen := map[string]int{}
				add := func(m map[string]int) {
					for k, v := range m {
						seen[k] += v
					}
				}
				// scheduled: joins go to the pre-queue
				at := time.Now().Add(400 * time.Millisecond)
				_, err := e.SetSettingFields(bg, SettingsPatch{OpensAt: &at})
				require.NoError(t, err)
				pre, err := e.Join(bg, "early")
				require.NoError(t, err)
				require.Equal(t, StatePreQueue, pre.State)
				add(auditKeys(t, rdb, q))
				for time.Now().Before(at) {
					time.Sleep(20 * time.Millisecond)
				}
				var tickets []string
				for i := range 5 {
					st, err := e.Join(bg, "u"+strconv.Itoa(i))
					require.NoError(t, err)
					tickets = append(tickets, st.Ticket)
				}
				anon, err := e.Join(bg, "")
				require.NoError(t, err)
				codes, err := e.IssueCodes(bg, 1, 2)
				require.NoError(t, err)
				_, err = e.JoinCode(bg, "coder", codes[0])
				require.NoError(t, err)
				ch, _ := e.Challenge(1)
				require.NoError(t, e.CheckPoW(bg, ch, solvePoW(t, ch, 1), 1))
				add(auditKeys(t, rdb, q))
				_, err = e.Round(bg)
				require.NoError(t, err)
				_, err = e.Statuses(bg, append([]string{pre.Ticket, anon.Ticket}, tickets...))
				require.NoError(t, err)
				// enter and heartbeat whoever is admitted; one leaves, one is released
				for _, id := range append([]string{pre.Ticket}, tickets...) {
					st, err := e.Status(bg, id)
					require.NoError(t, err)
					if st.State == StateAdmitted {
						sess, _, err := e.Enter(bg, st.Pass)
						require.NoError(t, err)
						_, err = e.Heartbeat(bg, sess)
						require.NoError(t, err)
					}
				}
				add(auditKeys(t, rdb, q))
				_, err = e.Leave(bg, tickets[3])
				require.NoError(t, err)
				_, err = e.Release(bg, tickets[4])
				require.NoError(t, err)
				add(auditKeys(t, rdb, q))
				// the rest stop polling and expire: tombstones
				time.Sleep(400 * time.Millisecond)
				_, err = e.Round(bg)
				require.NoError(t, err)
				add(auditKeys(t, rdb, q))
				for _, p := range []string{`^t:[0-9a-f]+$`, `^user:.+$`, `^waiting$`, `^active$`, `^settings$`, `^pow:.+$`} {
					require.Positive(t, seen[p], "the walk never wrote a key %s", p)
				}
			})
		}
	})
}

// solvePoW finds a solution of challenge with bits leading zero bits.
func solvePoW(t *testing.T, challenge string, bits int) string {
	for i := 0; i < 1<<20; i++ {
		sol := strconv.Itoa(i)
		if LeadingZeroBits(challenge, sol) >= bits {
			return sol
		}
	}
	t.Fatal("no proof-of-work solution found")
	return ""
}

// storeClock is the in-process MyRedis's clock: TIME in the scripts, TTLs
// and the LRU clock follow it.
type storeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *storeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *storeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// liveUser is a user who keeps their page open: polls every tick, enters
// when admitted, heartbeats for a few ticks and leaves.
type liveUser struct {
	name     string
	ticket   string
	position int64 // last position seen while waiting
	session  string
	beats    int
	done     bool
}

// TestJoinFloodUnderVolatileLRU: three instances of the queue on a MyRedis
// with a small maxmemory and volatile-lru. Live users join (some before, some
// during the flood), poll every second, enter when admitted, heartbeat and
// leave; a flood of joins that never poll again goes far past the limit.
// Checked: every evicted key (keyspace event "evicted") is a flood ticket's
// or flood user's key; the queue's keys without TTL are all there; every live
// user keeps their place (positions never go up), is admitted, enters once
// and leaves; active never passes the slot; used_memory stays within one
// command of maxmemory.
func TestJoinFloodUnderVolatileLRU(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of joins")
	}
	clk := &storeClock{now: time.Now()}
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{}, myredis.WithClock(clk))
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 16, MaxRetries: -1,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	defer rdb.Close()
	q := testQueue(t)
	k := newKeys(q)
	set := Settings{Slot: 20, TicketTTL: 20 * time.Second, Session: 10 * time.Second, MaxSession: time.Minute}
	var engines []*Engine
	for i := range 3 {
		engines = append(engines, newEngine(t, rdb, q, Options{Strategy: Atomic,
			InstanceID: "i" + strconv.Itoa(i), Defaults: set}))
	}
	// the limit: what the store holds now plus 3 MB, well under what the
	// flood's keys take (about 10 MB without eviction)
	used := infoInt(t, rdb, "used_memory")
	limit := used + 3<<20
	require.NoError(t, rdb.ConfigSet(bg, "maxmemory", strconv.FormatInt(limit, 10)).Err())
	require.NoError(t, rdb.ConfigSet(bg, "maxmemory-policy", "volatile-lru").Err())
	require.NoError(t, rdb.ConfigSet(bg, "notify-keyspace-events", "Ee").Err())
	// no time limit on one command's eviction (Redis's default stops after
	// 500 us and goes on between commands: a loaded machine would then see
	// the limit passed by more than one script, as Redis would)
	require.NoError(t, rdb.ConfigSet(bg, "maxmemory-eviction-tenacity", "100").Err())
	evicted := watchEvictions(t, addr)

	var users []*liveUser
	for i := range 40 {
		users = append(users, &liveUser{name: "live-" + strconv.Itoa(i)})
	}
	join := func(u *liveUser, e *Engine) {
		st, err := e.Join(bg, u.name)
		require.NoError(t, err, "join of %s", u.name)
		u.ticket, u.position = st.Ticket, st.Position
	}
	for i, u := range users {
		join(u, engines[i%3])
	}
	var (
		floodMu      sync.Mutex
		floodTickets = map[string]bool{}
		floodJoins   int
	)
	const floodTicks, floodPerTick, maxTicks = 60, 400, 200
	maxUsed, maxData := int64(0), int64(0)
	for tick := 0; tick < maxTicks; tick++ {
		clk.Advance(time.Second)
		if tick < floodTicks {
			floodJoins += flood(t, engines, tick, floodPerTick, &floodMu, floodTickets)
		}
		if tick >= 10 && tick < 30 { // live users who join in the middle of the flood
			u := &liveUser{name: "late-" + strconv.Itoa(tick)}
			join(u, engines[tick%3])
			users = append(users, u)
		}
		for _, e := range engines {
			_, err := e.Round(bg)
			require.NoError(t, err)
		}
		left := 0
		for i, u := range users {
			if !u.done {
				stepUser(t, engines[(i+tick)%3], u)
				left++
			}
		}
		requireLiveKeys(t, rdb, k, users)
		st, err := engines[0].Stats(bg)
		require.NoError(t, err)
		require.LessOrEqual(t, st.Active, int64(set.Slot), "tick %d: active over the slot", tick)
		m := memorySample(t, rdb)
		maxUsed, maxData = max(maxUsed, m.used), max(maxData, m.used-m.clients)
		// eviction runs before each command, so the keys stay within one
		// script of the limit; client buffers read meanwhile (a command in
		// each connection's query buffer) come on top, as in Redis
		require.LessOrEqual(t, m.used-m.clients, limit+oneScript, "tick %d: keys past maxmemory", tick)
		require.LessOrEqual(t, m.used, limit+oneScript*m.connected, "tick %d: used_memory past maxmemory", tick)
		if left == 0 && tick >= floodTicks {
			break
		}
	}
	for _, u := range users {
		require.True(t, u.done, "live user %s never got through (ticket %s)", u.name, u.ticket)
	}
	// the queue's keys without TTL are all there
	for _, key := range []string{k.waiting, k.expiry, k.active, k.seq, k.settings, k.admitted, k.rate} {
		n, err := rdb.Exists(bg, key).Result()
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "queue key %s", key)
	}
	got, err := engines[0].Settings(bg)
	require.NoError(t, err)
	require.Equal(t, set.Slot, got.Slot)
	require.Equal(t, set.TicketTTL, got.TicketTTL)

	names := evicted()
	nEvicted := infoInt(t, rdb, "evicted_keys")
	t.Logf("%d flood joins, %d live users; maxmemory %d (+3 MB), used_memory max %d (%+d), without client buffers %d (%+d); %d keys evicted (%d events)",
		floodJoins, len(users), limit, maxUsed, maxUsed-limit, maxData, maxData-limit, nEvicted, len(names))
	require.Positive(t, nEvicted, "the flood never reached maxmemory")
	// what went: the flood's keys, and the tombstones of live users who left
	// (checked each tick: no live user's key went while the user was there)
	left := map[string]bool{}
	for _, u := range users {
		left[u.ticket] = true
	}
	floodMu.Lock()
	defer floodMu.Unlock()
	floodKeys := 0
	for _, key := range names {
		name := strings.TrimPrefix(key, k.prefix)
		id := strings.TrimPrefix(name, "t:")
		switch {
		case strings.HasPrefix(name, "t:") && floodTickets[id], strings.HasPrefix(name, "user:flood-"):
			floodKeys++
		case strings.HasPrefix(name, "t:") && left[id]:
		default:
			t.Errorf("evicted %s: neither a flood ticket's key nor a finished ticket's", key)
		}
	}
	t.Logf("evicted: %d keys of the flood, %d tombstones of users who left", floodKeys, len(names)-floodKeys)
}

// requireLiveKeys checks that every live user still in the room has their
// ticket's hash and user key.
func requireLiveKeys(t *testing.T, rdb *redis.Client, k keys, users []*liveUser) {
	t.Helper()
	p := rdb.Pipeline()
	var cmds []*redis.IntCmd
	var which []string
	for _, u := range users {
		if !u.done {
			cmds = append(cmds, p.Exists(bg, k.ticket(u.ticket)), p.Exists(bg, k.user(u.name)))
			which = append(which, k.ticket(u.ticket), k.user(u.name))
		}
	}
	_, err := p.Exec(bg)
	require.NoError(t, err)
	for i, c := range cmds {
		require.EqualValues(t, 1, c.Val(), "the key %s of a user still in the room is gone", which[i])
	}
}

// flood joins n users who never come back, spread over the instances, and
// notes their tickets.
func flood(t *testing.T, engines []*Engine, tick, n int, mu *sync.Mutex, tickets map[string]bool) int {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				st, err := engines[i%len(engines)].Join(bg, fmt.Sprintf("flood-%d-%d", tick, i))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				tickets[st.Ticket] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("flood join: %v", err)
	}
	return n
}

// stepUser is one poll of a live user's page: waiting (the position never
// goes up), admitted (enter), in a session (heartbeat, and after three leave).
// Anything else means the user was lost.
func stepUser(t *testing.T, e *Engine, u *liveUser) {
	t.Helper()
	if u.session != "" {
		if u.beats == 3 {
			ok, err := e.ReleaseSession(bg, u.session)
			require.NoError(t, err)
			require.True(t, ok, "%s: the session was gone at release", u.name)
			u.done = true
			return
		}
		_, err := e.Heartbeat(bg, u.session)
		require.NoError(t, err, "%s: heartbeat %d", u.name, u.beats)
		u.beats++
		return
	}
	st, err := e.Status(bg, u.ticket)
	require.NoError(t, err)
	switch st.State {
	case StateWaiting:
		require.LessOrEqual(t, st.Position, u.position, "%s: position went up", u.name)
		u.position = st.Position
	case StateAdmitted:
		sess, _, err := e.Enter(bg, st.Pass)
		require.NoError(t, err, "%s: enter", u.name)
		u.session = sess
	default:
		t.Fatalf("live user %s lost: %+v", u.name, st)
	}
}

// watchEvictions collects the keys the store evicts (keyspace event
// "evicted"); the returned function stops and gives them.
func watchEvictions(t *testing.T, addr string) func() []string {
	c := redis.NewClient(&redis.Options{Addr: addr})
	ps := c.Subscribe(bg, "__keyevent@0__:evicted")
	_, err := ps.Receive(bg)
	require.NoError(t, err)
	var keys []string
	end := make(chan struct{})
	go func() {
		defer close(end)
		for {
			m, err := ps.Receive(bg)
			if err != nil {
				return
			}
			switch m := m.(type) {
			case *redis.Message:
				keys = append(keys, m.Payload)
			case *redis.Pong:
				if m.Payload == "end" {
					return
				}
			}
		}
	}()
	t.Cleanup(func() { ps.Close(); c.Close() })
	return func() []string {
		// every eviction's event so far is sent before the PING's reply
		require.NoError(t, ps.Ping(bg, "end"))
		select {
		case <-end:
		case <-time.After(time.Minute):
			t.Fatal("the evicted events never ended with the PONG")
		}
		return keys
	}
}

// oneScript bounds what one call of the queue's script adds to used_memory
// (a join: two sorted-set members, a hash, a user key).
const oneScript = 2048

type memSample struct{ used, clients, connected int64 }

// memorySample reads used_memory, mem_clients_normal and connected_clients
// from one INFO reply.
func memorySample(t *testing.T, rdb *redis.Client) memSample {
	t.Helper()
	info, err := rdb.Info(bg, "all").Result()
	require.NoError(t, err)
	return memSample{infoField(t, info, "used_memory"), infoField(t, info, "mem_clients_normal"),
		infoField(t, info, "connected_clients")}
}

// infoInt reads one INFO field as an integer.
func infoInt(t *testing.T, rdb *redis.Client, name string) int64 {
	t.Helper()
	info, err := rdb.Info(bg, "all").Result()
	require.NoError(t, err)
	return infoField(t, info, name)
}

func infoField(t *testing.T, info, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("INFO has no %s", name)
	return 0
}
