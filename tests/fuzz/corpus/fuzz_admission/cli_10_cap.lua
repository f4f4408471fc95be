if user == 'bob' then reject('bob has used his quota') end
for _, c in pairs(campaign.clusters) do
  if c.walltime > 600 then c.walltime = 600; c.prologue_walltime = 600; c.epilogue_walltime = 600 end
end
