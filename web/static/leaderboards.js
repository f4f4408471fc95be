/* leaderboards.js - users, hosts and teams by total or recent credit,
 * 50 a page (GET leaderboard/KIND/ORDER/PAGE). The choice is in the
 * query string: ?kind=users&order=total&page=1. */
'use strict';
locus.page(async () => {
  const { el, api, fmt } = locus;
  const kind = ['users', 'hosts', 'teams'].includes(locus.param('kind')) ? locus.param('kind') : 'users';
  const order = locus.param('order') === 'recent' ? 'recent' : 'total';
  const page = Math.max(1, parseInt(locus.param('page') || '1', 10) || 1);
  const link = (k, o, p, text, id) => el('a', { href: `leaderboards.html?kind=${k}&order=${o}&page=${p}`, id }, text);
  const kinds = document.getElementById('board-kinds');
  for (const k of ['users', 'hosts', 'teams'])
    for (const o of ['total', 'recent'])
      kinds.append(k === kind && o === order ? el('strong', {}, `${k}, ${o} credit`)
                                            : link(k, o, 1, `${k}, ${o} credit`, `board-${k}-${o}`));
  const data = await api(`leaderboard/${kind}/${order}/${page}`);
  const credit = [
    { label: 'Credit', value: (r) => fmt.number(r.total_credit), num: true },
    { label: 'Recent credit', value: (r) => fmt.decimal(r.expavg_credit), num: true },
  ];
  const teamLink = (t) => t ? el('a', { href: 'team.html?id=' + t.id }, t.name) : '';
  const columns = {
    users: [{ label: 'Name', value: (r) => r.name }, { label: 'Team', value: (r) => teamLink(r.team) }],
    hosts: [{ label: 'Host', value: (r) => String(r.id) }, { label: 'Owner', value: (r) => r.owner ? r.owner.name : '' },
            { label: 'System', value: (r) => r.os || r.platform }, { label: 'CPUs', value: (r) => String(r.cpus), num: true }],
    teams: [{ label: 'Team', value: (r) => teamLink(r) }, { label: 'Members', value: (r) => String(r.members), num: true },
            { label: 'Founder', value: (r) => r.founder ? r.founder.name : '' }],
  }[kind];
  const board = document.getElementById('board');
  const pages = Math.max(1, Math.ceil(data.total / data.per_page));
  board.append(
    locus.table([{ label: 'Rank', value: (r) => String(r.rank), num: true }, ...columns, ...credit], data.rows),
    el('div', { class: 'pager' },
      page > 1 ? link(kind, order, page - 1, 'previous', 'page-prev') : null,
      el('span', { id: 'page-of' }, `page ${page} of ${pages} (${fmt.number(data.total)} ${kind})`),
      page < pages ? link(kind, order, page + 1, 'next', 'page-next') : null));
  board.querySelector('table')?.setAttribute('id', 'board-table');
});
