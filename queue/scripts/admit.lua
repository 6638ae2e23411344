-- One admission round of the atomic strategy, run as one command.
--
-- KEYS[1] waiting   KEYS[2] active   KEYS[3] settings
-- KEYS[4] admitted  KEYS[5] rate
-- ARGV[1] now (unix ms)  ARGV[2] key prefix "wr:{q}:"  ARGV[3] now (unix s)
-- ARGV[4] most dead tickets to drop
--
-- Liveness and pass keys are built from the prefix; they share the queue's
-- hash tag, so they live in the same cluster slot as KEYS.
--
-- Returns {reclaimed, dropped, admitted_total, id1, arrival1, id2, arrival2, ...}.
local now = tonumber(ARGV[1])
local prefix = ARGV[2]
local max_drops = tonumber(ARGV[4])

local reclaimed = redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)

local slot = tonumber(redis.call('HGET', KEYS[3], 'slot'))
local session = tonumber(redis.call('HGET', KEYS[3], 'session_ms'))
if not slot or not session then
  return redis.error_reply('ERR queue settings missing')
end

local free = slot - redis.call('ZCARD', KEYS[2])
local out = {reclaimed, 0, 0}
local dropped = 0
local n = 0
local deadline = now + session
while free > 0 do
  local head = redis.call('ZPOPMIN', KEYS[1])
  if #head == 0 then break end
  local id = head[1]
  if redis.call('EXISTS', prefix .. 'alive:' .. id) == 1 then
    redis.call('ZADD', KEYS[2], deadline, id)
    redis.call('SET', prefix .. 'pass:' .. id, '1', 'PX', session)
    out[#out + 1] = id
    out[#out + 1] = head[2]
    n = n + 1
    free = free - 1
  else
    dropped = dropped + 1
    if dropped >= max_drops then break end
  end
end

local total = 0
if n > 0 then
  total = redis.call('INCRBY', KEYS[4], n)
  redis.call('HINCRBY', KEYS[5], ARGV[3], n)
end
out[2] = dropped
out[3] = total
return out
