/* cmd_news.c - `locus news add DIR TITLE [TEXT|-]`, `locus news list DIR
 * [--json]` and `locus news remove DIR ID`: the project's news, shown on
 * the web site's home and news pages (store/news.h). locusd reads the file
 * at each request: no reload needed. */
#include "cli/cli.h"
#include "store/news.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NEWS_STDIN_MAX (1 << 20)

static int load_project(struct project *p, const char *dir, char *err, size_t errlen)
{
    char why[1024];
    if (project_load(p, dir, why, sizeof why)) return cli_errf(err, errlen, CLI_FAIL, "%s", why);
    return 0;
}

int cmd_news_add(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[3];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 3, err, errlen);
    struct project p;
    if (rc || (rc = load_project(&p, pos[0], err, errlen))) return rc;
    char *text = NULL;
    size_t len;
    if (pos[2] && !strcmp(pos[2], "-") && (rc = cli_read_stdin(NEWS_STDIN_MAX, &text, &len, err, errlen))) return rc;
    if (text && strlen(text) != len) rc = cli_errf(err, errlen, CLI_FAIL, "standard input holds a NUL byte");
    int64_t id;
    char why[512];
    if (!rc && news_add(&p, pos[1], text ? text : pos[2] ? pos[2] : "", (int64_t)time(NULL), &id, why, sizeof why))
        rc = cli_errf(err, errlen, CLI_FAIL, "%s", why);
    free(text);
    if (!rc) printf("news %lld added\n", (long long)id);
    return rc;
}

int cmd_news_list(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[1];
    int as_json = 0;
    struct cli_opt opts[] = {{"json", OPT_FLAG, &as_json, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    struct project p;
    if (rc || (rc = load_project(&p, pos[0], err, errlen))) return rc;
    json_t *items = news_load(&p, NEWS_MAX);
    if (!items) return cli_errf(err, errlen, CLI_FAIL, "%s/%s is not the news locus writes", p.dir, NEWS_FILE);
    if (as_json) {
        json_t *o = json_pack("{s:o}", "news", items);
        json_dumpf(o, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(o);
        return 0;
    }
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *n = json_array_get(items, i);
        time_t t = (time_t)json_integer_value(json_object_get(n, "time"));
        struct tm tm;
        char when[32];
        strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime_r(&t, &tm));
        printf("%lld  %s  %s\n", (long long)json_integer_value(json_object_get(n, "id")), when,
               json_string_value(json_object_get(n, "title")));
    }
    json_decref(items);
    return 0;
}

int cmd_news_remove(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    struct project p;
    if (rc || (rc = load_project(&p, pos[0], err, errlen))) return rc;
    char *end, why[512];
    long long id = strtoll(pos[1], &end, 10);
    if (*end || end == pos[1]) return cli_errf(err, errlen, CLI_USAGE, "news remove: ID is a number (locus news list)");
    rc = news_remove(&p, id, why, sizeof why);
    if (rc < 0) return cli_errf(err, errlen, CLI_FAIL, "%s", why);
    if (rc) return cli_errf(err, errlen, CLI_FAIL, "no news %lld", id);
    printf("news %lld removed\n", id);
    return 0;
}
