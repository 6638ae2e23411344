-- Every step of a ticket's life, and the atomic strategy's admission round,
-- each run as one command. The store's clock (TIME) decides every deadline,
-- so instances whose clocks disagree still agree on who is alive.
--
-- KEYS[1] settings  KEYS[2] waiting  KEYS[3] active  KEYS[4] expiry
-- KEYS[5] seq       KEYS[6] admitted KEYS[7] rate
-- ARGV[1] key prefix "wr:{q}:"
-- ARGV[2..5] this instance's defaults: slot, session_ms, ticket_ttl_ms, max_session_ms
--            (written back when the store lost its settings)
-- ARGV[6] operation, ARGV[7..] its arguments (see the dispatch at the end)
--
-- Per-ticket keys are built from the prefix; they share the queue's hash tag,
-- so they live in the same cluster slot as KEYS.
--   <prefix>t:<id>     hash  u user id, n admission nonce, a admitted at (ms),
--                            e entered at (ms), k the enter's idempotency key,
--                            x end reason. Lives 2 ticket TTLs
--                            while waiting (refreshed by polls), session + 1 ticket
--                            TTL once admitted, max(ticket TTL, 1 min) as a tombstone once over
--   <prefix>user:<u>   string ticket of user u; same life as the ticket's hash
local prefix = ARGV[1]
-- departed collects the arrival numbers of the waiting tickets this call
-- ended; round, prepare and release return them, for the round events
-- (subscribers count them off the positions of the pages behind them).
local departed = {}
local names = {'slot', 'session_ms', 'ticket_ttl_ms', 'max_session_ms'}

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- settings reads the queue's settings; a field the store lost (restarted
-- empty) is written back from this instance's defaults.
local function settings()
  local vals = redis.call('HMGET', KEYS[1], unpack(names))
  local s = {}
  for i, n in ipairs(names) do
    local v = tonumber(vals[i])
    if not v then
      v = tonumber(ARGV[1 + i])
      redis.call('HSETNX', KEYS[1], n, v)
    end
    s[n] = v
  end
  -- The queue's state and schedule (issue 19): absent fields mean an open
  -- queue without a schedule.
  local c = redis.call('HMGET', KEYS[1], 'state', 'opens_at_ms', 'closes_at_ms', 'draw_seed', 'drawn_ms')
  s.state = c[1] or 'open'
  s.opens_at = tonumber(c[2]) or 0
  s.closes_at = tonumber(c[3]) or 0
  s.draw_seed = c[4] or ''
  s.drawn = tonumber(c[5]) or 0
  return s
end

-- qstate is the queue's state at now: closed (by an admin, or closes_at
-- passed), scheduled (before opens_at: joins go to the pre-queue), paused
-- (nobody admitted, everyone keeps their place) or open.
local function qstate(s, now)
  if s.state == 'closed' or (s.closes_at > 0 and now >= s.closes_at) then return 'closed' end
  if s.opens_at > 0 and now < s.opens_at then return 'scheduled' end
  if s.state == 'paused' then return 'paused' end
  return 'open'
end

local function tkey(id) return prefix .. 't:' .. id end

-- keep sets the life of a ticket's hash and of its user key.
local function keep(id, ms)
  if ms < 1 then ms = 1 end
  local h = tkey(id)
  redis.call('PEXPIRE', h, ms)
  local u = redis.call('HGET', h, 'u')
  if u and u ~= '' then
    local uk = prefix .. 'user:' .. u
    if redis.call('GET', uk) == id then redis.call('PEXPIRE', uk, ms) end
  end
end

-- keep_at_least makes a ticket's hash and user key live at least ms more,
-- never shortening a longer life (the one a hold gave them, see ops.hold).
local function keep_at_least(id, ms)
  local t = redis.call('PTTL', tkey(id))
  if t >= 0 and t < ms then keep(id, ms) end
end

-- finish ends a ticket for reason: out of every set, a tombstone that tells
-- the reason for a ticket TTL (at least a minute), the user key gone.
local function finish(id, reason, s)
  local arrival = redis.call('ZSCORE', KEYS[2], id)
  if arrival then departed[#departed + 1] = tonumber(arrival) end
  local was = redis.call('ZREM', KEYS[3], id) + redis.call('ZREM', KEYS[2], id) +
    redis.call('ZREM', prefix .. 'pre', id)
  redis.call('ZREM', KEYS[4], id)
  local h = tkey(id)
  local u = redis.call('HGET', h, 'u')
  if u and u ~= '' and redis.call('GET', prefix .. 'user:' .. u) == id then
    redis.call('DEL', prefix .. 'user:' .. u)
  end
  if redis.call('EXISTS', h) == 1 then
    redis.call('HSET', h, 'x', reason)
    redis.call('PEXPIRE', h, math.max(s.ticket_ttl_ms, 60000))
  end
  return was
end

-- sweep ends up to limit waiting tickets whose liveness deadline passed.
local function sweep(now, limit, s)
  local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, limit)
  for _, id in ipairs(dead) do finish(id, 'expired', s) end
  return #dead
end

-- live tells whether ticket id still holds a place (waiting, admitted, or
-- popped by a round in flight).
local function live(id, now)
  local dl = redis.call('ZSCORE', KEYS[3], id)
  if dl then return tonumber(dl) > now end
  if redis.call('ZSCORE', KEYS[2], id) then
    return tonumber(redis.call('ZSCORE', KEYS[4], id) or 0) > now
  end
  local h = tkey(id)
  return redis.call('EXISTS', h) == 1 and not redis.call('HGET', h, 'x') and not redis.call('HGET', h, 'n')
end

-- waited is how long ticket id stood in line until now, in ms: from its join
-- ('j' in its hash), or from the draw for a ticket of the pre-queue; -1 for
-- a ticket without a join time.
local function waited(id, now, s)
  local j = tonumber(redis.call('HGET', tkey(id), 'j'))
  if not j then return -1 end
  return math.max(now - math.max(j, s.drawn), 0)
end

-- admit moves a popped live ticket into the active set as one admission, and
-- returns how long it waited (see waited).
local function admit(id, now, s, nonce)
  local w = waited(id, now, s)
  local deadline = now + math.min(s.session_ms, s.max_session_ms)
  redis.call('ZADD', KEYS[3], deadline, id)
  redis.call('ZREM', KEYS[4], id)
  redis.call('HSET', tkey(id), 'n', nonce, 'a', now)
  keep(id, deadline - now + s.ticket_ttl_ms)
  return w
end

-- The pre-queue (issue 19): <prefix>pre, a sorted set of ticket ids by
-- arrival number, filled while the queue is scheduled. The first script call
-- at or after opens_at shuffles it into the waiting line and records
-- drawn_ms, so the draw happens exactly once, whichever instance gets there
-- first. The shuffle is Fisher-Yates driven by a combined L'Ecuyer generator
-- seeded with draw_seed (drawn from crypto/rand when opens_at was set), so
-- it needs nothing from the store's Lua but arithmetic on doubles.
local function draw(s, now)
  local pre = prefix .. 'pre'
  local ids = redis.call('ZRANGE', pre, 0, -1)
  local a, b = string.match(s.draw_seed, '^(%d+):(%d+)$')
  local s1 = (tonumber(a) or 12345) % 2147483562 + 1
  local s2 = (tonumber(b) or 67890) % 2147483398 + 1
  for i = #ids, 2, -1 do
    s1 = (40014 * s1) % 2147483563
    s2 = (40692 * s2) % 2147483399
    local z = s1 - s2
    if z < 1 then z = z + 2147483562 end
    local j = math.floor((z - 1) / 2147483562 * i) + 1
    ids[i], ids[j] = ids[j], ids[i]
  end
  for _, id in ipairs(ids) do
    local seq = redis.call('INCR', KEYS[5])
    redis.call('ZADD', KEYS[2], seq, id)
    redis.call('ZADD', KEYS[4], now + s.ticket_ttl_ms, id)
    keep(id, 2 * s.ticket_ttl_ms)
  end
  redis.call('DEL', pre)
  redis.call('HSET', KEYS[1], 'drawn_ms', now)
  redis.call('HINCRBY', KEYS[1], 'draws', 1)
  s.drawn = now
  return #ids
end

-- close_out ends up to limit waiting and pre-queue tickets of a closed
-- queue, with reason closed.
local function close_out(limit, s)
  local ids = redis.call('ZRANGE', KEYS[2], 0, limit - 1)
  if #ids < limit then
    for _, id in ipairs(redis.call('ZRANGE', prefix .. 'pre', 0, limit - 1 - #ids)) do ids[#ids + 1] = id end
  end
  for _, id in ipairs(ids) do finish(id, 'closed', s) end
  return #ids
end

local ops = {}

-- join(id, user) -> {id, created(0/1), rank}
-- join_code is a join with a bypass code (issue 19): one use of the code
-- (hash <prefix>codes: r:<code> uses left, u:<code> uses so far, used: all
-- uses), then admitted at once when the queue is open and has a free place,
-- else at the head of the line (ahead of every arrival, bypass joins in
-- their order). -> {id, 1, 0, 'admitted'} | {id, 1, rank, state}
local function join_code(s, now, st, id, user, code)
  local codes = prefix .. 'codes'
  redis.call('HINCRBY', codes, 'r:' .. code, -1)
  redis.call('HINCRBY', codes, 'u:' .. code, 1)
  redis.call('HINCRBY', codes, 'used', 1)
  redis.call('HSET', tkey(id), 'u', user, 'c', code, 'j', now)
  redis.call('PEXPIRE', tkey(id), 2 * s.ticket_ttl_ms)
  if st == 'open' then
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
    if redis.call('ZCARD', KEYS[3]) < s.slot then
      admit(id, now, s, redis.call('INCR', KEYS[6]))
      redis.call('HINCRBY', KEYS[7], math.floor(now / 1000), 1)
      return {id, 1, 0, 'admitted'}
    end
  end
  local seq = redis.call('INCR', KEYS[5])
  redis.call('ZADD', KEYS[2], seq - 1e15, id)
  redis.call('ZADD', KEYS[4], now + s.ticket_ttl_ms, id)
  return {id, 1, redis.call('ZRANK', KEYS[2], id), st}
end

-- join(id, user, code) -> {id, created(0/1), rank, kind}
-- A closed queue answers {'', 0, -1, 'closed'}, a bypass code with no use
-- left {'', 0, -1, 'code'}; a scheduled queue puts the ticket in the
-- pre-queue ({id, 1, pre-queue size - 1, 'p'}) unless it comes with a code;
-- otherwise kind is the queue's state (open or paused), or 'admitted' for a
-- code that found a free place.
function ops.join(s, now)
  local id, user, code = ARGV[7], ARGV[8], ARGV[9] or ''
  local st = qstate(s, now)
  if st == 'closed' then return {'', 0, -1, 'closed'} end
  if code ~= '' and tonumber(redis.call('HGET', prefix .. 'codes', 'r:' .. code) or 0) < 1 then
    return {'', 0, -1, 'code'}
  end
  if user ~= '' then
    local uk = prefix .. 'user:' .. user
    local old = redis.call('GET', uk)
    if old then
      if live(old, now) then return {old, 0, -1, st} end
      redis.call('DEL', uk)
    end
    redis.call('SET', uk, id, 'PX', s.ticket_ttl_ms)
  end
  if code ~= '' then return join_code(s, now, st, id, user, code) end
  local seq = redis.call('INCR', KEYS[5])
  if st == 'scheduled' then
    redis.call('ZADD', prefix .. 'pre', seq, id)
    redis.call('HSET', tkey(id), 'u', user, 'j', now)
    keep(id, s.opens_at - now + 2 * s.ticket_ttl_ms)
    return {id, 1, redis.call('ZCARD', prefix .. 'pre') - 1, 'p'}
  end
  redis.call('ZADD', KEYS[2], seq, id)
  redis.call('ZADD', KEYS[4], now + s.ticket_ttl_ms, id)
  redis.call('HSET', tkey(id), 'u', user, 'j', now)
  redis.call('PEXPIRE', tkey(id), 2 * s.ticket_ttl_ms)
  return {id, 1, redis.call('ZRANK', KEYS[2], id), st}
end

-- status(id...) -> per id {'w', rank, queue state, arrival} | {'p', pre-queue size, opens_at}
-- | {'a', deadline, nonce} | {'x', reason}
local function status1(id, now, s, st, keys_ms)
  local h = tkey(id)
  if redis.call('ZSCORE', prefix .. 'pre', id) then
    if st == 'closed' then
      finish(id, 'closed', s)
      return {'x', 'closed'}
    end
    keep(id, math.max(s.opens_at - now, 0) + 2 * s.ticket_ttl_ms)
    return {'p', redis.call('ZCARD', prefix .. 'pre'), s.opens_at}
  end
  local dl = redis.call('ZSCORE', KEYS[3], id)
  if dl then
    dl = tonumber(dl)
    local n = redis.call('HGET', h, 'n')
    if dl <= now then return {'x', 'session_over'} end
    if n then return {'a', dl, n} end
    return {'w', 0} -- reserved by the optimistic strategy, not confirmed yet
  end
  local rank = redis.call('ZRANK', KEYS[2], id)
  if rank then
    if tonumber(redis.call('ZSCORE', KEYS[4], id) or 0) <= now then
      finish(id, 'expired', s)
      return {'x', 'expired'}
    end
    if st == 'closed' then
      finish(id, 'closed', s)
      return {'x', 'closed'}
    end
    redis.call('ZADD', KEYS[4], 'XX', now + s.ticket_ttl_ms, id)
    keep_at_least(id, keys_ms)
    return {'w', rank, st, tonumber(redis.call('ZSCORE', KEYS[2], id))}
  end
  local x = redis.call('HGET', h, 'x')
  if x then return {'x', x} end
  if redis.call('HGET', h, 'n') then return {'x', 'session_over'} end
  if redis.call('EXISTS', h) == 1 then return {'w', 0} end -- popped by a round in flight
  return {'x', 'not_found'}
end

function ops.status(s, now)
  local out = {}
  local st = qstate(s, now)
  for i = 7, #ARGV do out[#out + 1] = status1(ARGV[i], now, s, st, 2 * s.ticket_ttl_ms) end
  return out
end

-- status_held(keys_ms, id) -> the status of one ticket, as status, whose
-- keys a waiting ticket keeps for at least max(keys_ms, 2 ticket TTLs): the
-- first read of a page that an instance will hold (see hold), so holding it
-- costs no key refresh until half of keys_ms has passed.
function ops.status_held(s, now)
  local st = qstate(s, now)
  return {status1(ARGV[8], now, s, st, math.max(tonumber(ARGV[7]), 2 * s.ticket_ttl_ms))}
end

-- enter(id, nonce, key) -> {'ok', deadline} | {'ok', deadline, 'again'} | {'used'} | {'expired'}
-- key (may be empty) is the caller's idempotency key: an enter that repeats
-- the first one's key is answered 'ok' again (a retry whose first answer was
-- lost), any other enter of a used pass 'used'.
function ops.enter(s, now)
  local id, nonce, key = ARGV[7], ARGV[8], ARGV[9] or ''
  local h = tkey(id)
  local dl = tonumber(redis.call('ZSCORE', KEYS[3], id) or 0)
  if dl <= now or redis.call('HGET', h, 'n') ~= nonce then return {'expired'} end
  if redis.call('HGET', h, 'e') then
    if key ~= '' and redis.call('HGET', h, 'k') == key then return {'ok', dl, 'again'} end
    return {'used'}
  end
  redis.call('HSET', h, 'e', now)
  if key ~= '' then redis.call('HSET', h, 'k', key) end
  return {'ok', dl}
end

-- heartbeat(id, nonce) -> {'ok', deadline, cap} | {'over'}
-- Extends to now + session, never shortens, never past admitted + max_session.
function ops.heartbeat(s, now)
  local id, nonce = ARGV[7], ARGV[8]
  local h = tkey(id)
  local dl = tonumber(redis.call('ZSCORE', KEYS[3], id) or 0)
  if dl <= now or redis.call('HGET', h, 'n') ~= nonce or not redis.call('HGET', h, 'e') then
    return {'over'}
  end
  local cap = tonumber(redis.call('HGET', h, 'a')) + s.max_session_ms
  local nxt = math.min(now + s.session_ms, cap)
  if nxt > dl then
    redis.call('ZADD', KEYS[3], 'XX', nxt, id)
    keep(id, nxt - now + s.ticket_ttl_ms)
    dl = nxt
  end
  return {'ok', dl, cap}
end

-- release(id, nonce, mode) -> {n, departed...}: n is 1 when the ticket held a place, 0 otherwise,
-- -1 when mode is 'ticket' and the ticket was entered (the session token is
-- needed then), -2 when the nonce is not the ticket's current admission.
-- mode: 'any' (trusted caller), 'ticket' (the waiting-room ticket),
-- 'session' (the entered session's token, with its nonce). departed is the
-- ticket's arrival number when it left the waiting line.
function ops.release(s, now)
  local id, nonce, mode = ARGV[7], ARGV[8], ARGV[9]
  local h = tkey(id)
  if mode == 'ticket' and redis.call('HGET', h, 'e') and redis.call('ZSCORE', KEYS[3], id) then
    return {-1}
  end
  if mode == 'session' and redis.call('HGET', h, 'n') ~= nonce then return {-2} end
  local out = {finish(id, 'released', s)}
  for _, a in ipairs(departed) do out[#out + 1] = a end
  return out
end

-- hold(keys_ms, n_keys, id1, id2, ...) -> {now, extended}: an instance keeps
-- the tickets of the pages it holds open alive, all in one call per period
-- (issue 17) instead of one status read per page: every id still waiting gets
-- the liveness deadline now + ticket TTL in ONE ZADD (XX: an id that is no
-- longer waiting is not added back; GT: a deadline is never lowered), and the
-- first n_keys ids' hash and user key live at least max(keys_ms, 2 ticket
-- TTLs) more (the instance asks for that once per half of keys_ms per ticket,
-- so a page left open for an hour does not lose its ticket's hash). A ticket
-- whose page closed, or whose instance died, is no longer held and expires a
-- ticket TTL after its last hold, as after its last poll.
function ops.hold(s, now)
  local keys_ms, nk = math.max(tonumber(ARGV[7]), 2 * s.ticket_ttl_ms), tonumber(ARGV[8])
  local args = {'XX', 'GT', 'CH'}
  local dl = now + s.ticket_ttl_ms
  for i = 9, #ARGV do
    args[#args + 1] = dl
    args[#args + 1] = ARGV[i]
  end
  local n = 0
  if #args > 3 then n = redis.call('ZADD', KEYS[4], unpack(args)) end
  for i = 9, math.min(8 + nk, #ARGV) do
    if redis.call('ZSCORE', KEYS[4], ARGV[i]) then keep_at_least(ARGV[i], keys_ms) end
  end
  return {now, n}
end

-- prepare(max_sweep) -> {now, slot, session_ms, ticket_ttl_ms, max_session_ms, reclaimed, swept, admitting, departed...}
-- The start of a round of the strategies that admit with plain commands.
-- admitting is 0 unless the queue is open (paused, scheduled, closed); a
-- closed queue's waiting tickets are ended here.
function ops.prepare(s, now)
  local reclaimed = redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  local swept = sweep(now, tonumber(ARGV[7]), s)
  local st = qstate(s, now)
  if st == 'closed' then close_out(tonumber(ARGV[7]), s) end
  local out = {now, s.slot, s.session_ms, s.ticket_ttl_ms, s.max_session_ms, reclaimed, swept, st == 'open' and 1 or 0}
  for _, a in ipairs(departed) do out[#out + 1] = a end
  return out
end

-- round(max_drops) -> {now, reclaimed, dropped, session_ms, n_departed, id1, arrival1, nonce1, waited1, ...,
-- departed1, ...}: the admissions, then the arrival numbers of the waiting tickets the round ended.
-- The atomic strategy's whole round: reclaim, sweep dead tickets, pop live
-- heads up to the free places, admit them with their nonces, count.
function ops.round(s, now)
  local max_drops = tonumber(ARGV[7])
  local reclaimed = redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  local dropped = sweep(now, max_drops, s)
  local free = s.slot - redis.call('ZCARD', KEYS[3])
  local st = qstate(s, now)
  if st == 'closed' then close_out(max_drops, s) end
  if st ~= 'open' then free = 0 end
  local out = {now, reclaimed, 0, math.min(s.session_ms, s.max_session_ms), 0}
  local n = 0
  while free > 0 and dropped < max_drops do
    local head = redis.call('ZPOPMIN', KEYS[2])
    if #head == 0 then break end
    local id = head[1]
    if tonumber(redis.call('ZSCORE', KEYS[4], id) or 0) > now then
      local nonce = redis.call('INCR', KEYS[6])
      local w = admit(id, now, s, nonce)
      out[#out + 1] = id
      out[#out + 1] = head[2]
      out[#out + 1] = nonce
      out[#out + 1] = w
      n = n + 1
      free = free - 1
    else
      departed[#departed + 1] = tonumber(head[2]) -- popped already: finish does not see it waiting
      finish(id, 'expired', s)
      dropped = dropped + 1
    end
  end
  if n > 0 then redis.call('HINCRBY', KEYS[7], math.floor(now / 1000), n) end
  out[3] = dropped
  out[5] = #departed
  for _, a in ipairs(departed) do out[#out + 1] = a end
  return out
end

-- add(id1, nonce1, id2, nonce2, ...) -> {now, waited1, waited2, ...}: the
-- naive strategy's add step, which admits what it popped without counting
-- again (that is its overshoot).
function ops.add(s, now)
  local out = {now}
  for i = 7, #ARGV, 2 do out[#out + 1] = admit(ARGV[i], now, s, ARGV[i + 1]) end
  return out
end

-- confirm(id, nonce, arrival) -> {1|0, now, waited}: the optimistic strategy's
-- confirmation of a reservation it counted under the slot. A reservation that
-- ran out meanwhile (a round slower than the session) is not admitted: the
-- user goes back to the queue at their place.
function ops.confirm(s, now)
  local id = ARGV[7]
  local dl = tonumber(redis.call('ZSCORE', KEYS[3], id) or 0)
  if dl <= now then
    redis.call('ZREM', KEYS[3], id)
    redis.call('ZADD', KEYS[2], ARGV[9], id)
    return {0, now, -1}
  end
  local w = waited(id, now, s)
  redis.call('ZREM', KEYS[4], id)
  redis.call('HSET', tkey(id), 'n', ARGV[8], 'a', now)
  keep(id, dl - now + s.ticket_ttl_ms)
  return {1, now, w}
end

-- info() -> {now, queue state, waiting, active, admitted, pre-queue, drawn_ms, draws, bypass uses}
function ops.info(s, now)
  return {now, qstate(s, now), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]),
    tonumber(redis.call('GET', KEYS[6]) or 0), redis.call('ZCARD', prefix .. 'pre'), s.drawn,
    tonumber(redis.call('HGET', KEYS[1], 'draws') or 0),
    tonumber(redis.call('HGET', prefix .. 'codes', 'used') or 0)}
end

-- hist(bucket_s, keep) -> 1 when this call wrote the bucket: the history
-- the admin dashboard draws (issue 19), in the hash <prefix>hist: field =
-- store unix time / bucket_s, value "active waiting admitted_total", written
-- once per bucket by whichever instance comes first; fields older than keep
-- buckets are deleted.
function ops.hist(s, now)
  local size, keep = tonumber(ARGV[7]), tonumber(ARGV[8])
  local h = prefix .. 'hist'
  local b = math.floor(now / 1000 / size)
  local v = redis.call('ZCARD', KEYS[3]) .. ' ' .. redis.call('ZCARD', KEYS[2]) .. ' ' ..
    (redis.call('GET', KEYS[6]) or '0')
  local wrote = redis.call('HSETNX', h, b, v)
  if wrote == 1 and redis.call('HLEN', h) > keep then
    for _, f in ipairs(redis.call('HKEYS', h)) do
      if tonumber(f) == nil or tonumber(f) <= b - keep then redis.call('HDEL', h, f) end
    end
  end
  return wrote
end

local op = ops[ARGV[6]]
if not op then return redis.error_reply('ERR waitroom: unknown operation ' .. tostring(ARGV[6])) end
local s, now = settings(), now_ms()
-- The draw of a scheduled queue happens in the first call at or after opens_at.
if s.opens_at > 0 and s.drawn == 0 and now >= s.opens_at and qstate(s, now) ~= 'closed' then draw(s, now) end
return op(s, now)
