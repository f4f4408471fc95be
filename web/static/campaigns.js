/* campaigns.js - the caller's campaigns on the grid's clusters (GET
 * /api/v1/campaigns): state, jobs by state, throughput and ETA. */
'use strict';
locus.page(async (main) => {
  const { el, fmt } = locus;
  let data;
  try {
    data = await locus.api('campaigns');
  } catch (err) {
    main.append(locus.ownerNote(err, 'Campaigns'));
    return;
  }
  const jobs = (c) => c.jobs_by_state ? Object.entries(c.jobs_by_state).filter(([, n]) => n)
    .map(([k, n]) => k + ' ' + fmt.number(n)).join(', ') : '';
  main.append(locus.table([
    { label: 'Campaign', value: (c) => el('a', { href: 'campaign.html?id=' + c.id, class: 'campaign-link' }, c.name) },
    { label: 'Owner', value: (c) => c.user },
    { label: 'State', value: (c) => c.state },
    { label: 'Jobs', num: true, value: (c) => fmt.number(c.jobs) },
    { label: 'By state', value: jobs },
    { label: 'Open events', num: true, value: (c) => fmt.number(c.open_events) },
    { label: 'Jobs/h', num: true, value: (c) => fmt.decimal(c.throughput_jobs_per_h, 1) },
    { label: 'ETA', value: (c) => c.state === 'starting' ? '' : fmt.eta(c.eta_s) },
  ], data.campaigns, 'No campaign yet.'));
});
