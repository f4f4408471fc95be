/* cmd_app.c - `locus app add`: registers an app version for one platform
 * (and plan class, which the project's plan_class.xml must define);
 * `locus app set`: an app's homogeneous redundancy (sched/hr.h).
 * Its files are copied into the download area under names unique to the
 * version, and each is signed with the project's code signing key, since
 * the BOINC client refuses any app version file without a valid signature
 * (core/sign.h). */
#include "cli/cli.h"
#include "core/fsutil.h"
#include "core/sign.h"
#include "core/strbuf.h"
#include "sched/plan_class.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP_FILES_MAX ((int)(sizeof ((struct app_version *)0)->files / sizeof ((struct app_version *)0)->files[0]))

struct version_file {
    char src[PROJECT_PATH_MAX];      /* the file to copy */
    char phys[LOCUS_NAME_MAX + 1];   /* name in the download area and the store */
    char open_name[128];             /* name the app opens in its slot */
};

struct app_add {
    const char *name, *platform, *friendly, *plan_class, *hr;
    int hr_level;               /* what hr names; for a new app only */
    int new_app;
    struct app_version v;
    int nfiles;
    struct version_file files[APP_FILES_MAX];
    char key[PROJECT_PATH_MAX + 32];
};

/* Names of one file of the version: physical "APP_N_PLATFORM[_BASENAME]",
 * open name as given, else the physical name (main program) or the basename. */
static int plan_file(struct app_add *a, const char *arg, int main_program, char *err, size_t errlen)
{
    struct version_file *f = &a->files[a->nfiles++];
    char base[LOCUS_NAME_MAX + 2];
    snprintf(f->src, sizeof f->src, "%s", arg);
    char *eq = main_program ? NULL : strrchr(f->src, '=');
    if (eq) *eq = 0;
    if (cli_check_source(f->src, err, errlen)) return CLI_FAIL;
    cli_basename(f->src, base, sizeof base);
    /* versions of one number differ by plan class: so do their files */
    char tag[PLATFORM_LEN + PLAN_CLASS_LEN + 2];
    snprintf(tag, sizeof tag, "%s%s%s", a->platform, a->v.plan_class[0] ? "__" : "", a->v.plan_class);
    int len = main_program
        ? snprintf(f->phys, sizeof f->phys, "%s_%d_%s", a->name, a->v.version_num, tag)
        : snprintf(f->phys, sizeof f->phys, "%s_%d_%s_%s", a->name, a->v.version_num, tag, base);
    if (len >= (int)sizeof f->phys || !name_is_safe(f->phys))
        return cli_errf(err, errlen, CLI_FAIL, "file name '%s' for %s is not a safe name "
                        "(A-Z a-z 0-9 . _ + -, at most %d characters): rename the file", f->phys, f->src, LOCUS_NAME_MAX);
    len = snprintf(f->open_name, sizeof f->open_name, "%s", eq ? eq + 1 : main_program ? f->phys : base);
    if (len >= (int)sizeof f->open_name || !name_is_safe(f->open_name))
        return cli_errf(err, errlen, CLI_FAIL, "open name '%s' is not a safe name "
                        "(A-Z a-z 0-9 . _ + -, at most %zu characters)", f->open_name, sizeof f->open_name - 1);
    for (int i = 0; i < a->nfiles - 1; i++)
        if (!strcmp(a->files[i].open_name, f->open_name) || !strcmp(a->files[i].phys, f->phys))
            return cli_errf(err, errlen, CLI_FAIL, "two files of the version are named '%s'", f->open_name);
    return 0;
}

/* BOINC's platform names (its wiki's BoincPlatforms, and what its clients
 * send as platform_name or alt_platform): a version for any other name is
 * never sent, as no client asks for it, so a typo ("linux") is refused
 * here rather than found by work that never goes out. */
static const char *const boinc_platforms[] = {
    "windows_intelx86",         "windows_x86_64",           "windows_arm64",
    "i686-pc-linux-gnu",        "x86_64-pc-linux-gnu",      "aarch64-unknown-linux-gnu",
    "arm-unknown-linux-gnueabihf", "powerpc64-unknown-linux-gnu", "powerpc64le-unknown-linux-gnu",
    "powerpc64-ps3-linux-gnu",  "powerpc-apple-darwin",     "i686-apple-darwin",
    "x86_64-apple-darwin",      "arm64-apple-darwin",       "arm-android-linux-gnu",
    "aarch64-android-linux-gnu", "x86-android-linux-gnu",   "x86_64-android-linux-gnu",
    "sparc-sun-solaris2.7",     "sparc-sun-solaris",        "sparc64-sun-solaris",
    "x86_64-pc-freebsd__sse2",  "riscv64-unknown-linux-gnu",
};
#define NPLATFORMS (sizeof boinc_platforms / sizeof *boinc_platforms)

/* 0 if name is one of BOINC's platforms; else the message naming them all. */
static int check_platform(const char *name, char *err, size_t errlen)
{
    for (size_t i = 0; i < NPLATFORMS; i++)
        if (!strcmp(name, boinc_platforms[i])) return 0;
    int n = snprintf(err, errlen, "--platform: '%s' is not a BOINC platform name; known:", name);
    for (size_t i = 0; i < NPLATFORMS && n > 0 && (size_t)n < errlen; i++)
        n += snprintf(err + n, errlen - (size_t)n, " %s", boinc_platforms[i]);
    return -1;
}

static int check_args(struct app_add *a, const char *exe, const struct cli_list *extra, const char *api,
                      char *err, size_t errlen)
{
    if (!name_is_safe(a->name) || strlen(a->name) >= sizeof ((struct app *)0)->name)
        return cli_errf(err, errlen, CLI_FAIL, "app name '%s' is not a safe name (A-Z a-z 0-9 . _ + -)", a->name);
    if (check_platform(a->platform, err, errlen)) return CLI_FAIL;
    if (a->v.version_num < 1) return cli_errf(err, errlen, CLI_FAIL, "--version must be a positive integer");
    if (a->plan_class && !plan_class_name_ok(a->plan_class))
        return cli_errf(err, errlen, CLI_FAIL, "plan class '%s' is not a name of 1-%d letters, digits, '_', '-' or '.'",
                        a->plan_class, PLAN_CLASS_LEN - 1);
    if (a->plan_class) snprintf(a->v.plan_class, sizeof a->v.plan_class, "%s", a->plan_class);
    if (a->v.avg_ncpus <= 0) return cli_errf(err, errlen, CLI_FAIL, "--avg-ncpus must be positive");
    if (!api[0] || strlen(api) >= sizeof a->v.api_version)
        return cli_errf(err, errlen, CLI_FAIL, "--api-version must be 1 to %zu characters, e.g. 7.20.0",
                        sizeof a->v.api_version - 1);
    if (a->hr && (a->hr_level = hr_level_parse(a->hr)) < 0)
        return cli_errf(err, errlen, CLI_FAIL, "--hr: '%s' is none of off, coarse, fine", a->hr);
    if (a->friendly && strlen(a->friendly) >= sizeof ((struct app *)0)->user_friendly_name)
        return cli_errf(err, errlen, CLI_FAIL, "--friendly-name is longer than 127 characters");
    if (extra->n >= APP_FILES_MAX)
        return cli_errf(err, errlen, CLI_FAIL, "at most %d --file per app version", APP_FILES_MAX - 1);
    snprintf(a->v.api_version, sizeof a->v.api_version, "%s", api);
    int rc = plan_file(a, exe, 1, err, errlen);
    for (int i = 0; !rc && i < extra->n; i++) rc = plan_file(a, extra->v[i], 0, err, errlen);
    return rc;
}

struct version_key { const struct app_version *v; int found; };

static int same_version(void *ctx, const struct app_version *v)
{
    struct version_key *k = ctx;
    k->found = v->app_id == k->v->app_id && v->version_num == k->v->version_num &&
               !strcmp(v->platform, k->v->platform) && !strcmp(v->plan_class, k->v->plan_class);
    return k->found;
}

/* The plan class the version names must be defined in plan_class.xml, so
 * that a typo is found here rather than by versions never sent. */
static int check_plan_class(const struct cli_project *cp, const char *name, char *err, size_t errlen)
{
    char path[PROJECT_PATH_MAX + 32], msg[CLI_ERR_MAX];
    project_path(&cp->p, path, sizeof path, "plan_class.xml");
    size_t len;
    char *text = read_file(path, XML_PLAN_CLASS_MAX, &len);
    if (!text)
        return cli_errf(err, errlen, CLI_FAIL, "plan class %s: cannot read %s (%s): define the plan class there first",
                        name, path, strerror(errno));
    struct plan_class_set set;
    int rc = plan_classes_parse(text, len, &set, msg, sizeof msg);
    free(text);
    if (rc) return cli_errf(err, errlen, CLI_FAIL, "%s: %s", path, msg);
    if (!plan_class_find(&set, name)) rc = cli_errf(err, errlen, CLI_FAIL, "%s defines no plan class %s", path, name);
    plan_classes_free(&set);
    return rc;
}

/* The app, created if new; then no existing version may clash. */
static int find_app(struct cli_project *cp, struct app_add *a, char *err, size_t errlen)
{
    struct app app = {.id = 0};
    int rc = store_app_by_name(cp->s, a->name, &app);
    if (rc == 1) {
        snprintf(app.name, sizeof app.name, "%s", a->name);
        snprintf(app.user_friendly_name, sizeof app.user_friendly_name, "%s", a->friendly ? a->friendly : "");
        app.hr_level = a->hr_level;
        rc = store_app_insert(cp->s, &app);
        a->new_app = 1;
    } else if (rc == 0 && a->hr && app.hr_level != a->hr_level) {
        return cli_errf(err, errlen, CLI_FAIL, "app %s has --hr %s: change it with `locus app set`", a->name,
                        hr_level_name(app.hr_level));
    }
    if (rc) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    a->v.app_id = app.id;
    struct version_key k = {&a->v, 0};
    if (store_each_app_version(cp->s, 0, same_version, &k))
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    if (k.found)
        return cli_errf(err, errlen, CLI_FAIL, "app %s already has version %d for %s%s%s: use a higher --version",
                        a->name, a->v.version_num, a->platform, a->v.plan_class[0] ? " and plan class " : "",
                        a->v.plan_class);
    return 0;
}

/* Copies, signs and registers one file of the version. */
static int add_file(struct cli_project *cp, struct cli_copies *copies, struct app_add *a, int i,
                    char *err, size_t errlen)
{
    const struct version_file *vf = &a->files[i];
    struct file_rec f = {.executable = 1};
    struct file_rec old;
    int rc = store_file_by_name(cp->s, vf->phys, &old);
    if (rc == 0) {
        file_rec_clear(&old);
        return cli_errf(err, errlen, CLI_FAIL, "a file named %s is already registered: use a higher --version",
                        vf->phys);
    }
    if (rc < 0) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    snprintf(f.name, sizeof f.name, "%s", vf->phys);
    if (cli_copy_to_download(&cp->p, copies, vf->src, vf->phys, &f, err, errlen)) return CLI_FAIL;
    char msg[CLI_ERR_MAX];
    f.signature = sign_file(a->key, copies->paths[copies->n - 1], msg, sizeof msg);
    if (!f.signature) return cli_errf(err, errlen, CLI_FAIL, "signing %s: %s", vf->phys, msg);
    rc = store_file_insert(cp->s, &f);
    file_rec_clear(&f);
    if (rc) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    struct app_version_file *avf = &a->v.files[a->v.nfiles++];
    avf->file_id = f.id;
    avf->main_program = i == 0;
    memcpy(avf->open_name, vf->open_name, sizeof avf->open_name);
    return 0;
}

static int add_version(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    struct app_add *a = ctx;
    int rc = find_app(cp, a, err, errlen);
    for (int i = 0; !rc && i < a->nfiles; i++) rc = add_file(cp, copies, a, i, err, errlen);
    if (!rc && store_app_version_insert(cp->s, &a->v))
        rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    return rc;
}

int cmd_app_add(int argc, char **argv, char *err, size_t errlen)
{
    struct app_add *a = xcalloc(1, sizeof *a);
    const char *exe = NULL, *api = "7.20.0", *pos[2];
    struct cli_list extra = {.n = 0};
    a->v.avg_ncpus = 1;
    struct cli_opt opts[] = {
        {"platform", OPT_STR, &a->platform, 1, 0},
        {"exe", OPT_STR, &exe, 1, 0},
        {"version", OPT_INT, &a->v.version_num, 1, 0},
        {"api-version", OPT_STR, &api, 0, 0},
        {"avg-ncpus", OPT_DOUBLE, &a->v.avg_ncpus, 0, 0},
        {"friendly-name", OPT_STR, &a->friendly, 0, 0},
        {"plan-class", OPT_STR, &a->plan_class, 0, 0},
        {"hr", OPT_STR, &a->hr, 0, 0},
        {"file", OPT_LIST, &extra, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    struct cli_project cp = {.s = NULL};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (!rc) {
        a->name = pos[1];
        snprintf(a->v.platform, sizeof a->v.platform, "%s", a->platform);
        rc = check_args(a, exe, &extra, api, err, errlen);
    }
    if (!rc) rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) {
        project_path(&cp.p, a->key, sizeof a->key, "keys/code_sign_private.pem");
        if (file_size(a->key) < 0)
            rc = cli_errf(err, errlen, CLI_FAIL, "the code signing key %s is absent: put it back to sign app files "
                          "(or add the version where the key is kept)", a->key);
    }
    if (!rc && a->plan_class) rc = check_plan_class(&cp, a->plan_class, err, errlen);
    if (!rc) rc = cli_transaction(&cp, add_version, a, err, errlen);
    if (!rc && a->new_app) printf("created app %s\n", a->name);
    if (!rc)
        printf("added %s version %d for %s%s%s: %d signed file%s (main program %s)\n", a->name, a->v.version_num,
               a->platform, a->plan_class ? ", plan class " : "", a->plan_class ? a->plan_class : "", a->nfiles,
               a->nfiles > 1 ? "s" : "", a->files[0].phys);
    cli_close(&cp);
    free(a);
    return rc;
}

/* An app's level changes for the jobs sent from then on (locusd reads the
 * store again within its refresh period): a job already committed to a
 * class under another level is free again (hr.h). */
int cmd_app_set(int argc, char **argv, char *err, size_t errlen)
{
    const char *hr = NULL, *pos[2];
    struct cli_opt opts[] = {
        {"hr", OPT_STR, &hr, 1, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    int level = rc ? -1 : hr_level_parse(hr);
    if (!rc && level < 0) rc = cli_errf(err, errlen, CLI_FAIL, "--hr: '%s' is none of off, coarse, fine", hr);
    struct cli_project cp = {.s = NULL};
    if (!rc) rc = cli_open(&cp, pos[0], 0, err, errlen);
    struct app app;
    if (!rc) {
        int found = store_app_by_name(cp.s, pos[1], &app);
        if (found == 1) rc = cli_errf(err, errlen, CLI_FAIL, "no app named %s", pos[1]);
        else if (found || store_app_set_hr(cp.s, app.id, level))
            rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    }
    if (!rc) printf("app %s: homogeneous redundancy %s (was %s)\n", pos[1], hr_level_name(level), hr_level_name(app.hr_level));
    cli_close(&cp);
    return rc;
}
