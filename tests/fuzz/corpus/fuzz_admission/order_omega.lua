campaign.clusters.omega = {exec_file = 'y'}
