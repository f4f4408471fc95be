/* campaign_record.h - a campaign_spec to and from the store: the store
 * keeps a campaign's settings as JSON text and its params as rows
 * (store/store_grid.h), the JDL parser (grid/jdl.h) makes the one from the
 * other. Return conventions are store.h's: 0, 1 for an absent campaign,
 * -1 with store_error(). */
#ifndef LOCUS_CAMPAIGN_RECORD_H
#define LOCUS_CAMPAIGN_RECORD_H
#include "store/store_grid.h"

/* Writes campaign `id` of user_id from spec (borrowed), in the caller's
 * transaction. */
int campaign_record_write(struct store *s, int64_t id, int64_t user_id, const struct campaign_spec *spec,
                          int64_t now);
/* Reads campaign id back into out (freed first with campaign_spec_free;
 * the caller frees it) and its owner into *user_id. */
int campaign_record_read(struct store *s, int64_t id, struct campaign_spec *out, int64_t *user_id);
#endif
