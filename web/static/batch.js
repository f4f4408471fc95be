/* batch.js - one batch (?b=NAME_OR_ID): its figures, its throughput and
 * ETA charts (GET batches/B/progress), its failures grouped with their
 * stderr (batches/B/failures, the owner's) and a job lookup by name,
 * instance or number (batches/B/jobs/JOB). */
'use strict';
locus.page(async (main) => {
  const { el, fmt } = locus;
  const key = locus.param('b');
  if (!key) throw new Error('no batch named: open this page from the batches list');
  const enc = encodeURIComponent(key);
  /* both at once: each computes the batch's figures, seconds for a million jobs */
  const failuresAsked = locus.api('batches/' + enc + '/failures').then((f) => ({ f }), (err) => ({ err }));
  const p = await locus.api('batches/' + enc + '/progress');
  const b = p.batch;
  document.title = 'Batch ' + b.name + ' · ' + document.title.split(' · ').pop();
  main.querySelector('h1').textContent = 'Batch ' + b.name;

  const figure = (id, label, value) => el('div', { class: 'figure' },
    el('div', { class: 'value', id: 'fig-' + id }, value), el('div', { class: 'label' }, label));
  main.append(el('p', {}, 'App ', el('strong', {}, b.app), ', ', el('span', { id: 'state' }, b.state),
    ', created ', fmt.time(b.create_time), b.done_time ? ', ended ' + fmt.time(b.done_time) : '', '.'),
  el('div', { class: 'figures' },
    figure('jobs', 'jobs', fmt.number(b.jobs)), figure('done', 'done', fmt.number(b.done)),
    figure('failed', 'failed', fmt.number(b.failed)), figure('active', 'in progress', fmt.number(b.active)),
    figure('rate', 'jobs per hour', fmt.decimal(b.throughput_jobs_per_h, 1)),
    figure('eta', 'to go (ETA)', fmt.eta(b.eta_s))),
  el('p', {}, locus.progress(b)));

  /* throughput per period, and jobs finished so far with the ETA's line */
  const labels = p.done.map((_, i) => fmt.time(p.start + i * p.step_s));
  const per = p.step_s === 3600 ? 'hour' : (p.step_s / 3600) + ' hours';
  const throughput = el('canvas', { id: 'chart-throughput' });
  const eta = el('canvas', { id: 'chart-eta' });
  main.append(el('h2', {}, 'Jobs finished per ' + per), el('div', { class: 'chart' }, throughput),
    el('h2', {}, 'Progress and ETA'), el('div', { class: 'chart' }, eta));
  new Chart(throughput, { type: 'bar', options: { animation: false, maintainAspectRatio: false,
    scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
    data: { labels, datasets: [{ label: 'done', data: p.done, backgroundColor: '#1a7f37' },
                               { label: 'failed', data: p.failed, backgroundColor: '#b42318' }] } });
  let sum = 0;
  const finished = p.done.map((d, i) => (sum += d + p.failed[i]));
  /* jobs purged to the archive are in the batch's counts, not in the series: counted from the start */
  const purged = Math.max(b.done + b.failed - sum, 0);
  const cumulative = finished.map((f) => f + purged);
  const etaLabels = labels.slice(), projection = cumulative.map(() => null);
  if (b.eta_s > 0) {   /* from now to the ETA, at the batch's rate */
    projection[projection.length - 1] = cumulative[cumulative.length - 1];
    etaLabels.push(fmt.time(p.now + b.eta_s));
    projection.push(b.jobs - b.cancelled);
  }
  new Chart(eta, { type: 'line', options: { animation: false, maintainAspectRatio: false,
    scales: { y: { beginAtZero: true, suggestedMax: b.jobs } } },
    data: { labels: etaLabels, datasets: [
      { label: 'jobs finished', data: cumulative, borderColor: '#1f6feb', pointRadius: 0 },
      { label: 'at this rate (ETA)', data: projection, borderColor: '#5b6675', borderDash: [6, 4], spanGaps: true } ] } });

  /* failures: the owner's (or an admin's) */
  const failures = el('section', { id: 'failures' }, el('h2', {}, 'Failures'));
  main.append(failures);
  try {
    const { f, err } = await failuresAsked;
    if (err) throw err;
    const reasons = Object.entries(f.failed_by).map(([k, n]) => k.replace(/_/g, ' ') + ': ' + fmt.number(n));
    failures.append(el('p', {}, fmt.number(f.batch.failed), ' jobs failed',
      reasons.length ? ' (' + reasons.join(', ') + ')' : '', '; ', fmt.number(f.instances_read),
      ' instances in error read.'));
    /* each group's newest instance, with its stderr tail */
    const tails = await Promise.all(f.groups.map((g) => g.example_instance
      ? locus.api('batches/' + enc + '/jobs/' + encodeURIComponent(g.example_instance))
          .then((v) => v.instances.find((i) => i.name === g.example_instance)).catch(() => null)
      : null));
    f.groups.forEach((g, k) => {
      const inst = tails[k];
      failures.append(el('div', { class: 'card failure' },
        el('p', {}, el('strong', {}, g.outcome.replace(/_/g, ' ')), ', exit status ', String(g.exit_status), ': ',
          fmt.number(g.instances), ' instances on ', fmt.number(g.hosts), ' hosts, last ', fmt.time(g.last_time),
          '; e.g. job ', el('a', { href: 'batch.html?b=' + enc + '&job=' + encodeURIComponent(g.example_job) },
            g.example_job), '.'),
        el('pre', { class: 'stderr' }, (inst && (inst.stderr_tail || inst.message)) || g.error || '(nothing written)')));
    });
    if (f.other_groups) failures.append(el('p', { class: 'muted' }, 'and ', fmt.number(f.other_instances),
      ' more instances in ', fmt.number(f.other_groups), ' other groups.'));
    if (!f.groups.length) failures.append(el('p', { class: 'muted' }, 'No instance in error.'));
  } catch (err) {
    failures.append(locus.ownerNote(err, 'A batch\'s failures'));
  }

  /* a job by its name, an instance's name or its number in the batch */
  const input = el('input', { id: 'job-name', name: 'job', placeholder: 'job name, instance or number' });
  const shown = el('div', { id: 'job' });
  main.append(el('h2', {}, 'A job'), el('form', { class: 'pager', id: 'job-form', action: 'batch.html', method: 'get' },
    el('input', { type: 'hidden', name: 'b', value: key }), input, el('button', { type: 'submit' }, 'Look up')), shown);
  const job = locus.param('job');
  if (!job) return;
  input.value = job;
  try {
    const v = await locus.api('batches/' + enc + '/jobs/' + encodeURIComponent(job));
    shown.append(el('p', {}, 'Job ', el('strong', {}, v.job.name), ' (number ', String(v.job.number), '): ',
      el('span', { id: 'job-state' }, v.job.state), v.job.errors.length ? ' (' + v.job.errors.join(', ') + ')' : ''),
    locus.table([
      { label: 'Instance', value: (i) => i.name },
      { label: 'Host', value: (i) => i.host_id ? el('a', { href: 'hosts.html?id=' + i.host_id }, i.host || String(i.host_id)) : '' },
      { label: 'Outcome', value: (i) => i.state === 'in_progress' ? 'in progress' : i.outcome.replace(/_/g, ' ') },
      { label: 'Exit', num: true, value: (i) => String(i.exit_status) },
      { label: 'Sent', value: (i) => fmt.time(i.sent_time) },
      { label: 'Back', value: (i) => fmt.time(i.received_time) },
      { label: 'Stderr', value: (i) => el('pre', { class: 'stderr' }, i.stderr_tail || i.message || '') },
    ], v.instances, 'No instance sent yet.'));
  } catch (err) {
    shown.append(err.status === 404 && /job/.test(err.message) ? el('p', { class: 'error' }, err.message)
      : locus.ownerNote(err, 'A batch\'s jobs'));
  }
});
