/* campaign_record.c - campaigns written to and read from the store as the
 * JDL parser's JSON (campaign_record.h). */
#include "orders/campaign_record.h"
#include "grid/jdl.h"
#include <stdlib.h>

int campaign_record_write(struct store *s, int64_t id, int64_t user_id, const struct campaign_spec *spec,
                          int64_t now)
{
    json_t *settings = jdl_settings_to_json(spec);
    char *text = json_dumps(settings, JSON_COMPACT);
    json_decref(settings);
    int rc = store_campaign_insert(s, id, user_id, spec, text, now);
    free(text);
    return rc;
}

int campaign_record_read(struct store *s, int64_t id, struct campaign_spec *out, int64_t *user_id)
{
    json_t *root;
    int rc = store_campaign_json(s, id, &root, user_id);
    if (rc) return rc;
    char err[300];
    campaign_spec_free(out);
    rc = jdl_parse_json(root, out, err, sizeof err);
    json_decref(root);
    return rc ? store_failf(s, "campaign %lld in the store: %s", (long long)id, err) : 0;
}
