/* app_internal.h - helpers shared by the files of liblocus_app. Not part of
 * the public API; the locus_app_ prefix keeps them out of the way of the
 * application's own symbols (a static library exports everything). */
#ifndef LOCUS_APP_INTERNAL_H
#define LOCUS_APP_INTERNAL_H

/* POSIX.1-2008 (clock_gettime, O_CLOEXEC, pthread_sigmask) also when a
 * project builds the runtime with plain -std=c17; include this file first. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <stddef.h>

/* Parses a decimal number ("12", "-3.5", "1e+13") in s[0..n) with optional
 * surrounding white space, independently of the locale. Returns 0 and sets
 * *out, or -1 if the text is not a whole finite number. */
int locus_app_parse_double(const char *s, size_t n, double *out);

/* Writes x with 6 decimals ("12.500000"), independently of the locale;
 * |x| is clamped to 1e12, NaN written as 0. Returns the snprintf result. */
int locus_app_format_fixed(char *buf, size_t n, double x);

/* Writes len bytes to name.tmp in the current directory, fsyncs it and
 * renames it over name, so a reader never sees half a file. 0 or -1. */
int locus_app_write_atomic(const char *name, const char *data, size_t len);

#endif
