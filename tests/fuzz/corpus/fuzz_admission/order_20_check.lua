if campaign.priority ~= 7 then reject('priority not set first') end
campaign.clusters.alpha.walltime = 60
