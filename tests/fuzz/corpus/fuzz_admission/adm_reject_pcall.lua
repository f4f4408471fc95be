local ok = pcall(reject, 'caught')
campaign.name = 'x'