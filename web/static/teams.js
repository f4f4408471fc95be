/* teams.js - the teams (GET teams), and a form to create one when
 * logged in (POST teams: its founder joins it). */
'use strict';
locus.page(async (main, session) => {
  const { el, api, fmt } = locus;
  const { teams, total } = await api('teams');
  document.getElementById('teams').append(
    el('p', { class: 'muted' }, fmt.number(total) + ' teams. ',
       el('a', { href: 'leaderboards.html?kind=teams' }, 'By credit'), '.'),
    el('div', { id: 'team-list' }, locus.table([
      { label: 'Team', value: (t) => el('a', { href: 'team.html?id=' + t.id }, t.name) },
      { label: 'Founder', value: (t) => t.founder || '' },
      { label: 'Members', value: (t) => String(t.members), num: true },
      { label: 'Credit', value: (t) => fmt.number(t.credit), num: true },
    ], teams, 'No team yet.')));
  if (!session.user) return;
  document.getElementById('create-team').hidden = false;
  locus.onSubmit(document.getElementById('team-form'), async (data) => {
    for (const k of ['url', 'description']) if (!data[k]) delete data[k];
    const { team } = await api('teams', data);
    location.href = 'team.html?id=' + team.id;
  });
});
