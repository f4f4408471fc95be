/* am_rpc.c - replies and argument checks of the account managers' web
 * RPCs (am_rpc.h). */
#include "proto/am_rpc.h"
#include "core/xmltree.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void encoded(struct strbuf *out, const char *tag, const char *text)
{
    sb_printf(out, "    <%s>", tag);
    am_urlencode(out, text);
    sb_printf(out, "</%s>\n", tag);
}

static void escaped(struct strbuf *out, const char *tag, const char *text)
{
    sb_printf(out, "    <%s>", tag);
    sb_xml_escape(out, text);
    sb_printf(out, "</%s>\n", tag);
}

void am_urlencode(struct strbuf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || strchr("-_.", *p))
            sb_printf(out, "%c", *p);
        else if (*p == ' ')
            sb_puts(out, "+");
        else
            sb_printf(out, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
    }
}

void am_info_xml(struct strbuf *out, const struct am_info *a)
{
    const struct user_profile *p = a->p;
    sb_printf(out, "<am_get_info_reply>\n    <success/>\n    <id>%lld</id>\n", (long long)a->id);
    encoded(out, "name", a->name);
    encoded(out, "country", p->country);
    escaped(out, "weak_auth", a->weak_auth);
    escaped(out, "cpid", a->cpid);
    sb_printf(out, "    <has_profile>0</has_profile>\n    <create_time>%lld</create_time>\n",
              (long long)a->create_time);
    /* documents that am_prefs_ok let in: well-formed, as they were given */
    sb_printf(out, "    <global_prefs>\n%s\n    </global_prefs>\n", p->global_prefs);
    sb_printf(out, "    <project_prefs>\n%s\n    </project_prefs>\n", p->project_prefs);
    encoded(out, "url", p->url);
    sb_printf(out, "    <send_email>%d</send_email>\n    <show_hosts>%d</show_hosts>\n", p->send_email,
              p->show_hosts);
    sb_printf(out, "    <teamid>%lld</teamid>\n", (long long)a->team_id);
    escaped(out, "venue", p->venue);
    encoded(out, "postal_code", p->postal_code);
    if (a->team_founder) sb_puts(out, "    <teamfounder/>\n");
    sb_puts(out, "</am_get_info_reply>\n");
}

void am_success_xml(struct strbuf *out, const char *root)
{
    sb_printf(out, "<%s>\n    <success/>\n</%s>\n", root, root);
}

void am_team_xml(struct strbuf *out, const struct team *t)
{
    sb_printf(out, "<team>\n    <id>%lld</id>\n    <create_time>%lld</create_time>\n    <userid>%lld</userid>\n",
              (long long)t->id, (long long)t->create_time, (long long)t->founder_id);
    escaped(out, "name", t->name);
    escaped(out, "url", t->url);
    sb_printf(out, "    <total_credit>%f</total_credit>\n    <expavg_credit>%f</expavg_credit>\n"
                   "    <expavg_time>%f</expavg_time>\n</team>\n",
              t->total_credit, t->expavg_credit, t->expavg_time);
}

int am_venue_ok(const char *v)
{
    return !strcmp(v, "") || !strcmp(v, "home") || !strcmp(v, "work") || !strcmp(v, "school");
}

int am_flag_parse(const char *text, int *flag)
{
    if (strcmp(text, "0") && strcmp(text, "1")) return 0;
    *flag = text[0] == '1';
    return 1;
}

int am_text_ok(const char *text)
{
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) return 0;
    return n <= PROFILE_TEXT_MAX;
}

int am_url_ok(const char *url)
{
    size_t n = strlen(url);
    if (!n) return 1;
    if (n > PROFILE_TEXT_MAX || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)url[i];
        if (ch <= 0x20 || ch >= 0x7f || strchr("\"'<>\\`", ch)) return 0;
    }
    return 1;
}

int am_prefs_ok(const char *text, const char *root, char *why, size_t whylen)
{
    size_t n = strlen(text);
    if (n > PREFS_MAX) {
        snprintf(why, whylen, "longer than %d bytes", PREFS_MAX);
        return 0;
    }
    char err[256];
    struct xml_node *doc = xml_parse(text, n, err, sizeof err);
    if (!doc) {
        snprintf(why, whylen, "not XML: %s", err);
        return 0;
    }
    int ok = !strcmp(doc->name, root);
    if (!ok) snprintf(why, whylen, "its root element is <%s>, not <%s>", doc->name, root);
    xml_free(doc);
    /* the reply carries the text as it is: a declaration, a processing
     * instruction or a document type would land in the middle of it */
    const char *start = text + strspn(text, " \t\r\n");
    size_t rl = strlen(root);
    if (ok && (start[0] != '<' || strncmp(start + 1, root, rl) || !start[1 + rl] || !strchr(" \t\r\n/>", start[1 + rl]))) {
        snprintf(why, whylen, "it must start with <%s>", root);
        ok = 0;
    }
    return ok;
}

double am_prefs_mod_time(const char *text)
{
    char err[8];
    struct xml_node *doc = text[0] ? xml_parse(text, strlen(text), err, sizeof err) : NULL;
    double t = 0;
    if (doc && xml_child_double(doc, "mod_time", &t)) t = 0;
    xml_free(doc);
    return t;
}

int am_id_parse(const char *text, int zero_ok, int64_t *id)
{
    if (zero_ok && !strcmp(text, "0")) {
        *id = 0;
        return 1;
    }
    size_t digits = strspn(text, "0123456789");
    if (digits < 1 || digits > 18 || text[digits] || text[0] == '0') return 0;
    *id = strtoll(text, NULL, 10);
    return 1;
}
