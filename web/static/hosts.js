/* hosts.js - the hosts with the most results in error, and one host by its
 * id (GET /api/v1/hosts, /api/v1/hosts/ID). An admin also sees owners
 * and host names. */
'use strict';
locus.page(async (main) => {
  const { el, fmt } = locus;
  const columns = (details) => [
    { label: 'Host', num: true, value: (h) => el('a', { href: 'hosts.html?id=' + h.id }, String(h.id)) },
    details && { label: 'Owner', value: (h) => h.user || '' },
    details && { label: 'Name', value: (h) => h.domain_name },
    { label: 'Platform', value: (h) => h.platform },
    { label: 'OS', value: (h) => h.os_name },
    { label: 'CPUs', num: true, value: (h) => fmt.number(h.cpus) },
    { label: 'Last contact', value: (h) => fmt.ago(h.last_contact) },
    { label: 'Valid', num: true, value: (h) => fmt.number(h.valid) },
    { label: 'Errors', num: true, value: (h) => fmt.number(h.errors) },
    { label: 'Invalid', num: true, value: (h) => fmt.number(h.invalid) },
    { label: 'Error rate', num: true, value: (h) => fmt.percent(h.error_rate) },
    { label: 'Credit', num: true, value: (h) => fmt.number(h.credit) },
  ].filter(Boolean);
  const lookup = el('input', { id: 'host-id', name: 'id', inputmode: 'numeric', placeholder: 'host id' });
  main.append(el('form', { class: 'pager', action: 'hosts.html', method: 'get' }, 'Look up a host: ', lookup,
    el('button', { type: 'submit' }, 'Show')));
  const id = locus.param('id');
  if (id) {
    lookup.value = id;
    const h = await locus.api('hosts/' + encodeURIComponent(id));
    main.append(el('h2', {}, 'Host ' + h.id), locus.table(columns('user_id' in h), [h]));
    return;
  }
  const data = await locus.api('hosts');
  main.append(el('p', { id: 'hosts-total' }, fmt.number(data.total), ' hosts; those with the most results in error:'),
    locus.table(columns(data.details), data.hosts, 'No host has a result in error.'));
});
