-- cap_walltime.lua - an admission rule: no job of a campaign may ask for
-- more than two hours on any cluster. Durations are in seconds. What
-- depends on the walltime is brought down with it, or the campaign the
-- rule leaves would be refused as invalid.
local MAX = 2 * 3600

for _, c in pairs(campaign.clusters) do
  c.walltime = math.min(c.walltime, MAX)
  c.prologue_walltime = math.min(c.prologue_walltime, MAX)
  c.epilogue_walltime = math.min(c.epilogue_walltime, MAX)
  -- the checkpoint signal is sent checkpointing_period seconds before the walltime
  if c.checkpointing_period >= c.walltime then
    c.checkpointing_period = c.walltime // 2
  end
  c.temporal_grouping_duration = math.min(c.temporal_grouping_duration, c.walltime)
end
