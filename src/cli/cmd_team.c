/* cmd_team.c - `locus team create DIR NAME --founder USER [--url URL]
 * [--description TEXT]`: a team, its founder its first member; `locus team
 * join DIR TEAM USER` and `locus team leave DIR USER`, by the rules of
 * orders/team_order.h, which the web site follows too. `locus team list`
 * is in cmd_list.c. */
#include "cli/cli.h"
#include "orders/team_order.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

static int find_user(struct store *s, const char *name, struct user *u, char *err, size_t errlen)
{
    int rc = store_user_by_name(s, name, u);
    if (rc < 0) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(s));
    return rc ? cli_errf(err, errlen, CLI_FAIL, "no user '%s'", name) : 0;
}

struct create { struct team t; const char *founder; };

static int create_body(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    (void)copies;
    struct create *c = ctx;
    struct user u;
    int rc = find_user(cp->s, c->founder, &u, err, errlen);
    if (rc) return rc;
    return team_create(cp->s, u.id, &c->t, err, errlen) ? CLI_FAIL : 0;
}

int cmd_team_create(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2], *founder = NULL, *url = "", *description = "";
    struct cli_opt opts[] = {
        {"founder", OPT_STR, &founder, 0, 0},
        {"url", OPT_STR, &url, 0, 0},
        {"description", OPT_STR, &description, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    struct create c = {.founder = founder};
    if (!founder) return cli_errf(err, errlen, CLI_USAGE, "team create needs --founder USER");
    if (team_fields_check(pos[1], url, description, err, errlen)) return CLI_FAIL;
    snprintf(c.t.name, sizeof c.t.name, "%s", pos[1]);
    snprintf(c.t.url, sizeof c.t.url, "%s", url);
    snprintf(c.t.description, sizeof c.t.description, "%s", description);
    c.t.create_time = (int64_t)time(NULL);
    struct cli_project cp;
    if (!(rc = cli_open(&cp, pos[0], 0, err, errlen))) rc = cli_transaction(&cp, create_body, &c, err, errlen);
    cli_close(&cp);
    if (!rc) printf("created team %s (id %lld), founded by %s\n", c.t.name, (long long)c.t.id, founder);
    return rc;
}

struct member { const char *team, *user; };

/* Puts the user in the team (NULL team: in none). */
static int member_body(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    (void)copies;
    struct member *m = ctx;
    struct user u;
    struct team t;
    int rc = find_user(cp->s, m->user, &u, err, errlen);
    if (rc) return rc;
    if (!m->team) return team_leave(cp->s, u.id, err, errlen) ? CLI_FAIL : 0;
    if ((rc = store_team_by_name(cp->s, m->team, &t)))
        return rc < 0 ? cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s))
                      : cli_errf(err, errlen, CLI_FAIL, "no team '%s'", m->team);
    return team_join(cp->s, u.id, t.id, &t, err, errlen) ? CLI_FAIL : 0;
}

static int membership(const char *dir, struct member *m, char *err, size_t errlen)
{
    struct cli_project cp;
    int rc = cli_open(&cp, dir, 0, err, errlen);
    if (!rc) rc = cli_transaction(&cp, member_body, m, err, errlen);
    cli_close(&cp);
    return rc;
}

int cmd_team_join(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[3];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 3, 3, err, errlen);
    if (rc) return rc;
    struct member m = {pos[1], pos[2]};
    if ((rc = membership(pos[0], &m, err, errlen))) return rc;
    printf("%s joined team %s\n", pos[2], pos[1]);
    return 0;
}

int cmd_team_leave(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    struct member m = {NULL, pos[1]};
    if ((rc = membership(pos[0], &m, err, errlen))) return rc;
    printf("%s left its team\n", pos[1]);
    return 0;
}
