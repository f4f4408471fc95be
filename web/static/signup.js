/* signup.js - a new account from the site: the same rules as BOINC
 * Manager's "Add project" wizard (POST session/signup); logged in after. */
'use strict';
locus.page(async (main, session) => {
  if (session.user) { location.href = 'account.html'; return; }
  const site = await locus.api('site');
  const form = document.getElementById('signup-form');
  if (site.signup === 'closed') {
    const p = document.getElementById('signup-closed');
    p.textContent = 'This project creates no accounts here: ask its operator.';
    p.hidden = false;
    return;
  }
  form.hidden = false;
  document.getElementById('invite-row').hidden = site.signup !== 'invitation';
  const pw = document.getElementById('password');
  pw.minLength = site.min_passwd_length;
  pw.placeholder = 'at least ' + site.min_passwd_length + ' characters';
  locus.onSubmit(form, async (data) => {
    if (!data.team) delete data.team;
    if (!data.invite_code) delete data.invite_code;
    await locus.api('session/signup', data);
    location.href = 'account.html';
  });
});
