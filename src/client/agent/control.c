/* control.c - the daemon's answers to control commands: status, tasks,
 * projects, attach, detach, suspend, resume, update. Each reply is a JSON
 * object with "ok"; changes are saved before the reply is sent, so an
 * acknowledged command survives a crash. */
#include "client/agent/agent_internal.h"

#include "client/agent/exec.h"
#include "core/fsutil.h"
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *phase_names[] = {"downloading", "ready", "running", "uploading", "to_report"};

/* A failed command's reply: its message, on one line. */
static json_t *fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *fail(const char *fmt, ...)
{
    char msg[1200], text[sizeof msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* JSON takes only UTF-8, and a message cut to fit (here, or a URL
     * quoted by xfer) may end inside a character */
    astate_text_copy(text, sizeof text, msg);
    return json_pack("{s:b, s:s}", "ok", 0, "error", text);
}

static const char *task_state(const struct aresult *r)
{
    if (r->phase == AR_RUNNING && r->quit_sent)
        return "quitting";
    if (r->phase == AR_RUNNING && r->suspended_via_signal)
        return "suspended";
    if (r->phase == AR_READY && r->c.elapsed > 0)
        return "preempted";
    return phase_names[r->phase];
}

static json_t *cmd_status(struct agent *a)
{
    int ntasks = 0, running = 0;
    for (int i = 0; i < a->st.nprojects; i++)
        for (int j = 0; j < a->st.projects[i]->nresults; j++) {
            const struct aresult *r = a->st.projects[i]->results[j];
            ntasks++;
            running += r->phase == AR_RUNNING && r->pid && !r->suspended_via_signal;
        }
    int ncpus = a->st.prefs.max_cpus > 0 && a->st.prefs.max_cpus < a->host.ncpus ? a->st.prefs.max_cpus : a->host.ncpus;
    return json_pack("{s:b, s:i, s:i, s:i, s:i, s:b, s:f, s:f, s:f}", "ok", 1, "projects", a->st.nprojects,
                     "tasks", ntasks, "running", running, "ncpus", ncpus, "suspended", a->st.user_suspended,
                     "on_frac", a->st.stats.on_frac, "active_frac", a->st.stats.active_frac, "cpu_efficiency",
                     a->st.stats.cpu_efficiency);
}

static json_t *cmd_tasks(struct agent *a)
{
    json_t *list = json_array();
    for (int i = 0; i < a->st.nprojects; i++)
        for (int j = 0; j < a->st.projects[i]->nresults; j++) {
            const struct aresult *r = a->st.projects[i]->results[j];
            json_array_append_new(list, json_pack(
                "{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:i, s:i}", "name", r->c.name, "project",
                a->st.projects[i]->c.url, "state", task_state(r), "fraction_done", r->c.fraction_done, "elapsed",
                r->c.elapsed, "cpu_time", r->cpu_time, "checkpoint_elapsed", r->c.checkpoint_elapsed,
                "deadline", r->c.deadline, "slot", r->slot, "exit_status", r->exit_status));
        }
    return json_pack("{s:b, s:o}", "ok", 1, "tasks", list);
}

static json_t *cmd_projects(struct agent *a)
{
    json_t *list = json_array();
    for (int i = 0; i < a->st.nprojects; i++) {
        const struct aproject *p = a->st.projects[i];
        json_array_append_new(list, json_pack(
            "{s:s, s:s, s:f, s:b, s:I, s:i, s:f, s:f, s:f, s:f, s:s, s:f}", "url", p->c.url, "name", p->c.name,
            "resource_share", p->c.resource_share, "suspended", p->c.suspended, "hostid", (json_int_t)p->hostid,
            "tasks", p->nresults, "short_term_debt", p->c.short_term_debt, "long_term_debt", p->c.long_term_debt,
            "dcf", p->c.dcf, "min_rpc_time", p->c.min_rpc_time, "last_error", p->last_error, "last_error_time",
            p->last_error_time));
    }
    return json_pack("{s:b, s:o}", "ok", 1, "projects", list);
}

static int url_ok(const char *url)
{
    size_t n = strlen(url);
    return (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) && n < 500 && url[n - 1] == '/';
}

/* Adds the project and, unless the request says "contact": false (an
 * offline setup: the loop contacts it later), makes its first contact at
 * once; a failed one leaves the state as it was, and the reply says why. */
static json_t *cmd_attach(struct agent *a, json_t *req)
{
    const char *url = json_string_value(json_object_get(req, "url"));
    const char *key = json_string_value(json_object_get(req, "key"));
    json_t *share = json_object_get(req, "share");
    int contact = !json_is_false(json_object_get(req, "contact"));
    char dir_name[AS_NAME_LEN], err[600];
    if (!url || !url_ok(url))
        return fail("attach: '%s' is not a project URL (http[s]://host/path/, ending with '/')", url ? url : "");
    if (!key || !*key || strlen(key) >= AS_NAME_LEN)
        return fail("attach: %s", "the account key is missing or too long");
    if (astate_project(&a->st, url))
        return fail("attach: already attached to %s", url);
    /* two projects in one folder would delete each other's files */
    project_dir_name(url, dir_name, sizeof dir_name);
    for (int i = 0; i < a->st.nprojects; i++)
        if (!strcmp(a->st.projects[i]->dir_name, dir_name))
            return fail("attach: %s would share the folder projects/%s of %s, attached already", url, dir_name,
                        a->st.projects[i]->c.url);
    struct aproject *p = astate_add_project(&a->st, url, key, share ? json_number_value(share) : 100);
    if (contact && rpc_attach(a, p, agent_now(), err, sizeof err) != 0) {
        astate_remove_project(&a->st, a->st.nprojects - 1);
        log_warn("attach %s failed: %s", url, err);
        return fail("attach %s: %s", url, err);
    }
    char path[PATH_MAX];
    agent_file_path(a, p, "", path, sizeof path);
    mkdir_p(path, 0755);
    log_info("attached to %s (share %.0f)%s", url, p->c.resource_share, contact ? "" : ", not contacted yet");
    agent_changed(a, 1);
    return json_pack("{s:b, s:s, s:s, s:I, s:i, s:b}", "ok", 1, "url", p->c.url, "name", p->c.name, "hostid",
                     (json_int_t)p->hostid, "tasks", p->nresults, "contacted", contact);
}

static json_t *cmd_detach(struct agent *a, json_t *req)
{
    const char *url = json_string_value(json_object_get(req, "url"));
    for (int i = 0; url && i < a->st.nprojects; i++) {
        struct aproject *p = a->st.projects[i];
        if (strcmp(p->c.url, url))
            continue;
        char path[PATH_MAX];
        tasks_kill_project(a, p);
        agent_file_path(a, p, "", path, sizeof path);
        exec_remove_tree(path);
        astate_remove_project(&a->st, i);
        log_info("detached from %s", url);
        agent_changed(a, 1);
        return json_pack("{s:b}", "ok", 1);
    }
    return fail("detach: not attached to %s", url ? url : "");
}

/* suspend / resume / update of one project (req "project") or all. */
static json_t *cmd_switch(struct agent *a, json_t *req, const char *cmd)
{
    const char *url = json_string_value(json_object_get(req, "project"));
    int on = !strcmp(cmd, "suspend"), found = 0;
    if (!url && strcmp(cmd, "update"))
        a->st.user_suspended = on;
    for (int i = 0; i < a->st.nprojects; i++) {
        struct aproject *p = a->st.projects[i];
        if (url && strcmp(p->c.url, url))
            continue;
        found = 1;
        if (!strcmp(cmd, "update")) {
            p->c.min_rpc_time = 0;
            p->fetch_backoff_until = 0;
            p->next_rpc_time = 1;   /* an RPC at the next turn */
        } else if (url) {
            p->c.suspended = on;
        }
    }
    if (url && !found)
        return fail("not attached to %s", url);
    log_info("%s %s", cmd, url ? url : "all");
    agent_changed(a, 1);
    return json_pack("{s:b}", "ok", 1);
}

json_t *control_handle(void *arg, json_t *req)
{
    struct agent *a = arg;
    const char *cmd = json_string_value(json_object_get(req, "cmd"));
    json_t *reply;
    if (!strcmp(cmd, "status"))
        return cmd_status(a);
    if (!strcmp(cmd, "tasks"))
        return cmd_tasks(a);
    if (!strcmp(cmd, "projects"))
        return cmd_projects(a);
    if (!strcmp(cmd, "attach"))
        reply = cmd_attach(a, req);
    else if (!strcmp(cmd, "detach"))
        reply = cmd_detach(a, req);
    else if (!strcmp(cmd, "suspend") || !strcmp(cmd, "resume") || !strcmp(cmd, "update"))
        reply = cmd_switch(a, req, cmd);
    else
        return fail("unknown command '%s'", cmd);
    agent_save(a);
    return reply;
}
