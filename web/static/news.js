/* news.js - every news item the operator wrote (locus news add). */
'use strict';
locus.page(async () => {
  const { el, fmt } = locus;
  const { news } = await locus.api('news');
  const box = document.getElementById('news');
  if (!news.length) box.append(el('p', { class: 'muted' }, 'No news yet.'));
  for (const n of news) {
    box.append(el('article', { class: 'card news-item', id: 'news-' + n.id }, el('h2', {}, n.title),
      el('p', { class: 'muted' }, fmt.time(n.time)), ...locus.paragraphs(n.text)));
  }
});
