/* files.c - the agent's file transfers and file cache: downloads of the
 * files its results need (resumed, size/md5/signature checked, backed off
 * per file, next URL on failure), uploads of outputs, result phases that
 * follow from them, and deletion of files nothing needs any more (sticky
 * files stay until the server's <delete_file_info>). */
#include "client/agent/agent_internal.h"

#include "client/agent/xfer.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/sign.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERR_GIVEUP_DOWNLOAD (-186)
#define RS_DOWNLOAD_ERROR 1
#define MAX_FILE_FAILURES 10   /* transient failures before giving a file up */

static void file_failed(struct agent *a, struct afile *f, enum xfer_rc rc, const char *why, double now)
{
    f->failures++;
    if (rc == XF_PERMANENT || f->failures >= MAX_FILE_FAILURES) {
        f->status = AF_ERROR;
        snprintf(f->error, sizeof f->error, "%s", why);
        log_warn("file %s: giving up: %s", f->name, why);
    } else {
        f->next_try = now + agent_backoff(a, f->failures);
        if (f->nurls > 1)
            f->url_index = (f->url_index + 1) % f->nurls;
        log_info("file %s: %s; retry in %.0f s", f->name, why, f->next_try - now);
    }
    agent_changed(a, 1);
}

int files_verify(const struct aproject *p, const struct afile *f, const char *path, char *why, size_t len)
{
    char md5[MD5_HEX_LEN];
    int64_t size;
    if (md5_hex_file(path, md5, &size) != 0) {
        errf(why, len, "cannot read it back");
        return -1;
    }
    if (f->nbytes > 0 && (double)size != f->nbytes) {
        errf(why, len, "size %lld, expected %.0f", (long long)size, f->nbytes);
        return -1;
    }
    if (aproject_file_signed(p, f)) {
        /* BOINC ignores md5 for app files: the signature vouches for them */
        if (!p->code_sign_key || !f->signature || sign_verify_file(p->code_sign_key, path, f->signature) != 1) {
            errf(why, len, "missing or bad signature of an app file");
            return -1;
        }
        if (f->executable && chmod(path, 0700)) {   /* the agent's user alone runs it */
            errf(why, len, "cannot make it executable: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    if (f->md5[0] && strcmp(md5, f->md5)) {
        errf(why, len, "md5 %s, expected %s", md5, f->md5);
        return -1;
    }
    return 0;
}

static void download(struct agent *a, struct aproject *p, struct afile *f, double now)
{
    char path[PATH_MAX], err[512];
    agent_file_path(a, p, f->name, path, sizeof path);
    if (f->nurls == 0) {
        file_failed(a, f, XF_PERMANENT, "no download URL", now);
        return;
    }
    const char *url = f->urls[f->url_index % f->nurls];
    log_debug(LT_HTTP, "download %s from %s (have %lld bytes)", f->name, url, (long long)file_size(path));
    enum xfer_rc rc = xfer_download(url, path, f->nbytes > 0 ? (int64_t)f->nbytes : 0, err, sizeof err);
    if (rc != XF_OK) {
        file_failed(a, f, rc, err, now);
        return;
    }
    if (files_verify(p, f, path, err, sizeof err) != 0) {
        unlink(path);   /* a bad file is fetched again from scratch */
        file_failed(a, f, XF_TRANSIENT, err, now);
        return;
    }
    f->status = AF_PRESENT;
    f->failures = 0;
    log_info("file %s: downloaded", f->name);
    agent_changed(a, 1);
}

static void upload(struct agent *a, struct aproject *p, struct afile *f, double now)
{
    char path[PATH_MAX], err[512];
    agent_file_path(a, p, f->name, path, sizeof path);
    if (!f->upload_url) {
        file_failed(a, f, XF_PERMANENT, "no upload URL", now);
        return;
    }
    enum xfer_rc rc = xfer_upload(f->upload_url, path, f->name, f->max_nbytes, f->md5, f->upload_cert, err, sizeof err);
    if (rc != XF_OK) {
        file_failed(a, f, rc, err, now);
        return;
    }
    f->status = AF_UPLOADED;
    f->failures = 0;
    log_info("file %s: uploaded", f->name);
    agent_changed(a, 0);
}

/* Status of the files r's refs name: 1 all done (target), -1 one failed. */
static int refs_state(const struct aproject *p, const struct afile_ref *refs, int n, enum afile_status target)
{
    int all = 1;
    for (int i = 0; i < n; i++) {
        const struct afile *f = aproject_file(p, refs[i].file_name);
        if (!f || f->status == AF_ERROR)
            return -1;
        all &= f->status == target;
    }
    return all;
}

static int inputs_state(const struct aproject *p, const struct aresult *r)
{
    const struct aworkunit *wu = aproject_wu(p, r->wu_name);
    const struct aapp_version *v = aresult_version(p, r);
    if (!wu || !v)
        return -1;
    int w = refs_state(p, wu->refs, wu->nrefs, AF_PRESENT), x = refs_state(p, v->refs, v->nrefs, AF_PRESENT);
    return w < 0 || x < 0 ? -1 : w && x;
}

static void project_transfers(struct agent *a, struct aproject *p, double now)
{
    for (int i = 0; i < p->nfiles; i++) {
        struct afile *f = &p->files[i];
        if (f->next_try > now)
            continue;
        if (f->status == AF_NEEDED && aproject_file_in_use(p, f->name))
            download(a, p, f, now);
        else if (f->status == AF_TO_UPLOAD)
            upload(a, p, f, now);
    }
    for (int j = 0; j < p->nresults; j++) {
        struct aresult *r = p->results[j];
        if (r->phase == AR_DOWNLOADING) {
            int s = inputs_state(p, r);
            if (s < 0) {
                r->client_state = RS_DOWNLOAD_ERROR;
                r->exit_status = ERR_GIVEUP_DOWNLOAD;
                r->completed = now;
                r->phase = AR_TO_REPORT;
                log_warn("task %s: a file could not be downloaded; reported as an error", r->c.name);
            } else if (s) {
                r->phase = AR_READY;
                log_debug(LT_TASK, "task %s: files ready", r->c.name);
            }
            if (s)
                agent_changed(a, 1);
        } else if (r->phase == AR_UPLOADING && refs_state(p, r->refs, r->nrefs, AF_UPLOADED) != 0) {
            /* uploaded, or an upload given up: reported either way, the
             * server checks what it holds */
            r->phase = AR_TO_REPORT;
            agent_changed(a, 0);
        }
    }
}

void files_transfer(struct agent *a, double now)
{
    for (int i = 0; i < a->st.nprojects; i++)
        project_transfers(a, a->st.projects[i], now);
}

void files_collect(struct agent *a, struct aproject *p)
{
    for (int i = p->nwus - 1; i >= 0; i--) {
        int used = 0;
        for (int j = 0; j < p->nresults && !used; j++)
            used = !strcmp(p->results[j]->wu_name, p->wus[i].name);
        if (used)
            continue;
        free(p->wus[i].command_line);
        memmove(&p->wus[i], &p->wus[i + 1], (size_t)(p->nwus - i - 1) * sizeof *p->wus);
        p->nwus--;
    }
    for (int i = p->nfiles - 1; i >= 0; i--) {
        char path[PATH_MAX];
        if (p->files[i].sticky || aproject_file_in_use(p, p->files[i].name))
            continue;
        agent_file_path(a, p, p->files[i].name, path, sizeof path);
        unlink(path);
        log_debug(LT_HTTP, "file %s: deleted", p->files[i].name);
        aproject_remove_file(p, i);
    }
    agent_changed(a, 0);
}
