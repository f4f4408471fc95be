/* credit.h - credit for valid results and its exponential average. One
 * credit unit is BOINC's cobblestone: 200 per day of a 1 GFLOPS computer,
 * so credit from locus means the same as credit from a BOINC project. */
#ifndef LOCUS_CREDIT_H
#define LOCUS_CREDIT_H

#define CREDIT_PER_FLOP (200.0 / 86400e9)
#define CREDIT_HALF_LIFE (7 * 86400.0)

double credit_for_job(double flops_est);
/* Updates an average of credit per day, decayed with CREDIT_HALF_LIFE, for
 * credit granted at time now; *avg_time is the time of the last update. */
void credit_update_average(double *avg, double *avg_time, double credit, double now);
/* The average avg, last updated at avg_time, as it stands at now: decayed
 * with CREDIT_HALF_LIFE over the time since, as BOINC's update_stats does
 * before its statistics export. The store keeps each average as of its
 * last credit, so whatever shows one (listings, the API, the export, the
 * scheduler's reply) shows this instead. avg as it is when avg_time is 0
 * (never updated) or not before now. Never fails. */
double credit_average_at(double avg, double avg_time, double now);
#endif
