/* index.js - the home page: what the project does (description.txt of the
 * project folder), its live figures and throughput chart (GET status), the
 * latest news (GET site). */
'use strict';
locus.page(async () => {
  const { el, api, fmt } = locus;
  const [site, status] = await Promise.all([api('site'), api('status')]);
  const about = document.getElementById('about');
  const text = site.description.trim();
  about.append(...(text ? locus.paragraphs(text)
    : [el('p', {}, site.name + ' computes with the help of volunteers: your computer runs its jobs when you do not need it.')]));

  const figure = (id, value, label) => el('div', { class: 'figure', id },
    el('div', { class: 'value' }, fmt.number(value)), el('div', { class: 'label' }, label));
  const jobs = status.throughput.jobs;
  const perHour = jobs.slice(-24).reduce((a, b) => a + b, 0) / 24;
  document.getElementById('figures').append(
    figure('hosts-active', status.hosts_active_day, 'computers active in the last day'),
    figure('jobs-hour', status.jobs_done_hour, 'jobs done in the last hour'),
    figure('jobs-day', status.jobs_done_day, 'jobs done in the last day'),
    figure('jobs-per-hour', Math.round(perHour), 'jobs per hour over the last day'),
    figure('users', status.users, 'volunteers'),
    figure('teams', status.teams, 'teams'));

  const labels = jobs.map((_, i) => fmt.time(status.throughput.hour + i * 3600).slice(5, 13) + 'h');
  new Chart(document.getElementById('throughput'), {
    type: 'line',
    data: { labels, datasets: [{ label: 'jobs done', data: jobs, borderColor: '#1f6feb', pointRadius: 0,
                                 fill: false, tension: 0.2 }] },
    options: { animation: false, maintainAspectRatio: false, plugins: { legend: { display: false } },
               scales: { x: { ticks: { maxTicksLimit: 8 } }, y: { beginAtZero: true } } },
  });

  const news = document.getElementById('news');
  if (!site.news.length) news.append(el('p', { class: 'muted' }, 'No news yet.'));
  for (const n of site.news) {
    news.append(el('article', { class: 'card news-item' }, el('h3', {}, n.title),
      el('p', { class: 'muted' }, fmt.time(n.time)), ...locus.paragraphs(n.text)));
  }
});
