/* campaign.js - one campaign (?id=N): its figures, progress per cluster
 * with the blacklists (GET campaigns/N) and every event with its message
 * (campaigns/N/events). */
'use strict';
locus.page(async (main) => {
  const { el, fmt } = locus;
  const id = locus.param('id');
  if (!/^[0-9]+$/.test(id || '')) throw new Error('no campaign named: open this page from the campaigns list');
  let c, ev;
  try {
    [c, ev] = await Promise.all([locus.api('campaigns/' + id), locus.api('campaigns/' + id + '/events')]);
  } catch (err) {
    main.append(locus.ownerNote(err, 'Campaigns'));
    return;
  }
  main.querySelector('h1').textContent = 'Campaign ' + c.name;
  const byState = c.jobs_by_state || {};
  const figure = (key, label, value) => el('div', { class: 'figure' },
    el('div', { class: 'value', id: 'fig-' + key }, value), el('div', { class: 'label' }, label));
  main.append(el('p', {}, 'Owner ', el('strong', {}, c.user), ', ', el('span', { id: 'state' }, c.state),
    ', created ', fmt.time(c.create_time), '.'),
  el('div', { class: 'figures' }, figure('jobs', 'jobs', fmt.number(c.jobs || 0)),
    Object.entries(byState).map(([k, n]) => figure(k, k, fmt.number(n))),
    figure('rate', 'jobs per hour', fmt.decimal(c.throughput_jobs_per_h || 0, 1)),
    figure('eta', 'to go (ETA)', fmt.eta(c.eta_s))));
  main.append(el('h2', {}, 'Clusters'), el('div', { id: 'clusters' }, locus.table([
    { label: 'Cluster', value: (k) => k.cluster },
    { label: 'Running', num: true, value: (k) => fmt.number(k.running) },
    { label: 'Waiting', num: true, value: (k) => fmt.number(k.waiting) },
    { label: 'Successes', num: true, value: (k) => fmt.number(k.successes) },
    { label: 'Mean success', num: true, value: (k) => fmt.decimal(k.mean_success_s, 0) + ' s' },
    { label: 'Jobs/h', num: true, value: (k) => fmt.decimal(k.throughput_jobs_per_h, 1) },
    { label: 'Blacklisted', value: (k) => k.blacklisted
      ? el('span', { class: 'bad' }, k.blacklist.kind.replace(/_/g, ' '), ' (event ', String(k.blacklist.event_id),
        k.blacklist.exit_code ? ', exit ' + k.blacklist.exit_code : '', ')') : 'no' },
  ], c.clusters || [], 'Not on a cluster yet.')));
  main.append(el('h2', {}, 'Events'), el('div', { id: 'events' }, locus.table([
    { label: 'Event', num: true, value: (e) => String(e.id) },
    { label: 'Opened', value: (e) => fmt.time(e.opened_at) },
    { label: 'Cluster', value: (e) => e.cluster },
    { label: 'Kind', value: (e) => e.kind.replace(/_/g, ' ') },
    { label: 'Open', value: (e) => e.open ? 'open' : 'fixed' },
    { label: 'Blacklists', value: (e) => e.blacklists ? 'yes' : 'no' },
    { label: 'Exit', num: true, value: (e) => String(e.exit_code) },
    { label: 'Jobs', num: true, value: (e) => fmt.number(e.jobs) },
    { label: 'Message', value: (e) => el('span', { class: 'message' }, e.message) },
  ], ev.events, 'No event.')));
});
