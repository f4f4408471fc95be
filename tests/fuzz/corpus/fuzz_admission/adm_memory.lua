local ok = pcall(string.rep, 'x', 1 << 30)
campaign.name = ok and 'no' or 'caught'