/* account.js - the session's account: credit, team, hosts with their
 * errors (GET account), and the account key on request (POST account/key). */
'use strict';
locus.page(async (main, session) => {
  const { el, api, fmt } = locus;
  const box = document.getElementById('account');
  if (!session.user) {
    box.append(el('p', {}, 'Log in to see your account: ', el('a', { href: 'login.html' }, 'log in'), '.'));
    return;
  }
  const [{ user, hosts, hosts_left_out: left, weak_key: weak }, site] = await Promise.all([api('account'), api('site')]);
  const team = user.team_id
    ? el('span', {}, el('a', { href: 'team.html?id=' + user.team_id, id: 'my-team' }, user.team), ' ',
         locus.button('leave-team', 'Leave the team', async () => {
           await api('teams/leave', {});
           location.reload();
         }, 'plain'))
    : el('span', { id: 'my-team' }, 'none (', el('a', { href: 'teams.html' }, 'join one'), ')');
  const keyBox = el('span', { id: 'account-key-box' });
  keyBox.append(locus.button('show-key', 'Show my account key', async () => {
    const { key } = await api('account/key', {});
    keyBox.replaceChildren(el('code', { id: 'account-key' }, key),
      el('pre', { id: 'attach-command' }, 'boinccmd --project_attach ' + site.master_url + ' ' + key));
    const weakBox = document.getElementById('weak-key');
    weakBox.append(el('h2', {}, 'Weak account key'),
      el('p', {}, 'It attaches a computer to your account and opens nothing else: give it to a shared or borrowed ',
         'computer instead of the key above. It changes when your password does.'),
      el('code', { id: 'weak-key-value' }, weak));
    weakBox.hidden = false;
  }));
  box.append(...[
    el('div', { class: 'figures' },
      el('div', { class: 'figure' }, el('div', { class: 'value', id: 'credit-total' }, fmt.number(user.credit)),
        el('div', { class: 'label' }, 'credit in all')),
      el('div', { class: 'figure' }, el('div', { class: 'value', id: 'credit-recent' }, fmt.number(user.recent_credit)),
        el('div', { class: 'label' }, 'recent credit (a day\'s average)'))),
    el('table', { class: 'list card', id: 'about-me' }, el('tbody', {},
      el('tr', {}, el('th', {}, 'Name'), el('td', { id: 'my-name' }, user.name)),
      el('tr', {}, el('th', {}, 'Team'), el('td', {}, team)),
      el('tr', {}, el('th', {}, 'Member since'), el('td', {}, fmt.time(user.created))),
      el('tr', {}, el('th', {}, 'Account key'), el('td', {}, keyBox)))),
    /* the weak key (docs/accounts.md), shown with the account key */
    el('section', { id: 'weak-key', class: 'card', hidden: true }),
    el('h2', {}, 'Your computers'),
    el('div', { id: 'hosts' }, locus.table([
      { label: 'Id', value: (h) => String(h.id) },
      { label: 'Name', value: (h) => h.domain_name },
      { label: 'System', value: (h) => h.os || h.platform },
      { label: 'CPUs', value: (h) => String(h.cpus), num: true },
      { label: 'Last contact', value: (h) => fmt.ago(h.last_contact) },
      { label: 'Credit', value: (h) => fmt.number(h.credit), num: true },
      { label: 'Valid', value: (h) => String(h.valid), num: true },
      { label: 'Errors', value: (h) => String(h.errors), num: true },
      { label: 'Invalid', value: (h) => String(h.invalid), num: true },
    ], hosts, 'No computer yet: attach one with BOINC (see the home page).')),
    left ? el('p', { class: 'muted' }, left + ' more not shown.') : null,
  ].filter(Boolean));
});
