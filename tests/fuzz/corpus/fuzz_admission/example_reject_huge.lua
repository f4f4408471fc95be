-- reject_huge.lua - an admission rule: a user may not submit a campaign of
-- more params than their limit. Rules see the number of params, not the
-- params themselves (param(i) reads one).
local LIMITS = {bigshot = 1000000}   -- per user
local DEFAULT = 100000

local limit = LIMITS[user] or DEFAULT
if campaign.nb_params > limit then
  reject(string.format("%d params is more than the %d allowed to %s: split the campaign",
                       campaign.nb_params, limit, user))
end
