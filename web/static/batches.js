/* batches.js - the batches list: each batch's state, progress bar, figures
 * and ETA (GET /api/v1/batches). */
'use strict';
locus.page(async (main) => {
  const { batches } = await locus.api('batches');
  const { el, fmt } = locus;
  main.append(locus.table([
    { label: 'Batch', value: (b) => el('a', { href: 'batch.html?b=' + encodeURIComponent(b.id), class: 'batch-link' }, b.name) },
    { label: 'App', value: (b) => b.app },
    { label: 'State', value: (b) => b.state },
    { label: 'Progress', value: (b) => locus.progress(b) },
    { label: 'Jobs', num: true, value: (b) => fmt.number(b.jobs) },
    { label: 'Done', num: true, value: (b) => fmt.number(b.done) },
    { label: 'Failed', num: true, value: (b) => fmt.number(b.failed) },
    { label: 'Jobs/h', num: true, value: (b) => fmt.decimal(b.throughput_jobs_per_h, 1) },
    { label: 'ETA', value: (b) => locus.fmt.eta(b.eta_s) },
  ], batches, 'No batch yet.'));
});
