/**
 * The Lua scripts behind RedisLedger. Each runs atomically inside Redis, so a status
 * compare-and-set, its history entry and every index it touches change in one step that no
 * other client can interleave with. Scripts build their keys from the prefix in ARGV[1]; every
 * key of one ledger lives under that prefix on one Redis (for Redis Cluster, put a hash tag in
 * the prefix, e.g. `{lightning}:`, so that all of them share a slot).
 *
 * Keys (P = prefix):
 *   P intent:<id>                  hash: one intent; a null field is an absent field
 *   P token:<callbackToken>        string: the intent id (unique)
 *   P remote:<kind>:<remoteId>     zset by createdAt: intents with that resource
 *   P room:<roomId>                zset by createdAt: open intents of a room
 *   P player:<playerId>            zset by createdAt: open intents of a player
 *   P open                         zset by createdAt: open intents of every kind but match, so
 *                                  that the game's cap (maxOpenPerGame) is one ZCARD (layout 5)
 *   P due                          zset by nextCheckAt: open intents with a nextCheckAt
 *   P unknown                      zset by createdAt: intents in status unknown (layout 2)
 *   P held                         zset by createdAt: payouts in status held (layout 8); a
 *                                  `queued` payout (layout 9) is only in `open` and `due`
 *   P hold:player:<playerId>       zset by createdAt: a player's payouts the approvals' window
 *                                  counts (CreateGuards.hold), member '<ord>|<amount>' (layout 8)
 *   P openkey:<openKey>            string: the id of the open intent that holds the key
 *   P group:<groupId>              zset by createdAt: every intent of a group (a match), kept
 *   P spent:player:<playerId>      zset by createdAt: a budget's payouts, member '<ord>|<amount>'
 *   P spent:room:<roomId>          the same for a room's payouts
 *   P spent:game                   the same for every payout
 *   P seq                          counter: insertion order, the last tie-breaker
 *   P event:<eventId>              string, no TTL: an event id already seen (when, in epoch ms)
 *   P version                      the data layout version
 *
 * The journal (layout 6; layouts 3 to 5 kept an entry as its own hash, in four sorted sets):
 *   P journal:seq                  counter: the entries' seq, dense (each is taken by the write
 *                                  that stores its entry, in the same script)
 *   P journal:<n>                  hash: seq -> one entry, for seqs n*1000 to n*1000+999; an
 *                                  entry is the JSON array [seq, at, intentId, playerId, matchId
 *                                  or null, tag, debit, credit, amount, unit, why]
 *   P intent:<id> field entries    the intent's own entries, 'tag:seq' joined by ',' in seq
 *                                  order: its index, and what refuses a tag journaled twice
 *   P journal:player:<playerId>    zset: the seqs of a player's intents' entries (member = score)
 *   P journal:match:<groupId>      zset: the seqs of a match's intents' entries (member = score)
 *   P balance:<account>            hash: unit -> the account's balance (HINCRBY, int64)
 *   P balance-by-class             hash: '<class>|<unit>' -> the class's balance, summed
 *
 * Why this shape: a script's cost in Redis is mostly its write commands (each is also copied
 * into the AOF) and the keys it creates. A posting costs one field in a hash that holds a
 * thousand entries, a member in its player's (and match's) sorted set, the intent's own hash
 * (written by the move anyway) and its balances: no key of its own. All postings of one write
 * share one INCRBY, one HSET and one ZADD per index.
 *
 * A write's postings come as a block of ARGV (see `postingArgs` in redis.ts): per posting its
 * tag and the JSON text of [tag, debit, credit, amount, unit, why] without the brackets, then
 * each balance it changes with the bound its current value must not pass for the result to
 * fit a signed 64-bit integer (the highest it may be for a change up, the lowest for one
 * down), and the HINCRBY steps that apply the change, joined by ','. Lua numbers are
 * doubles, so amounts are never added in Lua: the bounds and steps are computed in JS with
 * BigInt, and Lua only compares decimal strings (most by their length alone) and hands them to
 * HINCRBY, which adds exactly.
 * Every check runs before the script's first write: Redis does not roll a script back, and a
 * HINCRBY that overflowed midway would leave half a write behind.
 *
 * Every write stores the random `call` token its caller sent in the intent's hash. ioredis
 * sends a command again after a reconnect when its reply was lost (autoResendUnfulfilledCommands),
 * and Redis with AOF may have applied it before the connection dropped: a create or a move whose
 * hash already carries the same token answers with the row, as the first run would have, instead
 * of 'DUP id' or a lost compare-and-set that would hide the move from the process that made it.
 *
 * Every member of an index of intents is the intent's `ord`: zero-padded createdAt, zero-padded
 * seq, then the id, so that members with equal scores sort by age and then by insertion, as
 * SQLite orders them.
 */

import { PAYOUT_KINDS } from './intent.js';

/** Length of the `ord` prefix before the id: 16 digits, ':', 16 digits, ':'. */
export const ORD_PREFIX_LENGTH = 34;

const HELPERS = `
local p = ARGV[1]
local OPEN = { held = true, queued = true, creating = true, pending = true, unknown = true }
local PAYOUT = { ${PAYOUT_KINDS.map((k) => `${k} = true`).join(', ')} }
local function ikey(id) return p .. 'intent:' .. id end
local function hash(key)
  local flat = redis.call('HGETALL', key)
  local h = {}
  for i = 1, #flat, 2 do h[flat[i]] = flat[i + 1] end
  return h
end
local function idOf(member) return string.sub(member, ${ORD_PREFIX_LENGTH + 1}) end
-- Compares two integers given as canonical decimal strings (no '+', no leading zeros, no '-0').
local function cmpint(a, b)
  local na, nb = string.sub(a, 1, 1) == '-', string.sub(b, 1, 1) == '-'
  if na ~= nb then return na and -1 or 1 end
  local x = na and string.sub(a, 2) or a
  local y = nb and string.sub(b, 2) or b
  local c = 0
  if #x ~= #y then
    c = #x < #y and -1 or 1
  elseif x ~= y then
    c = x < y and -1 or 1
  end
  return na and -c or c
end
-- The postings block starting at ARGV[i], as indexes into ARGV rather than copies (tables cost
-- a script more than the commands it saves them for): .np postings from .at, each its tag then
-- its text; .nc balance changes from .ch, each its key, field, bound and steps. .next is the
-- index after the block.
local function postingsAt(i)
  local np = tonumber(ARGV[i])
  local b = { np = np, at = i + 1, nc = tonumber(ARGV[i + 1 + 2 * np]), ch = i + 2 + 2 * np }
  b.next = b.ch + 4 * b.nc
  return b
end
-- The hash that holds entry seq (a decimal string).
local function bucket(seq)
  local n = string.sub(seq, 1, -4)
  return p .. 'journal:' .. (n == '' and '0' or n)
end
-- Why the block cannot be written for an intent whose entries list is given ('' for none), or
-- nil: 'JOURNALED' when one of its tags is in the list, 'OVERFLOW' when a balance would leave
-- the signed 64-bit range. Reads only.
local function refusal(b, entries)
  if entries ~= '' then
    local list = ',' .. entries
    for k = 0, b.np - 1 do
      if string.find(list, ',' .. ARGV[b.at + 2 * k] .. ':', 1, true) then return 'JOURNALED' end
    end
  end
  for j = b.ch, b.next - 1, 4 do
    local balance = redis.call('HGET', p .. ARGV[j], ARGV[j + 1]) or '0'
    local steps = ARGV[j + 3]
    -- Below 10^18 both (18 characters, a sign included), the sum fits: 2^63 > 9.2 * 10^18. So
    -- the exact comparison, three times the cost of the read, is for the rare large ones.
    if #balance > 18 or #steps > 18 then
      local c = cmpint(balance, ARGV[j + 2])
      if string.sub(steps, 1, 1) == '-' then
        if c < 0 then return 'OVERFLOW' end
      elseif c > 0 then
        return 'OVERFLOW'
      end
    end
  end
  return nil
end
-- Writes the block's entries, stamped with intent n and time at, and moves its balances.
-- Returns the intent's entries list with them, for the caller to store in the intent's hash
-- (nil when the block has no postings).
local function journal(b, n, at)
  local np = b.np
  if np == 0 then return nil end
  local first = redis.call('INCRBY', p .. 'journal:seq', np) - np
  local head = ',' .. at .. ',' .. cjson.encode(n.id) .. ',' .. cjson.encode(n.playerId) .. ',' ..
    (n.groupId and cjson.encode(n.groupId) or 'null') .. ','
  local list = n.entries or ''
  local key, fields, seqs = nil, {}, {}
  for k = 1, np do
    local seq = string.format('%d', first + k)
    -- Seqs of one write are consecutive: they span one hash, or two.
    local into = bucket(seq)
    if into ~= key then
      if key then redis.call('HSET', key, unpack(fields)) end
      key, fields = into, {}
    end
    fields[#fields + 1] = seq
    fields[#fields + 1] = '[' .. seq .. head .. ARGV[b.at + 2 * k - 1] .. ']'
    seqs[#seqs + 1] = seq
    seqs[#seqs + 1] = seq
    list = (list == '' and '' or list .. ',') .. ARGV[b.at + 2 * k - 2] .. ':' .. seq
  end
  redis.call('HSET', key, unpack(fields))
  redis.call('ZADD', p .. 'journal:player:' .. n.playerId, unpack(seqs))
  if n.groupId then redis.call('ZADD', p .. 'journal:match:' .. n.groupId, unpack(seqs)) end
  for j = b.ch, b.next - 1, 4 do
    local key, field, steps = p .. ARGV[j], ARGV[j + 1], ARGV[j + 3]
    if string.find(steps, ',', 1, true) then
      for step in string.gmatch(steps, '[^,]+') do redis.call('HINCRBY', key, field, step) end
    else
      redis.call('HINCRBY', key, field, steps)
    end
  end
  return list
end
-- Moves the intent between indexes to match its new state; o is {} for a new intent.
local function reindex(o, n)
  local m = n.ord
  if o.remoteId ~= n.remoteId then
    if o.remoteId then redis.call('ZREM', p .. 'remote:' .. o.kind .. ':' .. o.remoteId, m) end
    if n.remoteId then redis.call('ZADD', p .. 'remote:' .. n.kind .. ':' .. n.remoteId, n.createdAt, m) end
  end
  local wasOpen = OPEN[o.status or ''] or false
  local isOpen = OPEN[n.status] or false
  -- A match moves no money by itself: the game's cap counts its fees and payouts, not it.
  local counted = n.kind ~= 'match'
  if wasOpen and not isOpen then
    if n.roomId then redis.call('ZREM', p .. 'room:' .. n.roomId, m) end
    redis.call('ZREM', p .. 'player:' .. n.playerId, m)
    if counted then redis.call('ZREM', p .. 'open', m) end
  elseif isOpen and not wasOpen then
    if n.roomId then redis.call('ZADD', p .. 'room:' .. n.roomId, n.createdAt, m) end
    redis.call('ZADD', p .. 'player:' .. n.playerId, n.createdAt, m)
    if counted then redis.call('ZADD', p .. 'open', n.createdAt, m) end
  end
  if o.status ~= n.status then
    if n.status == 'unknown' then
      redis.call('ZADD', p .. 'unknown', n.createdAt, m)
    elseif o.status == 'unknown' then
      redis.call('ZREM', p .. 'unknown', m)
    end
    if n.status == 'held' then
      redis.call('ZADD', p .. 'held', n.createdAt, m)
    elseif o.status == 'held' then
      redis.call('ZREM', p .. 'held', m)
    end
  end
  if wasOpen and not isOpen and n.openKey then
    local okey = p .. 'openkey:' .. n.openKey
    if redis.call('GET', okey) == n.id then redis.call('DEL', okey) end
  end
  if n.groupId and (n.status == 'expired' or n.status == 'failed') and o.status ~= n.status then
    -- Its seat, if it holds one, is given back.
    local seats = p .. 'seats:' .. n.groupId
    if redis.call('HGET', seats, n.playerId) == n.id then redis.call('HDEL', seats, n.playerId) end
  end
  if PAYOUT[n.kind] and (n.status == 'expired' or n.status == 'failed') and o.status ~= n.status then
    -- A payout (PAYOUT_KINDS) that ended unpaid gives its budget back.
    local member = m .. '|' .. n.amount
    redis.call('ZREM', p .. 'spent:player:' .. n.playerId, member)
    if n.roomId then redis.call('ZREM', p .. 'spent:room:' .. n.roomId, member) end
    redis.call('ZREM', p .. 'spent:game', member)
    redis.call('ZREM', p .. 'hold:player:' .. n.playerId, member)
  end
  local oldDue = wasOpen and o.nextCheckAt or nil
  local newDue = isOpen and n.nextCheckAt or nil
  if newDue then
    if newDue ~= oldDue then redis.call('ZADD', p .. 'due', newDue, m) end
  elseif oldDue then
    redis.call('ZREM', p .. 'due', m)
  end
end
`;

/**
 * ARGV: prefix, id, callbackToken ('' for none), padded createdAt, openKey ('' for none),
 * maxOpenPerPlayer ('' for none), maxOpenPerGame ('' for none), number of budgets k, then k
 * triples (spent key suffix, cap, window start), then the approvals' hold (validate.ts
 * holdFor): '1' when its amount holds it ('' otherwise), the player window's limit ('' for
 * none) and start, '1' for the payout queue ('' otherwise), the seat (CreateGuards.seat: its
 * cap, '-' for none, '' for no seat guard; and the holder it replaces, or ''), then the postings
 * block, then
 * field/value pairs (status `creating`: a held payout is written `held`, with no nextCheckAt; a
 * queued one `queued`, due when it says). Every check runs before the first write (the
 * windows' trims aside, which change no sum), so a refusal writes nothing. Returns the
 * stored hash (flat), or 'DUP id', 'DUP callbackToken', 'DUP openKey <holder id>',
 * 'DUP seat <holder id>', 'LIMIT player', 'LIMIT game', 'LIMIT seats', 'OVERFLOW', 'BUDGET <n> <reserved>' (n: the budget's
 * 1-based index).
 * Budget sums are Lua numbers: exact up to 2^53 msats, the largest cap the store accepts.
 */
export const CREATE = `${HELPERS}
local id, token, okey = ARGV[2], ARGV[3], ARGV[5]
local key = ikey(id)
local nbudgets = tonumber(ARGV[8])
local hk = 9 + 3 * nbudgets
local block = postingsAt(hk + 6)
local first = block.next
local n = {}
for i = first, #ARGV, 2 do n[ARGV[i]] = ARGV[i + 1] end
if redis.call('EXISTS', key) == 1 then
  if n.call and redis.call('HGET', key, 'call') == n.call then return redis.call('HGETALL', key) end
  return 'DUP id'
end
if token ~= '' and redis.call('EXISTS', p .. 'token:' .. token) == 1 then
  return 'DUP callbackToken'
end
if okey ~= '' then
  local holder = redis.call('GET', p .. 'openkey:' .. okey)
  if holder and OPEN[redis.call('HGET', ikey(holder), 'status') or ''] then
    return 'DUP openKey ' .. holder
  end
end
if ARGV[6] ~= '' and redis.call('ZCARD', p .. 'player:' .. n.playerId) >= tonumber(ARGV[6]) then
  return 'LIMIT player'
end
if ARGV[7] ~= '' and redis.call('ZCARD', p .. 'open') >= tonumber(ARGV[7]) then
  return 'LIMIT game'
end
-- The player's seat in the group: one hash per group, a field per player holding one.
local seats = nil
if ARGV[hk + 4] ~= '' then
  seats = p .. 'seats:' .. n.groupId
  local holder = redis.call('HGET', seats, n.playerId)
  if holder then
    if holder ~= ARGV[hk + 5] then return 'DUP seat ' .. holder end
  elseif ARGV[hk + 4] ~= '-' and redis.call('HLEN', seats) >= tonumber(ARGV[hk + 4]) then
    return 'LIMIT seats'
  end
end
-- A new intent has no entries yet: only the balances can refuse its postings.
local refused = refusal(block, '')
if refused then return refused end
local amount = tonumber(n.amount)
for b = 1, nbudgets do
  local spent = p .. 'spent:' .. ARGV[6 + 3 * b]
  redis.call('ZREMRANGEBYSCORE', spent, '-inf', ARGV[8 + 3 * b])
  local sum = 0
  for _, m in ipairs(redis.call('ZRANGE', spent, 0, -1)) do
    sum = sum + tonumber(string.match(m, '|(%d+)$'))
  end
  if sum + amount > tonumber(ARGV[7 + 3 * b]) then
    return 'BUDGET ' .. b .. ' ' .. string.format('%.0f', sum)
  end
end
local held = ARGV[hk] == '1'
local hold = p .. 'hold:player:' .. n.playerId
if ARGV[hk + 1] ~= '' then
  redis.call('ZREMRANGEBYSCORE', hold, '-inf', ARGV[hk + 2])
  if not held then
    local sum = 0
    for _, m in ipairs(redis.call('ZRANGE', hold, 0, -1)) do
      sum = sum + tonumber(string.match(m, '|(%d+)$'))
    end
    held = sum + amount > tonumber(ARGV[hk + 1])
  end
end
if held then
  n.status = 'held'
  n.nextCheckAt = nil
  n.history = string.gsub(n.history, '"to":"creating"', '"to":"held"', 1)
elseif ARGV[hk + 3] == '1' then
  n.status = 'queued'
  n.history = string.gsub(n.history, '"to":"creating"', '"to":"queued"', 1)
end
if token ~= '' then redis.call('SET', p .. 'token:' .. token, id) end
if okey ~= '' then redis.call('SET', p .. 'openkey:' .. okey, id) end
local seq = redis.call('INCR', p .. 'seq')
n.ord = ARGV[4] .. ':' .. string.format('%016d', seq) .. ':' .. id
n.seq = tostring(seq)
local args = { 'ord', n.ord, 'seq', n.seq }
for i = first, #ARGV, 2 do
  local v = n[ARGV[i]]
  if v ~= nil then
    args[#args + 1] = ARGV[i]
    args[#args + 1] = v
  end
end
local entries = journal(block, n, n.createdAt)
if entries then
  args[#args + 1] = 'entries'
  args[#args + 1] = entries
end
redis.call('HSET', key, unpack(args))
-- Taken, or passed on from the holder it replaces.
if seats then redis.call('HSET', seats, n.playerId, id) end
for b = 1, nbudgets do
  redis.call('ZADD', p .. 'spent:' .. ARGV[6 + 3 * b], ARGV[4], n.ord .. '|' .. n.amount)
end
if ARGV[hk + 1] ~= '' then redis.call('ZADD', hold, ARGV[4], n.ord .. '|' .. n.amount) end
if n.groupId then redis.call('ZADD', p .. 'group:' .. n.groupId, ARGV[4], n.ord) end
reindex({}, n)
return redis.call('HGETALL', key)
`;

/**
 * The compare-and-set behind `transition` (mode 't') and `update` (mode 'u').
 * ARGV: prefix, id, mode, accepted statuses (comma-separated), target status, now,
 * note fragment for the history entry ('' or ',"note":<json>'), the call token, the move's
 * dueAlso (id, status, at; '' '' '' for none: TransitionOptions.dueAlso), the postings block, number of fields to set, then those field/value pairs, then the fields to clear.
 * Returns the stored hash (flat), or false when the intent is missing or in another status,
 * 'JOURNALED' when one of its postings is already in the journal, 'OVERFLOW' when a balance
 * would leave the signed 64-bit range; in each case nothing is written. A write sent again
 * whose token the hash already carries returns the hash, as its first run did, and writes
 * nothing more (its postings are journaled once).
 */
export const WRITE = `${HELPERS}
local key = ikey(ARGV[2])
local o = hash(key)
if o.status == nil then return false end
if o.call == ARGV[8] then return redis.call('HGETALL', key) end
local accepted = false
for s in string.gmatch(ARGV[4], '[^,]+') do
  if s == o.status then accepted = true end
end
if not accepted then return false end
local block = postingsAt(12)
local refused = refusal(block, o.entries or '')
if refused then return refused end
local n = {}
for k, v in pairs(o) do n[k] = v end
local now = ARGV[6]
local sets = { 'updatedAt', now, 'call', ARGV[8] }
n.updatedAt = now
n.call = ARGV[8]
if ARGV[3] == 't' then
  local to = ARGV[5]
  n.status = to
  n.history = string.sub(o.history, 1, -2) .. ',{"at":' .. now .. ',"from":"' .. o.status ..
    '","to":"' .. to .. '"' .. ARGV[7] .. '}]'
  sets[#sets + 1] = 'status'
  sets[#sets + 1] = to
  sets[#sets + 1] = 'history'
  sets[#sets + 1] = n.history
end
local nset = tonumber(ARGV[block.next])
local last = block.next + 2 * nset
for i = block.next + 1, last, 2 do
  n[ARGV[i]] = ARGV[i + 1]
  sets[#sets + 1] = ARGV[i]
  sets[#sets + 1] = ARGV[i + 1]
end
local dels = {}
for i = last + 1, #ARGV do
  n[ARGV[i]] = nil
  dels[#dels + 1] = ARGV[i]
end
local entries = journal(block, n, now)
if entries then
  n.entries = entries
  sets[#sets + 1] = 'entries'
  sets[#sets + 1] = entries
end
redis.call('HSET', key, unpack(sets))
if #dels > 0 then redis.call('HDEL', key, unpack(dels)) end
reindex(o, n)
if ARGV[9] ~= '' then
  -- dueAlso: the other intent, while in its status, due at ARGV[11] unless already earlier.
  local other = ikey(ARGV[9])
  local t = redis.call('HMGET', other, 'status', 'nextCheckAt', 'ord')
  if t[1] == ARGV[10] and (not t[2] or tonumber(t[2]) > tonumber(ARGV[11])) then
    redis.call('HSET', other, 'nextCheckAt', ARGV[11])
    if OPEN[t[1]] then redis.call('ZADD', p .. 'due', ARGV[11], t[3]) end
  end
end
return redis.call('HGETALL', key)
`;

/**
 * ARGV: prefix, now, limit, owner, leaseUntil. Walks the due index in nextCheckAt order and
 * leases up to \`limit\` intents whose lease is free or expired. Intents leased by someone else
 * stay in the index (their nextCheckAt is unchanged) and are stepped over; there are at most
 * as many of those as checks in flight. Returns a list of flat hashes.
 */
export const CLAIM = `${HELPERS}
local now, limit, owner, untilMs = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
-- ARGV[6] >= 0: queued payouts are claimed apart, up to that many; -1: they count in limit.
local split = tonumber(ARGV[6]) >= 0
local queued = math.max(tonumber(ARGV[6]), 0)
local out = {}
local others, shares = 0, 0
local offset = 0
local batch = math.max((limit + queued) * 2, 64)
while others < limit or shares < queued do
  local members = redis.call('ZRANGEBYSCORE', p .. 'due', '-inf', ARGV[2], 'LIMIT', offset, batch)
  if #members == 0 then break end
  for _, m in ipairs(members) do
    local key = ikey(idOf(m))
    local lease = redis.call('HMGET', key, 'leaseOwner', 'leaseUntil', 'status')
    if not lease[1] or not lease[2] or tonumber(lease[2]) <= now then
      local apart = split and lease[3] == 'queued'
      if (apart and shares < queued) or (not apart and others < limit) then
        if apart then shares = shares + 1 else others = others + 1 end
        redis.call('HSET', key, 'leaseOwner', owner, 'leaseUntil', untilMs)
        out[#out + 1] = redis.call('HGETALL', key)
      end
      if others >= limit and shares >= queued then break end
    end
  end
  offset = offset + #members
end
return out
`;

/** ARGV: prefix, id, owner. Clears the lease only if \`owner\` holds it. */
export const RELEASE = `${HELPERS}
local key = ikey(ARGV[2])
if redis.call('HGET', key, 'leaseOwner') == ARGV[3] then
  redis.call('HDEL', key, 'leaseOwner', 'leaseUntil')
end
return 1
`;

/**
 * Reads in one step, so that an index and the hashes it points at are seen together.
 * ARGV: prefix, mode, key suffix, and for 'all' an optional limit. Mode 'token': the intent a
 * callback token names; 'first': the oldest member of a zset; 'all': every member of a zset
 * (or the oldest \`limit\`), oldest first.
 * Returns a list of flat hashes.
 */
export const READ = `${HELPERS}
local mode, suffix = ARGV[2], ARGV[3]
local ids = {}
if mode == 'token' then
  local id = redis.call('GET', p .. 'token:' .. suffix)
  if id then ids[1] = id end
else
  local stop = mode == 'first' and 0 or ((tonumber(ARGV[4]) or 0) - 1)
  for _, m in ipairs(redis.call('ZRANGE', p .. suffix, 0, stop)) do ids[#ids + 1] = idOf(m) end
end
local out = {}
for _, id in ipairs(ids) do
  local flat = redis.call('HGETALL', ikey(id))
  if #flat > 0 then out[#out + 1] = flat end
end
return out
`;

/**
 * One step of a journal read, in seq order from after seq ARGV[4]: ARGV[2] says where the seqs
 * come from ('all': every entry; 'zset': the index ARGV[3], 'journal:player:<id>' or
 * 'journal:match:<id>'; 'intent': the entries list of intent ARGV[3]). Keeps the entries every
 * given filter holds for (ARGV 7 to 10: playerId, matchId, intentId, since; '' for none; an
 * entry is decoded only when a filter is given), until it has ARGV[5] of them or has looked at
 * ARGV[6] entries: a sparse filter never holds the server for long, the caller asks again from
 * where the step stopped. Returns { the last seq looked at, 1 when the seqs ended (else 0),
 * entries (JSON text)... }.
 */
export const JOURNAL = `${HELPERS}
local mode, from = ARGV[2], ARGV[3]
local want, budget = tonumber(ARGV[5]), tonumber(ARGV[6])
local player, match, intent, since = ARGV[7], ARGV[8], ARGV[9], tonumber(ARGV[10])
local filtered = player ~= '' or match ~= '' or intent ~= '' or since ~= nil
local last = ARGV[4]
local top, listed
if mode == 'all' then
  top = tonumber(redis.call('GET', p .. 'journal:seq') or '0')
elseif mode == 'intent' then
  listed = {}
  for seq in string.gmatch(redis.call('HGET', ikey(from), 'entries') or '', ':(%d+)') do
    listed[#listed + 1] = seq
  end
end
-- The next seqs after last, at most n of them.
local function following(n)
  local seqs = {}
  if mode == 'all' then
    for s = tonumber(last) + 1, math.min(top, tonumber(last) + n) do
      seqs[#seqs + 1] = string.format('%d', s)
    end
  elseif mode == 'zset' then
    seqs = redis.call('ZRANGEBYSCORE', p .. from, '(' .. last, '+inf', 'LIMIT', 0, n)
  else
    for _, s in ipairs(listed) do
      if #seqs < n and tonumber(s) > tonumber(last) then seqs[#seqs + 1] = s end
    end
  end
  return seqs
end
local out = { last, 0 }
local seen, kept = 0, 0
while kept < want and seen < budget do
  local seqs = following(math.min(256, budget - seen))
  if #seqs == 0 then
    out[1], out[2] = last, 1
    return out
  end
  -- One HMGET per hash the seqs span.
  local i = 1
  while i <= #seqs and kept < want do
    local key, j = bucket(seqs[i]), i
    while j < #seqs and bucket(seqs[j + 1]) == key do j = j + 1 end
    local values = redis.call('HMGET', key, unpack(seqs, i, j))
    for k = i, j do
      local v = values[k - i + 1]
      last = seqs[k]
      seen = seen + 1
      local keep = v ~= false
      if keep and filtered then
        local e = cjson.decode(v)
        keep = (player == '' or e[4] == player) and (match == '' or e[5] == match)
          and (intent == '' or e[3] == intent) and (since == nil or e[2] >= since)
      end
      if keep then
        out[#out + 1] = v
        kept = kept + 1
        if kept >= want then break end
      end
    end
    i = j + 1
  end
end
out[1] = last
return out
`;

/**
 * Balances, read in one step so that they are seen at one instant. ARGV: prefix, then account
 * names: each account's hash of unit -> balance (flat); with no names, the class totals.
 */
export const BALANCES = `
local p = ARGV[1]
if #ARGV == 1 then return { redis.call('HGETALL', p .. 'balance-by-class') } end
local out = {}
for i = 2, #ARGV do out[#out + 1] = redis.call('HGETALL', p .. 'balance:' .. ARGV[i]) end
return out
`;

/**
 * Layout 2 -> 3, one intent at a time: writes an intent's opening entries and balances (in
 * the layout this library writes, 5).
 * ARGV: prefix, the layout being migrated from, id, the meta and history the postings were
 * computed from, the migration's time, the postings block. Returns 'DONE' when another
 * process finished the migration (every intent it found then has its opening, and intents
 * written since carry their own postings), 'STALE' when the intent changed since it was read,
 * 'JOURNALED' when its opening is already written (another process migrating at the same
 * time), 'OVERFLOW', or 'OK'.
 */
export const OPENING = `${HELPERS}
if redis.call('GET', p .. 'version') ~= ARGV[2] then return 'DONE' end
local id = ARGV[3]
local f = redis.call('HMGET', ikey(id), 'meta', 'history', 'playerId', 'groupId', 'entries')
if f[1] ~= ARGV[4] or f[2] ~= ARGV[5] then return 'STALE' end
local block = postingsAt(7)
local refused = refusal(block, f[5] or '')
if refused then return refused end
local entries = journal(block, { id = id, playerId = f[3], groupId = f[4] or nil, entries = f[5] or nil }, ARGV[6])
if entries then redis.call('HSET', ikey(id), 'entries', entries) end
return 'OK'
`;

/**
 * Layout 5 -> 6, one intent at a time: moves the entries of intent ARGV[3] from layouts 3 to 5's
 * shape (a hash per entry, P entry:<intentId>:<tag>; sorted sets by seq of entry ids, P journal,
 * P journal:intent:<id>, P journal:player:<id>, P journal:match:<id>) to layout 6's, keeping
 * their seqs: each becomes a field of its journal hash, a seq in its player's and match's
 * sets, and a 'tag:seq' in its intent's entries list. ARGV: prefix, the layout being migrated
 * from. Returns 'DONE' when another process finished the migration, 'GONE' when the intent's
 * entries were moved already (by another process migrating at the same time), or 'OK'. The
 * global set P journal is dropped when the migration ends (MIGRATED_4_TO_5).
 */
export const CONVERT = `${HELPERS}
if redis.call('GET', p .. 'version') ~= ARGV[2] then return 'DONE' end
local id = ARGV[3]
local index = p .. 'journal:intent:' .. id
local eids = redis.call('ZRANGE', index, 0, -1)
if #eids == 0 then return 'GONE' end
local list = {}
local function enc(v) return v and cjson.encode(v) or 'null' end
for _, eid in ipairs(eids) do
  local key = p .. 'entry:' .. eid
  local e = hash(key)
  if e.seq then
    local s = e.seq
    redis.call('HSET', bucket(s), s, '[' .. s .. ',' .. e.at .. ',' .. enc(e.intentId) .. ',' ..
      enc(e.playerId) .. ',' .. enc(e.matchId) .. ',' .. enc(e.tag) .. ',' .. enc(e.debit) .. ',' ..
      enc(e.credit) .. ',' .. enc(e.amount) .. ',' .. enc(e.unit) .. ',' .. enc(e.why) .. ']')
    local player = p .. 'journal:player:' .. e.playerId
    redis.call('ZREM', player, eid)
    redis.call('ZADD', player, s, s)
    if e.matchId then
      local m = p .. 'journal:match:' .. e.matchId
      redis.call('ZREM', m, eid)
      redis.call('ZADD', m, s, s)
    end
    list[#list + 1] = e.tag .. ':' .. s
    redis.call('DEL', key)
  end
end
if redis.call('EXISTS', ikey(id)) == 1 then
  redis.call('HSET', ikey(id), 'entries', table.concat(list, ','))
end
redis.call('DEL', index)
return 'OK'
`;

/**
 * Ends layout 5 -> 6 once every intent's entries moved: drops layout 5's set of every entry
 * and sets the new version, unless another process already did. ARGV: prefix. Returns the
 * stored version.
 */
export const MIGRATED_5_TO_6 = `
local p = ARGV[1]
if redis.call('GET', p .. 'version') == '5' then
  redis.call('UNLINK', p .. 'journal')
  redis.call('SET', p .. 'version', '6')
end
return redis.call('GET', p .. 'version')
`;

/**
 * ARGV: prefix, the layout migrated from, the layout migrated to. Ends a migration: sets the
 * new version unless another process already did. Returns the stored version.
 */
export const MIGRATED = `
local key = ARGV[1] .. 'version'
if redis.call('GET', key) == ARGV[2] then redis.call('SET', key, ARGV[3]) end
return redis.call('GET', key)
`;

/**
 * The start-up sweep. ARGV: prefix, at. Every open intent due later than `at` becomes due at
 * `at` (its hash and the due index together); leases, statuses and updatedAt stay. Returns
 * how many were brought forward.
 */
export const ADVANCE = `${HELPERS}
local at = ARGV[2]
local members = redis.call('ZRANGEBYSCORE', p .. 'due', '(' .. at, '+inf')
local moved = 0
for _, m in ipairs(members) do
  local key = ikey(idOf(m))
  if redis.call('HGET', key, 'kind') ~= 'match' then
    redis.call('HSET', key, 'nextCheckAt', at)
    redis.call('ZADD', p .. 'due', at, m)
    moved = moved + 1
  end
end
return moved
`;

/**
 * Layout 1 -> 2: indexes the intents already in status unknown. ARGV: prefix, the prefix as a
 * SCAN pattern (glob characters escaped), the new version. Runs once, when a library that
 * writes layout 2 first meets layout 1 data; writes the new version last.
 */
export const MIGRATE_1_TO_2 = `
local p = ARGV[1]
local cursor = '0'
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[2] .. 'intent:*', 'COUNT', 1000)
  cursor = r[1]
  for _, key in ipairs(r[2]) do
    local f = redis.call('HMGET', key, 'status', 'createdAt', 'ord')
    if f[1] == 'unknown' then redis.call('ZADD', p .. 'unknown', f[2], f[3]) end
  end
until cursor == '0'
redis.call('SET', p .. 'version', ARGV[3])
return ARGV[3]
`;

/**
 * Layout 3 -> 4, one SCAN page at a time: event ids were kept a week (a TTL) and are now kept
 * for good. ARGV: prefix, then the page's `event:` keys. Returns how many lost their TTL.
 */
export const PERSIST_EVENTS = `
local n = 0
for i = 2, #ARGV do n = n + redis.call('PERSIST', ARGV[i]) end
return n
`;

/**
 * Layout 4 -> 5, one SCAN page at a time: the open intents (matches aside) join the `open`
 * index that the game's cap counts. ARGV: prefix, then the page's `intent:` keys. Each
 * intent's status is read here, in the same step as its ZADD, so a page that meets an intent
 * another process (already on layout 5) created or ended just now agrees with what that
 * process wrote; two processes migrating at once add the same members. Returns how many it
 * found open.
 */
export const INDEX_OPEN = `${HELPERS}
local added = 0
for i = 2, #ARGV do
  local f = redis.call('HMGET', ARGV[i], 'status', 'kind', 'createdAt', 'ord')
  if OPEN[f[1] or ''] and f[2] ~= 'match' and f[4] then
    redis.call('ZADD', p .. 'open', f[3], f[4])
    added = added + 1
  end
end
return added
`;

/**
 * ARGV: prefix, version this library writes. Records the version on first use and returns
 * the stored one, so that an older library can refuse data laid out by a newer one.
 */
export const VERSION = `
local key = ARGV[1] .. 'version'
redis.call('SET', key, ARGV[2], 'NX')
return redis.call('GET', key)
`;

/*
 * The operator's audit log (layout 7):
 *   P oplog                        hash: seq -> one line, the JSON array [seq, at, by, action,
 *                                  intentId, playerId, before, after, note] (operator-log.ts)
 *   P oplog:seq                    counter: the lines' seq, dense (taken by the append)
 *   P oplog:intent:<id>            zset: the seqs of the lines that name the intent
 *   P oplog:player:<id>            zset: the seqs of the lines that name the player
 *   P oplog:call                   '<call token>|<seq>' of the last append, so that a resent
 *                                  append (ioredis after a reconnect) answers its first line
 *   P blocked                      set: the players an operator blocked
 *   P paused                       string: the seq of the line of an operator's pause of the
 *                                  game's payouts, while it holds (layout 8)
 * No script changes or removes a line.
 */

/**
 * Appends a line, after a block's or a pause's compare-and-set. ARGV: prefix, mode ('a' append,
 * 'b' block, 'u' unblock, 'p' pause the game's payouts, 'r' resume them), now, call token, intentId ('' for none), playerId ('' for none), the line's JSON
 * after its seq and time (by, action, intentId, playerId, before, after, note, without the
 * brackets). Returns the line, or false when a block or unblock found the player already so, or
 * a pause or resume the payouts.
 */
export const OPLOG_APPEND = `
local p, mode, now, call, intent, player = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local last = redis.call('GET', p .. 'oplog:call')
if last then
  local token, seq = string.match(last, '^(.*)|(%d+)$')
  if token == call then return redis.call('HGET', p .. 'oplog', seq) end
end
if mode == 'b' and redis.call('SADD', p .. 'blocked', player) == 0 then return false end
if mode == 'u' and redis.call('SREM', p .. 'blocked', player) == 0 then return false end
if mode == 'p' and redis.call('EXISTS', p .. 'paused') == 1 then return false end
if mode == 'r' and redis.call('DEL', p .. 'paused') == 0 then return false end
local seq = redis.call('INCR', p .. 'oplog:seq')
if mode == 'p' then redis.call('SET', p .. 'paused', seq) end
local line = '[' .. seq .. ',' .. now .. ',' .. ARGV[7] .. ']'
redis.call('HSET', p .. 'oplog', seq, line)
if intent ~= '' then redis.call('ZADD', p .. 'oplog:intent:' .. intent, seq, seq) end
if player ~= '' then redis.call('ZADD', p .. 'oplog:player:' .. player, seq, seq) end
redis.call('SET', p .. 'oplog:call', call .. '|' .. seq)
return line
`;

/**
 * A page of the operator log. ARGV: prefix, the index ('' for every line, else
 * 'oplog:intent:<id>' or 'oplog:player:<id>'), after (a seq), want, budget, then the filters
 * intentId, playerId, since ('' for none). Looks at no more than `budget` lines, as JOURNAL does.
 * Returns { the last seq looked at, 1 when the seqs ended (else 0), lines... }.
 */
export const OPLOG_PAGE = `
local p, from, last = ARGV[1], ARGV[2], ARGV[3]
local want, budget = tonumber(ARGV[4]), tonumber(ARGV[5])
local intent, player, since = ARGV[6], ARGV[7], tonumber(ARGV[8])
local top = tonumber(redis.call('GET', p .. 'oplog:seq') or '0')
local out = { last, 0 }
local seen, kept = 0, 0
while kept < want and seen < budget do
  local seqs = {}
  local n = math.min(256, budget - seen)
  if from == '' then
    for s = tonumber(last) + 1, math.min(top, tonumber(last) + n) do
      seqs[#seqs + 1] = string.format('%d', s)
    end
  else
    seqs = redis.call('ZRANGEBYSCORE', p .. from, '(' .. last, '+inf', 'LIMIT', 0, n)
  end
  if #seqs == 0 then
    out[1], out[2] = last, 1
    return out
  end
  local lines = redis.call('HMGET', p .. 'oplog', unpack(seqs))
  for i, v in ipairs(lines) do
    last = seqs[i]
    seen = seen + 1
    if v then
      local l = cjson.decode(v)
      if (intent == '' or l[5] == intent) and (player == '' or l[6] == player)
        and (since == nil or l[2] >= since) then
        out[#out + 1] = v
        kept = kept + 1
        if kept >= want then break end
      end
    end
  end
end
out[1] = last
return out
`;

/**
 * The game's outbound rate (rate.ts, takeFrom): one hash, `rate` (tokens, at, hold), read,
 * refilled and taken from in one step, so that every process sharing the Redis draws from one
 * bucket. Time is the server's (TIME), never a caller's: a process whose clock is off neither
 * stalls the others nor refills the bucket for itself. ARGV: prefix, perSecond, burst, keep.
 * Returns 0 (a token taken) or the ms to wait; only a take writes (one HSET, in the AOF).
 */
export const RATE_TAKE = `
local key = ARGV[1] .. 'rate'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate, burst = tonumber(ARGV[2]), tonumber(ARGV[3])
local need = 1 + tonumber(ARGV[4])
local v = redis.call('HMGET', key, 'tokens', 'at', 'hold')
local tokens, at, hold = tonumber(v[1]) or burst, tonumber(v[2]) or 0, tonumber(v[3]) or 0
if now > at then
  tokens = tokens + (now - at) * rate / 1000
  at = now
end
if tokens > burst then tokens = burst end
if now < hold then return hold - now end
if tokens < need then return math.max(1, math.ceil((need - tokens) * 1000 / rate)) end
-- Written only when a token is taken: a refusal's refill is the same when counted again later.
redis.call('HSET', key, 'tokens', string.format('%.17g', tokens - 1), 'at', string.format('%d', at))
return 0
`;

/**
 * A hold of ARGV[2] ms from the server's now (a 429's Retry-After), unless a later one is in
 * force (rate.ts, holdBucket).
 */
export const RATE_HOLD = `
local key = ARGV[1] .. 'rate'
local t = redis.call('TIME')
local untilMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
local v = redis.call('HMGET', key, 'at', 'hold')
local at, hold = tonumber(v[1]) or 0, tonumber(v[2]) or 0
if untilMs <= hold then return 0 end
if untilMs > at then at = untilMs end
redis.call('HSET', key, 'tokens', '0', 'at', string.format('%d', at), 'hold', string.format('%d', untilMs))
return 1
`;
