/* app_xml.c - the small, tolerant reader of init_data.xml and the
 * locale-independent number reading/writing the runtime uses (an
 * application may call setlocale, and the client always writes '.'). No XML
 * library: the runtime must link with libc only. */
#include "app_internal.h"

#include <locus/locus_app.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* 10^k by squaring: exact up to 1e22, inf beyond the double range. */
static double pow10_u(unsigned k)
{
    double p = 1.0, b = 10.0;
    while (k) {
        if (k & 1)
            p *= b;
        k >>= 1;
        if (k)
            b *= b;
    }
    return p;
}

int locus_app_parse_double(const char *s, size_t n, double *out)
{
    size_t i = 0;
    if (!s)
        return -1;
    while (i < n && is_space(s[i]))
        i++;
    while (n > i && is_space(s[n - 1]))
        n--;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    unsigned long long mant = 0;
    int sig = 0, digits = 0;
    long exp10 = 0;
    for (; i < n && is_digit(s[i]); i++, digits++) {
        if (sig < 19) {  /* 19 digits fit in 64 bits; later ones only scale */
            mant = mant * 10 + (unsigned)(s[i] - '0');
            sig += mant != 0;
        } else {
            exp10++;
        }
    }
    if (i < n && s[i] == '.') {
        for (i++; i < n && is_digit(s[i]); i++, digits++) {
            if (sig < 19) {
                mant = mant * 10 + (unsigned)(s[i] - '0');
                sig += mant != 0;
                exp10--;
            }
        }
    }
    if (digits == 0)
        return -1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        int eneg = 0, edigits = 0;
        long e = 0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        for (; i < n && is_digit(s[i]); i++, edigits++)
            if (e < 100000)
                e = e * 10 + (s[i] - '0');
        if (edigits == 0)
            return -1;
        exp10 += eneg ? -e : e;
    }
    if (i != n)
        return -1;
    double v = 0.0;
    if (mant != 0) {
        if (exp10 > 400)
            exp10 = 400;
        if (exp10 < -400)
            exp10 = -400;
        v = (double)mant;
        v = exp10 >= 0 ? v * pow10_u((unsigned)exp10) : v / pow10_u((unsigned)-exp10);
    }
    if (!isfinite(v))
        return -1;
    *out = neg ? -v : v;
    return 0;
}

int locus_app_format_fixed(char *buf, size_t n, double x)
{
    if (isnan(x))
        x = 0.0;
    if (x > 1e12)
        x = 1e12;
    if (x < -1e12)
        x = -1e12;
    int neg = x < 0;
    unsigned long long micro = (unsigned long long)((neg ? -x : x) * 1e6 + 0.5);
    return snprintf(buf, n, "%s%llu.%06llu", neg ? "-" : "", micro / 1000000ULL,
                    micro % 1000000ULL);
}

/* ---- init_data.xml ---- */

enum field_type { F_STR, F_LL, F_INT, F_DBL };

struct field {
    const char *name;
    enum field_type type;
    size_t off, size;
};

#define FIELD(n, t) \
    { #n, t, offsetof(struct locus_init_data, n), sizeof(((struct locus_init_data *)0)->n) }

static const struct field fields[] = {
    FIELD(app_name, F_STR),         FIELD(wu_name, F_STR),
    FIELD(result_name, F_STR),      FIELD(project_dir, F_STR),
    FIELD(boinc_dir, F_STR),        FIELD(user_name, F_STR),
    FIELD(userid, F_LL),            FIELD(hostid, F_LL),
    FIELD(teamid, F_LL),            FIELD(slot, F_INT),
    FIELD(checkpoint_period, F_DBL), FIELD(rsc_fpops_est, F_DBL),
    FIELD(rsc_fpops_bound, F_DBL),  FIELD(rsc_memory_bound, F_DBL),
    FIELD(rsc_disk_bound, F_DBL),   FIELD(wu_cpu_time, F_DBL),
    FIELD(starting_elapsed_time, F_DBL), FIELD(computation_deadline, F_DBL),
    FIELD(gpu_device_num, F_INT),   FIELD(gpu_type, F_STR),
};

static const struct field *lookup_field(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strlen(fields[i].name) == n && memcmp(fields[i].name, name, n) == 0)
            return &fields[i];
    return NULL;
}

static int starts_at(const char *s, size_t len, size_t p, const char *pat)
{
    size_t n = strlen(pat);
    return p <= len && len - p >= n && memcmp(s + p, pat, n) == 0;
}

/* Index of the first pat at or after from, or len. */
static size_t find_from(const char *s, size_t len, size_t from, const char *pat)
{
    for (size_t p = from; p < len; p++)
        if (starts_at(s, len, p, pat))
            return p;
    return len;
}

static size_t skip_past(const char *s, size_t len, size_t from, const char *pat)
{
    size_t p = find_from(s, len, from, pat);
    return p >= len ? len : p + strlen(pat);
}

/* Index of the '>' closing a start tag, skipping quoted attribute values. */
static size_t tag_end(const char *s, size_t len, size_t p)
{
    char quote = 0;
    for (; p < len; p++) {
        if (quote) {
            if (s[p] == quote)
                quote = 0;
        } else if (s[p] == '"' || s[p] == '\'') {
            quote = s[p];
        } else if (s[p] == '>') {
            return p;
        }
    }
    return len;
}

/* Index of "</name>" (or "</name ...>") at or after from, or len. */
static size_t find_close(const char *s, size_t len, size_t from, const char *name, size_t n)
{
    for (size_t p = find_from(s, len, from, "</"); p < len; p = find_from(s, len, p + 2, "</")) {
        size_t q = p + 2 + n;
        if (q < len && memcmp(s + p + 2, name, n) == 0 && (s[q] == '>' || is_space(s[q])))
            return p;
    }
    return len;
}

/* Copies text into dst (size bytes), trimmed, with the five XML entities
 * decoded, truncated to fit. */
static void copy_text(char *dst, size_t size, const char *s, size_t n)
{
    static const struct { const char *ent; char c; } ents[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''},
    };
    size_t i = 0, o = 0;
    while (i < n && is_space(s[i]))
        i++;
    while (n > i && is_space(s[n - 1]))
        n--;
    while (i < n && o + 1 < size) {
        size_t k = 0, nents = sizeof ents / sizeof ents[0];
        if (s[i] == '&')
            for (; k < nents && !starts_at(s, n, i, ents[k].ent); k++)
                ;
        if (s[i] == '&' && k < nents) {
            dst[o++] = ents[k].c;
            i += strlen(ents[k].ent);
        } else {
            dst[o++] = s[i++];
        }
    }
    dst[o] = '\0';
}

/* Stores one value; 1 if stored, 0 if it was not a valid number. */
static int set_field(struct locus_init_data *d, const struct field *f, const char *s, size_t n)
{
    char *at = (char *)d + f->off;
    double v;
    if (f->type == F_STR) {
        copy_text(at, f->size, s, n);
        return 1;
    }
    if (locus_app_parse_double(s, n, &v) != 0)
        return 0;
    switch (f->type) {
    case F_LL:
        if (v < -9e18 || v > 9e18)
            return 0;
        *(long long *)(void *)at = (long long)v;
        return 1;
    case F_INT:
        if (v < -2e9 || v > 2e9)
            return 0;
        *(int *)(void *)at = (int)v;
        return 1;
    default:
        *(double *)(void *)at = v;
        return 1;
    }
}

int locus_parse_init_data(const char *xml, size_t len, struct locus_init_data *out)
{
    int depth = 0, found = 0;
    size_t p = 0;
    if (!out)
        return 0;
    memset(out, 0, sizeof *out);
    out->gpu_device_num = -1;  /* absent: not a GPU job */
    if (!xml)
        return 0;
    while (p < len) {
        if (xml[p] != '<') {
            p++;
        } else if (starts_at(xml, len, p, "<?")) {
            p = skip_past(xml, len, p + 2, "?>");
        } else if (starts_at(xml, len, p, "<!--")) {
            p = skip_past(xml, len, p + 4, "-->");
        } else if (starts_at(xml, len, p, "<![CDATA[")) {
            p = skip_past(xml, len, p + 9, "]]>");
        } else if (starts_at(xml, len, p, "<!")) {
            p = skip_past(xml, len, p + 2, ">");
        } else if (starts_at(xml, len, p, "</")) {
            depth -= depth > 0;
            p = skip_past(xml, len, p + 2, ">");
        } else {
            size_t name = p + 1, q = name;
            while (q < len && !is_space(xml[q]) && xml[q] != '>' && xml[q] != '/')
                q++;
            size_t end = tag_end(xml, len, q);
            if (end >= len)
                break;
            p = end + 1;
            if (xml[end - 1] == '/' || q == name)
                continue;  /* <empty/> or not a tag */
            if (++depth != 2)
                continue;  /* only direct children of the root */
            const struct field *f = lookup_field(xml + name, q - name);
            size_t close = f ? find_close(xml, len, p, xml + name, q - name) : len;
            if (close < len) {
                found += set_field(out, f, xml + p, close - p);
                p = close;  /* its end tag brings depth back to 1 */
            }
        }
    }
    return found;
}
