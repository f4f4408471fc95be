/* ctl.h - the control channel between `locus-client CMD` and the running
 * daemon: a unix socket DIR/control.sock, one JSON object per line each
 * way ({"cmd": "status", ...} in, {"ok": true, ...} or {"ok": false,
 * "error": "..."} out), one request per connection. A lock on DIR/lock
 * keeps a second daemon out of the same folder. */
#ifndef LOCUS_AGENT_CTL_H
#define LOCUS_AGENT_CTL_H
#include <jansson.h>
#include <stddef.h>

#define CTL_LINE_MAX 65536

/* Takes DIR/lock (held until exit) and listens on DIR/control.sock.
 * Returns the listening fd (non-blocking, close-on-exec), or -1 with err
 * (another daemon runs in dir, or the socket cannot be made). */
int ctl_listen(const char *dir, char *err, size_t errlen);

/* Serves every connection waiting on fd: reads its request, calls
 * handle(ctx, req) which returns a new reference to the reply object, and
 * writes it back. A bad request gets an error reply without a call. */
void ctl_serve(int fd, json_t *(*handle)(void *ctx, json_t *req), void *ctx);

/* Sends req (borrowed) to the daemon of dir and returns its reply in *reply
 * (a new reference). Waits up to 2 s for a daemon that is starting. 0, or
 * -1 with err (no daemon, bad reply). */
int ctl_call(const char *dir, json_t *req, json_t **reply, char *err, size_t errlen);
#endif
