local t = {3, 1, 2}
table.sort(t)
table.insert(t, 1, 0)
table.remove(t)
campaign.name = table.concat(table.move(t, 1, 3, 1, {}), '-')
