if campaign.name == 'forbidden' then reject('no campaign may be named forbidden') end
