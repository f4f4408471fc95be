if campaign.nb_params > 4 then reject('at most 4 params, got ' .. campaign.nb_params) end
if param(campaign.nb_params) == 'bad' then reject('no param named bad') end
