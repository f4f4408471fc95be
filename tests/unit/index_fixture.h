/* index_fixture.h - a scheduling index with one app (id 1) and its Linux
 * version (id 12), a change log and room for one request's dispatches:
 * the fixture of the cursor and sequence tests. Include after cmocka.h. */
#ifndef LOCUS_TEST_INDEX_FIXTURE_H
#define LOCUS_TEST_INDEX_FIXTURE_H
#include "sched/index.h"
#include <stdlib.h>

#define LINUX "x86_64-pc-linux-gnu"
#define MAXSENT 64

struct fx {
    struct sched_index x;
    struct app app;
    struct app_version av;
    struct change_log log;
    struct dispatched sent[MAXSENT];
    struct dispatch_result res;   /* of the last request */
};

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    index_init(&f->x);
    change_log_init(&f->log);
    f->app = (struct app){.id = 1, .name = "sim"};
    f->av = (struct app_version){.id = 12, .app_id = 1, .platform = LINUX, .version_num = 101};
    assert_non_null(index_add_app(&f->x, &f->app));
    assert_int_equal(index_add_version(&f->x, &f->av), 0);
    f->res = (struct dispatch_result){.sent = f->sent, .max = MAXSENT};
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    dispatch_result_free(&f->res);
    index_free(&f->x);
    change_log_free(&f->log);
    free(f);
    return 0;
}

static void clear_log(struct fx *f)
{
    change_log_free(&f->log);
    change_log_init(&f->log);
}
#endif
