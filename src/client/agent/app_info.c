/* app_info.c - reading a project's app_info.xml (see app_info.h). The
 * whole file is checked before p is touched. */
#include "client/agent/app_info.h"

#include "client/agent/schedmsg.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "core/xmltree.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The <file_info> files: safe names, each present in pdir, the executable
 * ones runnable (the volunteer's files are not changed). */
static int check_files(const struct xml_node *root, const char *pdir, char *err, size_t errlen)
{
    char path[PATH_MAX];
    struct stat st;
    for (const struct xml_node *f = xml_child(root, "file_info"); f; f = xml_next_named(f)) {
        const char *name = xml_child_text(f, "name");
        if (!name || !name_is_safe(name) || strlen(name) >= AS_NAME_LEN) {
            errf(err, errlen, "%s: a file_info without a safe <name>", APP_INFO_FILE);
            return -1;
        }
        if (path_printf(path, sizeof path, "%s/%s", pdir, name) || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            errf(err, errlen, "%s names %s, which is not a file in %s", APP_INFO_FILE, name, pdir);
            return -1;
        }
        if (xml_child(f, "executable") && access(path, X_OK) != 0) {
            errf(err, errlen, "%s: %s is marked <executable/> but the agent cannot run it", APP_INFO_FILE, name);
            return -1;
        }
    }
    return 0;
}

/* Marks the <file_info> files present in p (added when unknown). */
static void take_files(struct aproject *p, const struct xml_node *root, const char *pdir)
{
    char path[PATH_MAX];
    for (const struct xml_node *n = xml_child(root, "file_info"); n; n = xml_next_named(n)) {
        const char *name = xml_child_text(n, "name");
        struct afile *f = aproject_file(p, name);
        if (!f) {
            f = aproject_add_file(p);
            snprintf(f->name, sizeof f->name, "%s", name);
        }
        f->executable = xml_child(n, "executable") != NULL;
        f->status = AF_PRESENT;
        f->failures = 0;
        path_printf(path, sizeof path, "%s/%s", pdir, name);
        f->nbytes = (double)file_size(path);
    }
}

int app_info_load(struct aproject *p, const char *pdir, char *err, size_t errlen)
{
    char path[PATH_MAX], why[512];
    struct aapp_version v[APP_INFO_MAX_VERSIONS];
    int n = 0;
    if (path_printf(path, sizeof path, "%s/%s", pdir, APP_INFO_FILE) || file_size(path) < 0)
        return 0;
    struct xml_node *root = xml_parse_file(path, why, sizeof why);
    if (!root || strcmp(root->name, "app_info") != 0) {
        errf(err, errlen, "%s: %s", path, root ? "its root element is not <app_info>" : why);
        xml_free(root);
        return -1;
    }
    int rc = check_files(root, pdir, err, errlen);
    for (const struct xml_node *x = xml_child(root, "app_version"); x && rc == 0; x = xml_next_named(x)) {
        if (n == APP_INFO_MAX_VERSIONS) {
            errf(err, errlen, "%s: more than %d app versions", path, APP_INFO_MAX_VERSIONS);
            rc = -1;
        } else if (schedmsg_read_version(x, root, p, &v[n++], why, sizeof why) != 0) {
            errf(err, errlen, "%s: %s", path, why);
            rc = -1;
        }
    }
    if (rc == 0 && n == 0) {
        errf(err, errlen, "%s lists no app version", path);
        rc = -1;
    }
    if (rc == 0) {
        p->nversions = 0;
        for (int i = 0; i < n; i++)
            *aproject_add_version(p) = v[i];
        take_files(p, root, pdir);
        p->anonymous = 1;
        rc = 1;
    }
    xml_free(root);
    return rc;
}
