/* grid.h - locusd's grid daemon: the campaign cycle (grid/cycle.h) run
 * over the cluster drivers, with its state in the store (store_grid.h).
 * One thread owns it; `locus` and the REST API reach it only through
 * orders in the store. Split in steps so that a unit test can drive it
 * with fake drivers and its own clock, and restart it mid-campaign. */
#ifndef LOCUS_SERVER_GRID_H
#define LOCUS_SERVER_GRID_H
#include "core/project.h"
#include "grid/cycle.h"
#include "server/grid_view.h"
#include "drivers/driver.h"
#include <stdint.h>

struct gridd;

/* How the daemon gets a driver for a cluster: drv_open and drv_close
 * unless a test gives its own (which then own the drivers). */
struct gridd_drivers {
    struct cluster_driver *(*open)(void *ctx, const struct cluster_config *cfg, char *err, size_t errlen);
    void (*close)(void *ctx, struct cluster_driver *d);
    void *ctx;
};

/* Opens the store at db_path (its own handle), loads the saved state and
 * the declared clusters, with the grid settings of cfg (borrowed; copied).
 * drivers may be NULL (the real ones). NULL with the reason in err. */
struct gridd *gridd_open(const char *db_path, const struct project_config *cfg, const struct gridd_drivers *drivers,
                         char *err, size_t errlen);
void gridd_close(struct gridd *g);

/* Reads clusters declared or changed since the last call, and the
 * operator's affinities. */
int gridd_refresh(struct gridd *g, char *err, size_t errlen);
/* Carries out the pending orders, each in its own transaction with the
 * state it changes. Returns how many were done or refused, or -1. */
int gridd_orders(struct gridd *g, int64_t now, char *err, size_t errlen);
/* One cycle at now: poll the clusters, apply what they say (a copy whose
 * wrapper failed its stage-in with the fault its stage line names), learn
 * from the copies that succeeded what the clusters' caches hold and how
 * fast inputs reach them (grid_view.h), plan (placing jobs by their data
 * unless <grid_no_data_placement/>), save, then cancel, submit and notify
 * as planned, saving after each. -1 only when the store failed (clusters
 * that fail are recorded, not errors). */
int gridd_cycle(struct gridd *g, int64_t now, char *err, size_t errlen);

/* The key the output tokens of the jobs it submits are made with
 * (grid/outputs.h; k borrowed, copied): the server's keys/output_key.
 * Without it (a test's daemon) tokens are made with a zero key, which the
 * server never holds. */
struct upload_key;
void gridd_set_output_key(struct gridd *g, const struct upload_key *k);

/* The state as of the last step (borrowed; for tests and figures). */
const struct grid_state *gridd_state(const struct gridd *g);
/* The data view as of the last step (borrowed; for tests and figures). */
const struct grid_view *gridd_view(const struct gridd *g);
/* Jobs (copies) handed to clusters since gridd_open: submitted, and
 * refused or failed at submission; copied into *out, never fails. */
struct gridd_counts { uint64_t submitted, failed; };
void gridd_counts(const struct gridd *g, struct gridd_counts *out);

/* The thread of locusd (arg: struct server *): refresh, orders every
 * half second, a cycle every <grid_cycle_period>, until it stops; each
 * cycle's figures go to the server's metrics (metrics.h). */
void *grid_main(void *arg);
#endif
