local t = {}
t.t = t
campaign.x = t