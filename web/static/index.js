/* index.js - the home page: what the project does (its about text). */
'use strict';
locus.page(async (main) => {
  const about = document.getElementById('about');
  about.append(locus.el('p', {}, 'A locus project: your computer runs its jobs when you do not need it.'));
});
