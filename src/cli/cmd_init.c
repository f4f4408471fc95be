/* cmd_init.c - `locus init DIR --url URL [--name NAME]`: creates a project
 * (folders, config.xml, the store, the code signing key). The project is
 * built in a hidden sibling folder and renamed into place at the end, so a
 * failure at any step leaves nothing behind. */
#include "cli/cli.h"
#include "core/fsutil.h"
#include "core/sign.h"
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_empty_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)))
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

/* DIR may be absent or an empty folder: anything else might be someone's data. */
static int check_target(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st)) {
        if (errno == ENOENT) return 0;
        return cli_errf(err, errlen, CLI_FAIL, "cannot use %s: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) return cli_errf(err, errlen, CLI_FAIL, "%s exists and is not a folder", dir);
    char cfg[PROJECT_PATH_MAX + 16];
    snprintf(cfg, sizeof cfg, "%s/config.xml", dir);
    if (file_size(cfg) >= 0)
        return cli_errf(err, errlen, CLI_FAIL, "%s is already a project (it has a config.xml): refusing to touch it", dir);
    if (!is_empty_dir(dir))
        return cli_errf(err, errlen, CLI_FAIL, "%s is not empty: choose a new or empty folder", dir);
    return 0;
}

static int make_folders(const struct project *p, char *err, size_t errlen)
{
    static const struct { const char *name; int mode; } folders[] = {
        {"keys", 0700}, {"download", 0700}, {"upload", 0700}, {"results", 0700},
    };
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
        char path[PROJECT_PATH_MAX + 16];
        project_path(p, path, sizeof path, folders[i].name);
        if (mkdir(path, (mode_t)folders[i].mode))
            return cli_errf(err, errlen, CLI_FAIL, "cannot create %s: %s", path, strerror(errno));
    }
    return 0;
}

/* Everything of a project, inside p->dir (the temporary folder). */
static int build_project(struct project *p, char *err, size_t errlen)
{
    if (make_folders(p, err, errlen)) return CLI_FAIL;
    char msg[CLI_ERR_MAX];
    if (project_save_config(p, msg, sizeof msg)) return cli_errf(err, errlen, CLI_FAIL, "%s", msg);

    char db[PROJECT_PATH_MAX + 16], key[PROJECT_PATH_MAX + 32], pub[PROJECT_PATH_MAX + 32];
    project_path(p, db, sizeof db, "locus.db");
    project_path(p, key, sizeof key, "keys/code_sign_private.pem");
    project_path(p, pub, sizeof pub, "keys/code_sign_public");
    struct store *s = store_open(db, STORE_CREATE, msg, sizeof msg);
    if (!s) return cli_errf(err, errlen, CLI_FAIL, "%s", msg);
    store_close(s);
    if (sign_generate_key(key, pub, msg, sizeof msg)) return cli_errf(err, errlen, CLI_FAIL, "%s", msg);
    return 0;
}

static void print_created(const char *dir, const char *name, const char *url)
{
    printf("created project %s in %s\n"
           "  config.xml                  settings; master URL %s\n"
           "  locus.db                    the store\n"
           "  keys/code_sign_private.pem  code signing key: back it up; it may live off the server once apps are signed\n"
           "  keys/code_sign_public       the public key sent to clients\n"
           "  download/ upload/ results/  files for and from hosts\n"
           "next steps:\n"
           "  locus app add %s APP --platform x86_64-pc-linux-gnu --exe PROGRAM --version 1\n"
           "  locus file add %s INPUT_FILE\n"
           "  locus user create %s NAME\n"
           "  locus batch create %s --app APP --jobs JOBS.jsonl\n"
           "  locusd %s\n",
           name, dir, url, dir, dir, dir, dir, dir);
}

int cmd_init(int argc, char **argv, char *err, size_t errlen)
{
    const char *url = NULL, *name = NULL, *pos[1];
    struct cli_opt opts[] = {
        {"url", OPT_STR, &url, 1, 0},
        {"name", OPT_STR, &name, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (rc) return rc;
    char dir[PROJECT_PATH_MAX], base[256];
    snprintf(dir, sizeof dir, "%s", pos[0]);
    for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) dir[n - 1] = 0;
    cli_basename(dir, base, sizeof base);
    if (!name) name = base;
    struct project p;
    memset(&p, 0, sizeof p);
    project_config_defaults(&p.cfg);
    char msg[CLI_ERR_MAX];
    if (project_config_set(&p.cfg, "project_name", name, msg, sizeof msg))
        return cli_errf(err, errlen, CLI_FAIL, "%s (--name)", msg);
    if (project_config_set(&p.cfg, "master_url", url, msg, sizeof msg))
        return cli_errf(err, errlen, CLI_FAIL, "%s (--url)", msg);
    if (check_target(dir, err, errlen)) return CLI_FAIL;

    size_t parent_len = strlen(dir) - strlen(base);
    if (snprintf(p.dir, sizeof p.dir, "%.*s.%s.init-XXXXXX", (int)parent_len, dir, base) >= (int)sizeof p.dir - 64)
        return cli_errf(err, errlen, CLI_FAIL, "the path %s is too long", dir);
    if (!mkdtemp(p.dir))
        return cli_errf(err, errlen, CLI_FAIL, "cannot create a folder next to %s: %s (does its parent exist?)",
                        dir, strerror(errno));
    /* private: the store holds every user's data, keys/ the project's secrets */
    rc = chmod(p.dir, PROJECT_DIR_MODE) ? cli_errf(err, errlen, CLI_FAIL, "chmod %s: %s", p.dir, strerror(errno))
                            : build_project(&p, err, errlen);
    if (!rc && rename(p.dir, dir))
        rc = cli_errf(err, errlen, CLI_FAIL, "cannot move %s to %s: %s", p.dir, dir, strerror(errno));
    if (rc) {
        cli_remove_tree(p.dir);
        return rc;
    }
    print_created(dir, name, url);
    return 0;
}
