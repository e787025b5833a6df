/**
 * Takes or renews one worker's grant on an endpoint, applying the changes it gathered (the same
 * arithmetic as appliedChanges and grantFor in in-flight-grant.rules.ts). KEYS: the endpoint's
 * grants (a hash: worker id -> "held:want:expiry", expiry on Redis's clock) and its limit (a hash:
 * `l` limit, `t` threshold, `c` last cut). Grants past their expiry (a worker that stopped) are
 * dropped first. ARGV: worker id, maxInFlight, start limit, held, want, grant ms, grow, cut to
 * (0: none), the cut's attempt start, idle ms, ask. Returns {target, hold, limit, threshold, last cut,
 * the others' holds, how many more places the others want than they hold, now}.
 */
export const GRANT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[2])
local function clamp(n) return math.max(1, math.min(max, n)) end
local s = redis.call('HMGET', KEYS[2], 'l', 't', 'c')
local limit = clamp(tonumber(s[1]) or tonumber(ARGV[3]))
local threshold = clamp(tonumber(s[2]) or max)
local cut = tonumber(s[3]) or 0
local cutTo = tonumber(ARGV[8])
if cutTo > 0 and tonumber(ARGV[9]) >= cut then
  limit = clamp(math.min(limit, cutTo))
  threshold = limit
  cut = now
end
local grow = tonumber(ARGV[7])
if grow > 0 then limit = clamp(limit + grow) end
redis.call('HSET', KEYS[2], 'l', limit, 't', threshold, 'c', cut)
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[10]))
local me = ARGV[1]
local entries = redis.call('HGETALL', KEYS[1])
local othersHeld = 0
local othersShort = 0
local wants = {}
for i = 1, #entries, 2 do
  if entries[i] ~= me then
    local held, want, expiry = string.match(entries[i + 1], '^(%d+):(%d+):(%d+)$')
    if held == nil or tonumber(expiry) <= now then
      redis.call('HDEL', KEYS[1], entries[i])
    else
      othersHeld = othersHeld + tonumber(held)
      othersShort = othersShort + math.max(0, tonumber(want) - tonumber(held))
      wants[#wants + 1] = math.min(tonumber(want), limit)
    end
  end
end
local want = math.max(0, math.min(tonumber(ARGV[5]), limit))
wants[#wants + 1] = want
table.sort(wants)
local remaining = limit
local left = #wants
for _, w in ipairs(wants) do
  if w * left > remaining then break end
  remaining = remaining - w
  left = left - 1
end
local share = want
if left > 0 then share = math.min(want, math.ceil(remaining / left)) end
local target = math.max(0, math.min(tonumber(ARGV[11]), share, limit - othersHeld))
local hold = math.max(tonumber(ARGV[4]), target)
if hold == 0 and want == 0 then
  redis.call('HDEL', KEYS[1], me)
else
  local ms = tonumber(ARGV[6])
  redis.call('HSET', KEYS[1], me, hold .. ':' .. want .. ':' .. (now + ms))
  redis.call('PEXPIRE', KEYS[1], ms)
end
return {target, hold, limit, threshold, cut, othersHeld, othersShort, now}
`;
