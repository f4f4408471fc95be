/* science.js - what the scientists' and operators' pages share (batches,
 * batch, app versions, hosts, campaigns), loaded after site.js: ETA and
 * rate formats, a batch's progress bar, and the note shown where a view
 * is its owner's. */
'use strict';
(() => {
  const { el, fmt } = locus;
  /* seconds to go as "3 h 20 min"; null (unknown): "unknown"; 0: "finished" */
  fmt.eta = (s) => {
    if (s === null || s === undefined) return 'unknown';
    if (s <= 0) return 'finished';
    if (s < 3600) return Math.ceil(s / 60) + ' min';
    if (s < 172800) return Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
    return Math.round(s / 86400) + ' days';
  };
  /* a rate in [0, 1] as "12.5 %"; null: "" (nothing to rate) */
  fmt.percent = (r) => (r === null || r === undefined) ? '' : (100 * r).toFixed(1) + ' %';
  /* A batch's jobs finished (done or failed) of all, as a bar and its text. */
  locus.progress = (b) => {
    const finished = b.done + b.failed + b.cancelled;
    return el('span', { class: 'progress' },
      el('progress', { max: String(Math.max(b.jobs, 1)), value: String(finished) }),
      ' ', fmt.number(finished), ' / ', fmt.number(b.jobs));
  };
  /* Where a view is the owner's (a batch's failures, campaigns): what to do
     when the API says it is not the caller's. */
  locus.ownerNote = (err, what) => {
    if (!(err instanceof locus.ApiError) || ![401, 403, 404].includes(err.status)) throw err;
    return el('p', { class: 'muted owner-only' }, what, ' are shown to their owner only',
      err.status === 404 ? '' : ', once logged in as a submitter', ' (', err.message, ').');
  };
})();
