/* figures.c - the figures of merit of a run, as text or as one JSON line
 * (snake_case keys, the last line of the output so scripts can `tail -1`);
 * those of work sequences follow when the workload has some, then those of
 * GPUs when hosts have some, then those of black holes, then those of
 * trust with wrong hosts or adaptive replication, then each
 * batch's completion time (an array in JSON). */
#include "sim/server_sim.h"

#define FIGS(X)                                                                                          \
    X(makespan_s, "%.1f", f->makespan_s) X(ideal_s, "%.1f", f->ideal_s)                                  \
    X(makespan_ratio, "%.4f", f->makespan_ratio) X(bytes_downloaded, "%.0f", f->bytes_downloaded)        \
    X(bytes_lower_bound, "%.0f", f->bytes_lower_bound) X(bytes_ratio, "%.4f", f->bytes_ratio)            \
    X(transfers_per_file, "%.4f", f->transfers_per_file) X(jobs_per_transfer, "%.4f", f->jobs_per_transfer) \
    X(wasted_flops_fraction, "%.6f", f->wasted_flops_fraction) X(timeouts, "%.0f", (double)f->timeouts)  \
    X(turnaround_p50_s, "%.1f", f->turnaround_p50_s) X(turnaround_p99_s, "%.1f", f->turnaround_p99_s)    \
    X(sim_jobs_per_s, "%.6f", f->sim_jobs_per_s) X(events, "%.0f", (double)f->events)                    \
    X(wall_s, "%.3f", f->wall_s) X(jobs_done, "%.0f", (double)f->jobs_done)                              \
    X(jobs_failed, "%.0f", (double)f->jobs_failed) X(rpcs, "%.0f", (double)f->rpcs)                      \
    X(transfers, "%.0f", (double)f->transfers) X(file_deletes, "%.0f", (double)f->file_deletes) \
    X(file_evictions, "%.0f", (double)f->file_evictions) \
    X(flops_computed, "%.6g", f->flops_computed) X(flops_useful, "%.6g", f->flops_useful) \
    X(flops_accepted, "%.6g", f->flops_accepted) X(flops_overhead, "%.4f", f->flops_overhead) \
    X(wrong_accepted, "%.0f", (double)f->wrong_accepted) \
    X(cursor_joins, "%.0f", (double)f->cursor_joins) X(cursor_moves, "%.0f", (double)f->cursor_moves) \
    X(cursor_lanes, "%.0f", (double)f->cursor_lanes)

/* Work sequences (docs/sim.md, "Work sequences"). */
#define SEQ_FIGS(X)                                                                                      \
    X(sequences, "%.0f", (double)f->seq.sequences) X(sequences_ended, "%.0f", (double)f->seq.sequences_ended) \
    X(sequence_makespan_s, "%.1f", f->seq.makespan_s) X(sequence_ideal_s, "%.1f", f->seq.ideal_s)      \
    X(sequence_time_p50_s, "%.1f", f->seq.time_p50_s) X(sequence_time_max_s, "%.1f", f->seq.time_max_s) \
    X(state_bytes_uploaded, "%.0f", f->seq.state_bytes_uploaded)                                        \
    X(state_bytes_every_result, "%.0f", f->seq.state_bytes_every_result)                                \
    X(state_bytes_ratio, "%.4f", f->seq.state_bytes_ratio)                                              \
    X(state_bytes_downloaded, "%.0f", f->seq.state_bytes_downloaded)                                    \
    X(state_uploads, "%.0f", (double)f->seq.state_uploads) X(state_downloads, "%.0f", (double)f->seq.state_downloads) \
    X(state_deletes, "%.0f", (double)f->seq.state_deletes)                                              \
    X(state_files_held_max, "%.0f", (double)f->seq.state_files_held_max)                                \
    X(assignments, "%.0f", (double)f->seq.assignments) X(relocations, "%.0f", (double)f->seq.relocations) \
    X(results_lost_per_relocation, "%.4f", f->seq.results_lost_per_relocation)                          \
    X(results_lost, "%.0f", (double)f->seq.results_lost) X(results_lost_max, "%.0f", (double)f->seq.results_lost_max) \
    X(extensions, "%.0f", (double)f->seq.extensions) X(results_computed, "%.0f", (double)f->seq.results_computed) \
    X(positions_final, "%.0f", (double)f->seq.positions_final)                                          \
    X(work_lost_flops, "%.6g", f->seq.work_lost_flops) X(work_lost_fraction, "%.6f", f->seq.work_lost_fraction)

/* GPUs (docs/sim.md, "GPU hosts"). */
#define GPU_FIGS(X)                                                                                      \
    X(gpu_hosts, "%.0f", (double)f->gpu_hosts) X(gpu_jobs, "%.0f", (double)f->gpu_jobs)                  \
    X(gpu_jobs_fraction, "%.4f", f->gpu_jobs_fraction) X(gpu_busy_fraction, "%.4f", f->gpu_busy_fraction) \
    X(gpu_tasks_max, "%.0f", (double)f->gpu_tasks_max)

/* Black holes (docs/sim.md, "Black holes"). */
#define BLACK_HOLE_FIGS(X)                                                                               \
    X(black_hole_hosts, "%.0f", (double)f->black_hole_hosts) X(instances_sent, "%.0f", (double)f->instances_sent) \
    X(black_hole_instances, "%.0f", (double)f->black_hole_instances)                                     \
    X(black_hole_instances_late, "%.0f", (double)f->black_hole_instances_late)                           \
    X(black_hole_late_share, "%.6f", f->black_hole_late_share)                                           \
    X(jobs_lost_to_black_holes, "%.0f", (double)f->jobs_lost_to_black_holes)

/* Results to trust (docs/sim.md, "Wrong results and adaptive replication"). */
#define TRUST_FIGS(X)                                                                                    \
    X(wrong_hosts, "%.0f", (double)f->wrong_hosts) X(wrong_results, "%.0f", (double)f->wrong_results)    \
    X(jobs_accepted_alone, "%.0f", (double)f->jobs_accepted_alone)

void sim_figures_print(FILE *out, const struct sim_figures *f)
{
#define TEXT(name, fmt, val) fprintf(out, "%-22s " fmt "\n", #name, val);
    FIGS(TEXT)
    if (f->seq.sequences) {
        SEQ_FIGS(TEXT)
    }
    if (f->gpus) {
        GPU_FIGS(TEXT)
    }
    if (f->black_holes) {
        BLACK_HOLE_FIGS(TEXT)
    }
    if (f->trust) {
        TRUST_FIGS(TEXT)
    }
#undef TEXT
    /* one line per batch, numbered from 1 as the workload's batches are */
    for (int b = 0; b < f->nbatches; b++) {
        char name[40];
        snprintf(name, sizeof name, "batch_makespan_s[%d]", b + 1);
        fprintf(out, "%-22s %.1f\n", name, f->batch_makespan_s[b]);
    }
}

void sim_figures_json(FILE *out, const struct sim_figures *f)
{
    const char *sep = "{";
#define JSON(name, fmt, val)                          \
    fprintf(out, "%s\"" #name "\": " fmt, sep, val); \
    sep = ", ";
    FIGS(JSON)
    if (f->seq.sequences) {
        SEQ_FIGS(JSON)
    }
    if (f->gpus) {
        GPU_FIGS(JSON)
    }
    if (f->black_holes) {
        BLACK_HOLE_FIGS(JSON)
    }
    if (f->trust) {
        TRUST_FIGS(JSON)
    }
#undef JSON
    fprintf(out, ", \"batch_makespans_s\": [");
    for (int b = 0; b < f->nbatches; b++) fprintf(out, "%s%.1f", b ? ", " : "", f->batch_makespan_s[b]);
    fprintf(out, "]}\n");
}
