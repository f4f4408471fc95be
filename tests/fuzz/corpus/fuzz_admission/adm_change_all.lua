campaign.name = campaign.name .. '-' .. user
campaign.type = 'test'
campaign.priority = -5
campaign.clusters.gamma = {exec_file = 'g.sh', walltime = 7200 / 2, resources = '/nodes=2/core=4'}
campaign.clusters.beta = nil
