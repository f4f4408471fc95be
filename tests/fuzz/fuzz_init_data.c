/* fuzz_init_data.c - libFuzzer harness for the application runtime's
 * reading of init_data.xml (locus_parse_init_data, which liblocus_app
 * runs in every job the client starts): any input parses without reading
 * past its end (the text is not NUL-terminated); every string comes back
 * NUL-terminated within its buffer and every number finite; and an input
 * it finds no value in leaves the struct as it starts (all zero,
 * gpu_device_num -1). */
#include "locus/locus_app.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define TERMINATED(a) (memchr((a), 0, sizeof(a)) != NULL)

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct locus_init_data d, blank;
    int found = locus_parse_init_data((const char *)data, size, &d);
    check(found >= 0);
    check(TERMINATED(d.app_name) && TERMINATED(d.wu_name) && TERMINATED(d.result_name) &&
          TERMINATED(d.project_dir) && TERMINATED(d.boinc_dir) && TERMINATED(d.user_name) &&
          TERMINATED(d.gpu_type));
    check(isfinite(d.checkpoint_period) && isfinite(d.rsc_fpops_est) && isfinite(d.rsc_fpops_bound) &&
          isfinite(d.rsc_memory_bound) && isfinite(d.rsc_disk_bound) && isfinite(d.wu_cpu_time) &&
          isfinite(d.starting_elapsed_time) && isfinite(d.computation_deadline));
    if (found == 0) {
        memset(&blank, 0, sizeof blank);
        blank.gpu_device_num = -1;
        check(memcmp(&d, &blank, sizeof d) == 0);
    }
    return 0;
}
