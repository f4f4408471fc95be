/* server_fixture.h - starting a locusd in the test's process (included by
 * the tests that drive a whole server: rpc_concurrency, api_campaigns,
 * workgen). Include after cmocka.h. */
#ifndef LOCUS_SERVER_FIXTURE_H
#define LOCUS_SERVER_FIXTURE_H
#include "server/server.h"
#include <pthread.h>

struct fx_starter { struct server *s; const char *dir; char err[512]; int rc; };

static void *fx_start_main(void *p)
{
    struct fx_starter *a = p;
    a->rc = server_open(a->s, a->dir, a->err, sizeof a->err) || server_start(a->s, a->err, sizeof a->err);
    return NULL;
}

/* server_open(s, dir) and server_start in a thread of their own: opening
 * caches a store reader in the calling thread (server_reader), which must
 * not outlive the project. Fails the test if the server does not start. */
static void fx_server_start(struct server *s, const char *dir)
{
    struct fx_starter a = {.s = s, .dir = dir};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fx_start_main, &a), 0);
    pthread_join(t, NULL);
    if (a.rc) fail_msg("server start: %s", a.err);
}
#endif
