/* team.js - a team's page: its founder, credit and members (GET
 * teams/ID); join or leave it when logged in (POST teams/ID/join,
 * teams/leave). */
'use strict';
locus.page(async (main, session) => {
  const { el, api, fmt } = locus;
  const id = parseInt(locus.param('id') || '', 10);
  if (!(id > 0)) throw new Error('no team given (team.html?id=N)');
  const t = await api('teams/' + id);
  document.getElementById('team-name').textContent = t.name;
  document.title = t.name + ' · ' + document.title.split(' · ').pop();
  const box = document.getElementById('team');
  const member = session.user && session.user.team_id === t.id;
  const act = !session.user ? el('p', {}, el('a', { href: 'login.html' }, 'Log in'), ' to join this team.')
    : el('p', {}, locus.button(member ? 'leave-team' : 'join-team', member ? 'Leave this team' : 'Join this team',
        async () => {
          await api(member ? 'teams/leave' : `teams/${t.id}/join`, {});
          location.reload();
        }));
  box.append(...[
    t.description ? el('p', { id: 'team-description' }, t.description) : null,
    t.url ? el('p', {}, el('a', { href: t.url, rel: 'nofollow noopener', id: 'team-url' }, t.url)) : null,
    el('table', { class: 'list card' }, el('tbody', {},
      el('tr', {}, el('th', {}, 'Founder'), el('td', { id: 'team-founder' }, t.founder ? t.founder.name : 'none')),
      el('tr', {}, el('th', {}, 'Members'), el('td', { id: 'team-members' }, fmt.number(t.members))),
      el('tr', {}, el('th', {}, 'Credit'), el('td', { id: 'team-credit' }, fmt.number(t.total_credit))),
      el('tr', {}, el('th', {}, 'Recent credit'), el('td', {}, fmt.decimal(t.expavg_credit))),
      el('tr', {}, el('th', {}, 'Created'), el('td', {}, fmt.time(t.created))))),
    act,
    el('h2', {}, 'Members'),
    el('div', { id: 'member-list' }, locus.table([
      { label: 'Name', value: (m) => m.name },
      { label: 'Credit', value: (m) => fmt.number(m.total_credit), num: true },
      { label: 'Recent credit', value: (m) => fmt.decimal(m.expavg_credit), num: true },
    ], t.top_members, 'No member.')),
    t.members > t.top_members.length ? el('p', { class: 'muted' }, 'The ' + t.top_members.length + ' with the most credit.') : null,
  ].filter(Boolean));
});
