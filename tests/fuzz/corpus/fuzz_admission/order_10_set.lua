campaign.priority = 7
