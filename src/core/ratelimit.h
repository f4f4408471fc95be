/* ratelimit.h - per-key limits on how often something may be done, such as
 * account creation or login attempts per client address on a public web
 * server: a token bucket per key. Pure: no I/O, no clock read, no locking
 * (callers hold their own lock); the caller passes the time, in
 * milliseconds from a monotonic clock. Memory is bounded by max_keys:
 * forgetting a key only ever gives it a full bucket again, so the bound
 * can let a key act sooner than its rate, never later. */
#ifndef LOCUS_RATELIMIT_H
#define LOCUS_RATELIMIT_H
#include <stddef.h>
#include <stdint.h>

struct ratelimit;
/* A limiter allowing each key `burst` actions at once, refilled at
 * per_hour actions an hour, remembering at most max_keys keys. NULL if an
 * argument is out of range (per_hour <= 0, burst < 1, max_keys < 1, or
 * either number not finite, burst / per_hour hours included); never NULL
 * otherwise (allocation failure aborts, as xmalloc does). Freed by
 * ratelimit_free. */
struct ratelimit *ratelimit_new(double per_hour, double burst, size_t max_keys);
/* Changes r's rate and burst (a reloaded setting); 0, or -1 with r
 * unchanged when they are out of range as for ratelimit_new. The keys held
 * keep when their bucket is full again, what their past actions cost at
 * the old rate; actions from now on cost the new rate's interval. */
int ratelimit_set_rate(struct ratelimit *r, double per_hour, double burst);
/* 1 if key (NUL-terminated, copied) may act at now_ms, the action then
 * counted; 0 if its bucket is empty, nothing counted; *retry_s (if not NULL)
 * gets the whole seconds until it may act again (0 when allowed). A key not
 * seen is allowed (a full bucket). When max_keys keys are held and a new key
 * comes, keys whose bucket is full again are forgotten first (they lose
 * nothing by it); if none is, the key least recently acted on is forgotten,
 * so a flood of new addresses can never lock out the others for long nor
 * grow memory. A refused attempt counts as acting: a key that keeps
 * knocking is remembered, and stays refused. now_ms going backwards is
 * treated as no time passing. */
int ratelimit_take(struct ratelimit *r, const char *key, int64_t now_ms, int *retry_s);
/* 1 if key may act at now_ms, as ratelimit_take would say, but nothing
 * is counted nor remembered: for actions that cost only when they fail
 * (a wrong key spends, a right one does not). *retry_s as there. */
int ratelimit_may(const struct ratelimit *r, const char *key, int64_t now_ms, int *retry_s);
/* Keys held now (for tests and metrics). */
size_t ratelimit_keys(const struct ratelimit *r);
/* Frees r and every key it holds; NULL is allowed. */
void ratelimit_free(struct ratelimit *r);
#endif
