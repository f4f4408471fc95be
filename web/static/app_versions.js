/* app_versions.js - each app version's results over a window and its
 * error rate (GET /api/v1/app_versions/hours/H). */
'use strict';
locus.page(async (main) => {
  const { el, fmt } = locus;
  const windows = [[24, 'last day'], [168, 'last week'], [720, 'last 30 days']];
  const hours = Number(locus.param('hours')) || 24;
  main.append(el('p', { class: 'pager' }, 'Results that came back in the ',
    windows.map(([h, label]) => h === hours ? el('strong', {}, label)
      : el('a', { href: 'app_versions.html?hours=' + h }, label))));
  const data = await locus.api('app_versions/hours/' + hours);
  main.append(locus.table([
    { label: 'App', value: (v) => v.app },
    { label: 'Version', num: true, value: (v) => String(v.version_num) },
    { label: 'Platform', value: (v) => v.platform },
    { label: 'Plan class', value: (v) => v.plan_class },
    { label: 'Success', num: true, value: (v) => fmt.number(v.success) },
    { label: 'Error', num: true, value: (v) => fmt.number(v.error) },
    { label: 'Error rate', num: true, value: (v) => locus.fmt.percent(v.error_rate) },
  ], data.app_versions, 'No app version yet.'));
});
