/* news.h - the project's news, written by the operator (`locus news`) and
 * shown on the site's home and news pages: PROJECT/news.json, a JSON
 * object {"news": [{"id", "time", "title", "text"}, ...]}, newest first,
 * at most NEWS_MAX items (the oldest go). Replaced whole at each change
 * (write_file_atomic), so a reader sees the file before or after it. */
#ifndef LOCUS_NEWS_H
#define LOCUS_NEWS_H
#include "core/project.h"
#include <jansson.h>
#include <stdint.h>

#define NEWS_FILE "news.json"
#define NEWS_MAX 100
#define NEWS_TITLE_MAX 200      /* bytes */
#define NEWS_TEXT_MAX 8192      /* bytes */

/* The newest limit items of p's news, a new array (owned; empty when
 * there is no news file), or NULL when the file is unreadable or not
 * news. */
json_t *news_load(const struct project *p, int limit);
/* Adds an item (title: 1 to NEWS_TITLE_MAX bytes, no control character;
 * text: at most NEWS_TEXT_MAX bytes, line breaks allowed) at time now, its
 * id into *id. 0, or -1 with the reason in err. */
int news_add(const struct project *p, const char *title, const char *text, int64_t now, int64_t *id, char *err,
             size_t errlen);
/* Removes item id: 0, 1 no such item, -1 with the reason in err. */
int news_remove(const struct project *p, int64_t id, char *err, size_t errlen);

/* The news as an Atom feed (RFC 4287) of the project called name at
 * master_url, its entries linking to news.html, into out; now stands for
 * the feed's time when there is no news. 0, or -1 (the file is not news). */
struct strbuf;
int news_atom(const struct project *p, const char *name, const char *master_url, int64_t now, struct strbuf *out);
#endif
