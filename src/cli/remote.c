/* remote.c - `locus --server URL ...`: the commands that have a REST API
 * order (docs/api.md) sent to a locusd over HTTP(S) with libcurl instead of
 * run on the project's folder. The server checks them with the same code
 * (src/orders/), so a refusal is the same message, printed as the server
 * wrote it. The submit key comes from --key-file, LOCUS_KEY_FILE or
 * LOCUS_KEY (never needing the command line, where `ps` shows it), or
 * --key; --cacert names the CA of a server with a private certificate. */
#include "cli/cli.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY_MAX 256
#define ANSWER_MAX (64 << 20)      /* a JSON answer: batches' views are well under this */

static struct {
    char url[1024];                /* the server's base URL, without a final '/' */
    char key[KEY_MAX];
    const char *cacert;
} remote;

int cli_remote(void) { return remote.url[0] != 0; }

/* The key from a file: its first line. */
static int key_from_file(const char *path, char *err, size_t errlen)
{
    size_t len;
    char *text = read_file(path, KEY_MAX, &len);
    if (!text) return cli_errf(err, errlen, CLI_FAIL, "cannot read the key file %s: %s", path, strerror(errno));
    text[strcspn(text, "\r\n")] = 0;
    snprintf(remote.key, sizeof remote.key, "%s", text);
    free(text);
    return 0;
}

int cli_remote_options(int *argc, char ***argv, char *err, size_t errlen)
{
    const char *server = getenv("LOCUS_SERVER"), *key = NULL, *key_file = getenv("LOCUS_KEY_FILE");
    remote.cacert = getenv("LOCUS_CACERT");
    int i = 1;
    while (i + 1 < *argc && !strncmp((*argv)[i], "--", 2)) {
        const char *opt = (*argv)[i] + 2, *val = (*argv)[i + 1];
        if (!strcmp(opt, "server")) server = val;
        else if (!strcmp(opt, "key")) key = val;
        else if (!strcmp(opt, "key-file")) key_file = val;
        else if (!strcmp(opt, "cacert")) remote.cacert = val;
        else break;
        i += 2;
    }
    (*argv)[i - 1] = (*argv)[0];   /* the command words follow the program's name, as without options */
    *argv += i - 1;
    *argc -= i - 1;
    if (!server || !*server) return 0;
    size_t n = strlen(server);
    while (n && server[n - 1] == '/') n--;
    if (strncmp(server, "http://", 7) && strncmp(server, "https://", 8))
        return cli_errf(err, errlen, CLI_USAGE, "--server takes an http:// or https:// URL, not '%s'", server);
    if (n >= sizeof remote.url) return cli_errf(err, errlen, CLI_USAGE, "--server URL is too long");
    memcpy(remote.url, server, n);
    remote.url[n] = 0;
    if (key) snprintf(remote.key, sizeof remote.key, "%s", key);
    else if (key_file) return key_from_file(key_file, err, errlen);
    else if (getenv("LOCUS_KEY")) snprintf(remote.key, sizeof remote.key, "%s", getenv("LOCUS_KEY"));
    return 0;
}

/* ---- requests ---- */

struct answer {
    struct strbuf body;            /* JSON answers and errors */
    FILE *to;                      /* a download: the body goes there when the status is 200 */
    CURL *c;
    int too_long;
};

static size_t take(char *data, size_t size, size_t n, void *p)
{
    struct answer *a = p;
    size_t len = size * n;
    long code = 0;
    curl_easy_getinfo(a->c, CURLINFO_RESPONSE_CODE, &code);
    if (a->to && code == 200) return fwrite(data, 1, len, a->to);
    if (a->body.len + len > ANSWER_MAX) {
        a->too_long = 1;
        return 0;
    }
    sb_append(&a->body, data, len);
    return len;
}

/* The server's error for status: its {"error"} message, or the status. */
static int server_error(const struct answer *a, long status, char *err, size_t errlen)
{
    json_t *o = json_loadb(a->body.s ? a->body.s : "", a->body.len, 0, NULL);
    const char *msg = json_string_value(json_object_get(o, "error"));
    int rc = msg ? cli_errf(err, errlen, CLI_FAIL, "%s (HTTP %ld)", msg, status)
                 : cli_errf(err, errlen, CLI_FAIL, "the server answered HTTP %ld", status);
    json_decref(o);
    return rc;
}

/* One request to /api/v1/path. A body: the JSON text json, or the file
 * upload (PUT, with headers). The answer: into *out (parsed JSON) or, for
 * a download, into the file to. 0, or CLI_FAIL with the server's message. */
static int request(const char *method, const char *path, const char *json, FILE *upload, int64_t upload_size,
                   struct curl_slist *headers, json_t **out, FILE *to, char *err, size_t errlen)
{
    if (!remote.key[0])
        return cli_errf(err, errlen, CLI_FAIL, "no submit key: set LOCUS_KEY or LOCUS_KEY_FILE, or give --key-file "
                        "FILE (the operator makes one: locus user key DIR NAME)");
    char url[sizeof remote.url + 1024], auth[KEY_MAX + 32];
    if ((size_t)snprintf(url, sizeof url, "%s/api/v1/%s", remote.url, path) >= sizeof url)
        return cli_errf(err, errlen, CLI_FAIL, "the request's URL is too long");
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", remote.key);
    CURL *c = curl_easy_init();
    if (!c) return cli_errf(err, errlen, CLI_FAIL, "cannot start libcurl");
    struct answer a = {.to = to, .c = c};
    sb_init(&a.body);
    headers = curl_slist_append(headers, auth);
    if (json) headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    if (remote.cacert) curl_easy_setopt(c, CURLOPT_CAINFO, remote.cacert);
    if (json) curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
    if (upload) {
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READDATA, upload);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)upload_size);
    }
    char curl_err[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
    CURLcode cc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    curl_slist_free_all(headers);
    int rc = 0;
    if (a.too_long) rc = cli_errf(err, errlen, CLI_FAIL, "the server's answer is over %d bytes", ANSWER_MAX);
    else if (status >= 400) rc = server_error(&a, status, err, errlen);   /* before curl's: a refused upload is cut */
    else if (cc != CURLE_OK)
        rc = cli_errf(err, errlen, CLI_FAIL, "%s: %s", remote.url, curl_err[0] ? curl_err : curl_easy_strerror(cc));
    else if (out && !(*out = json_loadb(a.body.s ? a.body.s : "", a.body.len, 0, NULL)))
        rc = cli_errf(err, errlen, CLI_FAIL, "the server's answer is not JSON (HTTP %ld)", status);
    sb_free(&a.body);
    return rc;
}

int remote_text(const char *method, const char *path, const char *text, json_t **answer, char *err, size_t errlen)
{
    return request(method, path, text ? text : (strcmp(method, "GET") ? "{}" : NULL), NULL, 0, NULL, answer, NULL,
                   err, errlen);
}

int remote_json(const char *method, const char *path, json_t *body, json_t **answer, char *err, size_t errlen)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    int rc = remote_text(method, path, text, answer, err, errlen);
    free(text);
    return rc;
}

/* key with its URL escapes, for a path ("batches/%s/cancel"). */
char *remote_escape(const char *key)
{
    char *e = curl_easy_escape(NULL, key, 0);
    char *copy = xstrdup(e ? e : "");
    curl_free(e);
    return copy;
}

int remote_file_add(const char *src, struct file_rec *f, char *err, size_t errlen)
{
    char sha[SHA256_HEX_LEN], hdr[SHA256_HEX_LEN + 32], path[sizeof f->name + 64];
    if (sha256_hex_file(src, sha))
        return cli_errf(err, errlen, CLI_FAIL, "cannot read %s: %s", src, strerror(errno));
    FILE *in = fopen(src, "rb");
    if (!in) return cli_errf(err, errlen, CLI_FAIL, "cannot read %s: %s", src, strerror(errno));
    snprintf(hdr, sizeof hdr, "X-Locus-SHA256: %s", sha);
    snprintf(path, sizeof path, "files/%s%s%s%s", f->name, f->sticky || f->report_on_rpc ? "?" : "",
             f->sticky ? "sticky=1&" : "", f->report_on_rpc ? "report_on_rpc=1" : "");
    json_t *a = NULL;
    int rc = request("PUT", path, NULL, in, file_size(src), curl_slist_append(NULL, hdr), &a, NULL, err, errlen);
    fclose(in);
    if (rc) return rc;
    f->nbytes = (int64_t)json_integer_value(json_object_get(a, "nbytes"));
    const char *md5 = json_string_value(json_object_get(a, "md5"));
    snprintf(f->md5, sizeof f->md5, "%s", md5 ? md5 : "");
    cli_print_file_added(f, json_is_true(json_object_get(a, "existed")));
    json_decref(a);
    return 0;
}

int remote_download(const char *path, const char *dest, char *err, size_t errlen)
{
    char tmp[PROJECT_PATH_MAX + 16];
    if (path_printf(tmp, sizeof tmp, "%s.part", dest))
        return cli_errf(err, errlen, CLI_FAIL, "%s: the name is too long", dest);
    FILE *to = fopen(tmp, "wb");
    if (!to) return cli_errf(err, errlen, CLI_FAIL, "cannot write %s: %s", tmp, strerror(errno));
    int rc = request("GET", path, NULL, NULL, 0, NULL, NULL, to, err, errlen);
    if (fclose(to) && !rc) rc = cli_errf(err, errlen, CLI_FAIL, "cannot write %s: %s", tmp, strerror(errno));
    if (!rc && rename(tmp, dest)) rc = cli_errf(err, errlen, CLI_FAIL, "cannot write %s: %s", dest, strerror(errno));
    if (rc) unlink(tmp);   /* a download cut short is not left as if whole */
    return rc;
}

json_t *remote_opts_json(const struct cli_opt *opts, const char *const *skip)
{
    json_t *o = json_object();
    for (const struct cli_opt *p = opts; p->name; p++) {
        int skipped = 0;
        for (const char *const *k = skip; *k && !skipped; k++) skipped = !strcmp(*k, p->name);
        if (skipped || !p->seen) continue;
        char key[64];
        snprintf(key, sizeof key, "%s", p->name);
        for (char *c = key; *c; c++)
            if (*c == '-') *c = '_';
        json_t *v = NULL;
        switch (p->kind) {
        case OPT_FLAG: v = json_true(); break;
        case OPT_STR: v = json_string(*(const char **)p->dest); break;
        case OPT_INT: v = json_integer(*(int *)p->dest); break;
        case OPT_DOUBLE: v = json_real(*(double *)p->dest); break;
        case OPT_LIST: {
            const struct cli_list *l = p->dest;
            v = json_array();
            for (int i = 0; i < l->n; i++) json_array_append_new(v, json_string(l->v[i]));
            strcat(key, "s");   /* --output X --output Y: "outputs": [X, Y] */
            break;
        }
        }
        json_object_set_new(o, key, v);
    }
    return o;
}
