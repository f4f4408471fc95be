/* cmd_team.c - `locus team create DIR NAME --founder USER [--url URL]
 * [--description TEXT]`: a team, its founder its first member; `locus team
 * join DIR TEAM USER` and `locus team leave DIR USER`. A user is in one
 * team at most: joining another leaves the first. Team names are unique
 * whatever their letter case. `locus team list` is in cmd_list.c. */
#include "cli/cli.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A team's URL is shown as a link: http(s) only, so no javascript: one. */
static int url_ok(const char *url)
{
    return !url[0] || ((!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) && !strpbrk(url, " \"'<>"));
}

/* Text shown as it is: no control characters. */
static int text_ok(const char *t)
{
    for (const unsigned char *p = (const unsigned char *)t; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return 0;
    return 1;
}

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
    struct team other;
    int rc = find_user(cp->s, c->founder, &u, err, errlen);
    if (rc) return rc;
    if ((rc = store_team_by_name(cp->s, c->t.name, &other)) == 0)
        return cli_errf(err, errlen, CLI_FAIL, "team '%s' exists already", other.name);
    c->t.founder_id = u.id;
    if (rc < 0 || store_team_insert(cp->s, &c->t) || store_user_set_team(cp->s, u.id, c->t.id))
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    return 0;
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
    if (!display_name_ok(pos[1]))
        return cli_errf(err, errlen, CLI_FAIL, "a team name is 1 to %d printable ASCII characters", DISPLAY_NAME_MAX);
    if (!url_ok(url) || strlen(url) >= sizeof c.t.url)
        return cli_errf(err, errlen, CLI_FAIL, "--url must be an http:// or https:// URL of at most %zu bytes",
                        sizeof c.t.url - 1);
    if (!text_ok(description) || strlen(description) >= sizeof c.t.description)
        return cli_errf(err, errlen, CLI_FAIL, "--description: at most %zu bytes, no control characters",
                        sizeof c.t.description - 1);
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
    struct team t = {.id = 0};
    int rc = find_user(cp->s, m->user, &u, err, errlen);
    if (rc) return rc;
    if (m->team && (rc = store_team_by_name(cp->s, m->team, &t)))
        return rc < 0 ? cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s))
                      : cli_errf(err, errlen, CLI_FAIL, "no team '%s'", m->team);
    if (!m->team && !u.team_id) return cli_errf(err, errlen, CLI_FAIL, "user '%s' is in no team", m->user);
    if (m->team && u.team_id == t.id) return cli_errf(err, errlen, CLI_FAIL, "user '%s' is in team '%s' already",
                                                       m->user, t.name);
    if (store_user_set_team(cp->s, u.id, t.id)) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    return 0;
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
