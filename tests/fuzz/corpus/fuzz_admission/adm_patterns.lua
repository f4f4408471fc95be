local parts = {}
for w in ('x y  z'):gmatch('%a+') do parts[#parts + 1] = w end
local k, v = ('walltime=3600'):match('^(%w+)=(%d+)$')
campaign.name = campaign.name:gsub('^(c)$', function(x) return x .. '-' .. k .. v end)
