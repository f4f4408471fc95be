/* hostinfo.c - probing the machine for <host_info>. */
#include "client/agent/hostinfo.h"

#include "core/digest.h"

#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The value after "key<spaces>:" in /proc/cpuinfo, first occurrence. */
static void cpuinfo_field(const char *key, char *out, size_t len)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    size_t k = strlen(key);
    out[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, key, k) != 0 || !colon)
            continue;
        colon++;
        colon += strspn(colon, " \t");
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(out, len, "%s", colon);
        break;
    }
    if (f)
        fclose(f);
}

void hostinfo_probe(struct hostinfo *h, const char *dir)
{
    struct utsname u;
    struct statvfs vfs;
    char id[1024];
    memset(h, 0, sizeof *h);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    h->ncpus = n > 0 ? (int)n : 1;
    h->iops = 1e9;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0)
        h->m_nbytes = (double)pages * (double)psize;
    if (statvfs(dir, &vfs) == 0) {
        h->d_total = (double)vfs.f_blocks * (double)vfs.f_frsize;
        h->d_free = (double)vfs.f_bavail * (double)vfs.f_frsize;
    }
    if (uname(&u) == 0) {
        snprintf(h->os_name, sizeof h->os_name, "%s", u.sysname);
        snprintf(h->os_version, sizeof h->os_version, "%s", u.release);
        snprintf(h->domain_name, sizeof h->domain_name, "%s", u.nodename);
    }
    cpuinfo_field("vendor_id", h->p_vendor, sizeof h->p_vendor);
    cpuinfo_field("model name", h->p_model, sizeof h->p_model);
    snprintf(id, sizeof id, "%s %s", h->domain_name, dir);
    md5_hex_buf(id, strlen(id), h->host_cpid);
}
