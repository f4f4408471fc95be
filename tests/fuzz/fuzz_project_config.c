/* fuzz_project_config.c - libFuzzer harness for config.xml as locusd
 * reads it at start (project_load, of a private folder): any input loads
 * or is refused with a reason (not always one line: a <master_url> or
 * <listen> holding a newline is quoted as it is); a loaded configuration
 * has a port to listen on and saves (as `locus config` does), and what it
 * saves loads back to the same listening addresses and saves again as the
 * same file. */
#include "core/fsutil.h"
#include "core/project.h"
#include "fuzz_tmp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static struct project p, q;   /* 40 KiB each: not on the stack */

/* pr saved as the folder's config.xml, and the file's text. */
static char *saved(const struct project *pr)
{
    char path[1024], err[1024];
    size_t len;
    check(project_save_config(pr, err, sizeof err) == 0);
    char *text = read_file(fuzz_tmp_path(path, "config.xml"), (size_t)1 << 24, &len);
    check(text != NULL);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024], err[1024] = "";
    const char *dir = fuzz_tmp_dir();
    fuzz_tmp_write(path, "config.xml", data, size, 0600);
    if (project_load(&p, dir, err, sizeof err) != 0) {
        check(err[0] != 0);
        return 0;
    }
    check(p.cfg.listen_port > 0 || p.cfg.https_listen_port > 0);
    char *a = saved(&p);
    check(project_load(&q, dir, err, sizeof err) == 0);
    check(!strcmp(p.cfg.listen_addr, q.cfg.listen_addr) && p.cfg.listen_port == q.cfg.listen_port &&
          p.cfg.https_listen_port == q.cfg.https_listen_port);
    char *b = saved(&q);
    check(!strcmp(a, b));
    free(a);
    free(b);
    return 0;
}
