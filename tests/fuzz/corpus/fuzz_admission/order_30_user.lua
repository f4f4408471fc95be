if user ~= 'alice' then reject('only alice') end
