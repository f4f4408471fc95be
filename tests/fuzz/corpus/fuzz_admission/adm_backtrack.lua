local ok = pcall(string.find, string.rep('a', 1e5), '.-.-.-.-b')
campaign.name = 'survived'