local x = campaign.clusters.gamma.walltime
