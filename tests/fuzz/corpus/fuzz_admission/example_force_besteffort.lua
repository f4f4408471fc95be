-- force_besteffort.lua - an admission rule: every cluster section of the
-- campaign asks for best-effort (preemptible) jobs, so that campaigns never
-- hold resources the clusters' own users are waiting for. CiGri's default
-- rule refused normal jobs instead; users listed in `exempt` keep theirs.
local exempt = {}   -- e.g. {alice = true}

if not exempt[user] then
  for _, cluster in pairs(campaign.clusters) do
    cluster.type = "best-effort"
  end
end
