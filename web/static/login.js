/* login.js - logging in with e-mail and password (POST session/login). */
'use strict';
locus.page(async (main, session) => {
  if (session.user) { location.href = 'account.html'; return; }
  locus.onSubmit(document.getElementById('login-form'), async (data) => {
    await locus.api('session/login', data);
    location.href = 'account.html';
  });
});
