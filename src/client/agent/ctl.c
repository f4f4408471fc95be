/* ctl.c - the daemon's control socket and the command side of it. */
#include "client/agent/ctl.h"

#include "core/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SERVE_TIMEOUT_MS 2000   /* the daemon does not wait long for a slow peer */
#define CALL_TIMEOUT_MS 120000  /* a command waits out a daemon busy in a transfer */
#define CONNECT_TRIES 20        /* x 100 ms */

static int sock_addr(const char *dir, struct sockaddr_un *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if ((size_t)snprintf(a->sun_path, sizeof a->sun_path, "%s/control.sock", dir) >= sizeof a->sun_path) {
        errf(err, errlen, "%s: folder path too long for a unix socket", dir);
        return -1;
    }
    return 0;
}

int ctl_listen(const char *dir, char *err, size_t errlen)
{
    char lock[4096];
    struct sockaddr_un a;
    snprintf(lock, sizeof lock, "%s/lock", dir);
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);   /* kept open: the lock lives with us */
    if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) != 0) {
        errf(err, errlen, "%s: %s", lock,
             lfd >= 0 && errno == EWOULDBLOCK ? "another locus-client runs in this folder" : strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    if (sock_addr(dir, &a, err, errlen) != 0)
        return -1;
    unlink(a.sun_path);   /* a stale socket of a killed daemon: we hold the lock */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0) {
        errf(err, errlen, "%s: %s", a.sun_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Reads one line (without its newline) into sb; 0, or -1 on error/timeout. */
static int read_line(int fd, struct strbuf *sb, int timeout_ms)
{
    char buf[4096];
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0)
            return -1;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return sb->len ? 0 : -1;
        char *nl = memchr(buf, '\n', (size_t)n);
        sb_append(sb, buf, nl ? (size_t)(nl - buf) : (size_t)n);
        if (nl)
            return 0;
        if (sb->len > CTL_LINE_MAX)
            return -1;
    }
}

static int write_all(int fd, const char *s, size_t len)
{
    while (len > 0) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, SERVE_TIMEOUT_MS) <= 0)
            return -1;
        ssize_t n = send(fd, s, len, MSG_NOSIGNAL);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return -1;
        s += n;
        len -= (size_t)n;
    }
    return 0;
}

static void send_json(int fd, json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT);
    if (text) {
        write_all(fd, text, strlen(text));
        write_all(fd, "\n", 1);
    }
    free(text);
}

void ctl_serve(int fd, json_t *(*handle)(void *ctx, json_t *req), void *ctx)
{
    int c;
    while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
        struct strbuf sb;
        json_error_t je;
        json_t *req = NULL, *reply;
        sb_init(&sb);
        if (read_line(c, &sb, SERVE_TIMEOUT_MS) == 0)
            req = json_loadb(sb.s, sb.len, 0, &je);
        if (req && json_is_object(req) && json_is_string(json_object_get(req, "cmd")))
            reply = handle(ctx, req);
        else
            reply = json_pack("{s:b, s:s}", "ok", 0, "error", "bad request: one JSON object with \"cmd\" expected");
        send_json(c, reply);
        json_decref(reply);
        json_decref(req);
        sb_free(&sb);
        close(c);
    }
}

int ctl_call(const char *dir, json_t *req, json_t **reply, char *err, size_t errlen)
{
    struct sockaddr_un a;
    struct strbuf sb;
    json_error_t je;
    if (sock_addr(dir, &a, err, errlen) != 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc = -1;
    /* a daemon just started may not listen yet: wait for it a little */
    for (int i = 0; fd >= 0 && i < CONNECT_TRIES; i++) {
        if ((rc = connect(fd, (struct sockaddr *)&a, sizeof a)) == 0 || (errno != ENOENT && errno != ECONNREFUSED))
            break;
        usleep(100000);
    }
    if (fd < 0 || rc != 0) {
        errf(err, errlen, "no locus-client daemon answers in %s (%s); start it with: locus-client --dir %s",
             dir, strerror(errno), dir);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    sb_init(&sb);
    send_json(fd, req);
    rc = read_line(fd, &sb, CALL_TIMEOUT_MS);
    close(fd);
    *reply = rc == 0 ? json_loadb(sb.s, sb.len, 0, &je) : NULL;
    sb_free(&sb);
    if (!*reply || !json_is_object(*reply)) {
        errf(err, errlen, "the daemon in %s gave no valid reply", dir);
        json_decref(*reply);
        *reply = NULL;
        return -1;
    }
    return 0;
}
