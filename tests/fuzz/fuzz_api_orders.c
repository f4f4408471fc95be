/* fuzz_api_orders.c - the REST API's JSON orders on work sequences, as
 * any submitter may send them: the body parsed with the flags locusd uses
 * (api_body), read by sequence_order_from_json and, when its positions are
 * few, carried out by sequence_order_create in a real store, then rolled
 * back. Properties: a refused order says why in one line and leaves no
 * batch; an accepted one made its batch, owned by the caller, with exactly
 * the job rows sequence_order_positions counts. */
#include "orders/sequence_order.h"
#include "orders/sequence_order_json.h"
#include "store/store.h"
#include "fuzz_tmp.h"
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#define MAX_FUZZ_POSITIONS 2000   /* larger orders are read, not carried out: each row costs an insert */
#define NOW 1790000000

static struct store *st;
static int64_t owner_id;

/* The store the orders run in: one user, the app they name, a file for
 * initial_state. Made once per process; traps if it cannot be. */
static void open_store(void)
{
    char path[1024], err[256];
    st = store_open(fuzz_tmp_path(path, "store.db"), STORE_CREATE, err, sizeof err);
    if (!st) __builtin_trap();
    struct user u = {.create_time = NOW};
    snprintf(u.name, sizeof u.name, "alice");
    snprintf(u.authenticator, sizeof u.authenticator, "key-alice");
    struct app a = {0};
    snprintf(a.name, sizeof a.name, "worker");
    struct file_rec f = {0};
    snprintf(f.name, sizeof f.name, "init.dat");
    f.nbytes = 10;
    snprintf(f.md5, sizeof f.md5, "0123456789abcdef0123456789abcdef");
    if (store_user_insert(st, &u) || store_app_insert(st, &a) || store_file_insert(st, &f)) __builtin_trap();
    owner_id = u.id;
}

static void check_refused(const char *name, const char *err)
{
    if (!err[0] || strchr(err, '\n') || strchr(err, '\r')) __builtin_trap();
    struct batch b;
    if (name && store_batch_by_name(st, name, &b) == 0) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!st) open_store();
    json_error_t je;
    json_t *o = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        return 0;
    }
    struct sequence_order ord;
    sequence_order_defaults(&ord);
    const char *outs[MAX_OUTPUTS];
    char err[512] = "";
    if (sequence_order_from_json(o, &ord, outs, err, sizeof err)) {
        check_refused(NULL, err);
        json_decref(o);
        return 0;
    }
    long long n = sequence_order_positions(&ord);
    if (n > MAX_FUZZ_POSITIONS && n != LLONG_MAX) {
        json_decref(o);
        return 0;
    }
    ord.user_id = owner_id;
    if (store_begin(st)) __builtin_trap();
    struct batch b;
    enum seq_order_rc rc = sequence_order_create(st, &ord, NOW, &b, err, sizeof err);
    if (rc == SEQ_ORDER_STORE) __builtin_trap();   /* nothing in the store is broken: a store error is a bug */
    if (rc) {
        check_refused(ord.name && strlen(ord.name) < sizeof b.name ? ord.name : NULL, err);
    } else {
        struct batch got;
        int64_t first = 0, last = -1;
        if (n == LLONG_MAX || store_batch_by_name(st, ord.name, &got) || got.id != b.id || got.user_id != owner_id ||
            store_batch_live_range(st, b.id, &first, &last) || last - first + 1 != n)
            __builtin_trap();
    }
    store_rollback(st);
    json_decref(o);
    return 0;
}
