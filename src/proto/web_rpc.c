/* web_rpc.c - replies and argument checks of BOINC's account web RPCs
 * (web_rpc.h). */
#include "proto/web_rpc.h"
#include <ctype.h>
#include <string.h>

static void element(struct strbuf *out, const char *tag, const char *text)
{
    sb_printf(out, "    <%s>", tag);
    sb_xml_escape(out, text);
    sb_printf(out, "</%s>\n", tag);
}

void web_project_config_xml(struct strbuf *out, const struct web_project_config *c)
{
    sb_puts(out, "<project_config>\n");
    element(out, "name", c->name);
    element(out, "master_url", c->master_url);
    /* the account RPCs are at the master URL; the client's default */
    element(out, "web_rpc_url_base", c->master_url);
    sb_printf(out, "    <min_passwd_length>%d</min_passwd_length>\n", c->min_passwd_length);
    /* the client sends no invitation code: by invitation, its wizard offers existing accounts only */
    if (c->signup != SIGNUP_OPEN) sb_puts(out, "    <account_creation_disabled/>\n");
    if (c->signup == SIGNUP_INVITATION) sb_puts(out, "    <invite_code_required/>\n");
    sb_puts(out, "    <platforms>\n");
    for (int i = 0; i < c->nplatforms; i++) {
        sb_puts(out, "    <platform>\n    ");
        element(out, "platform_name", c->platforms[i]);
        sb_puts(out, "    </platform>\n");
    }
    sb_puts(out, "    </platforms>\n");
    if (c->terms_of_use[0]) element(out, "terms_of_use", c->terms_of_use);
    sb_puts(out, "</project_config>\n");
}

void web_account_xml(struct strbuf *out, const char *account_key)
{
    sb_puts(out, "<account_out>\n");
    element(out, "authenticator", account_key);
    sb_puts(out, "</account_out>\n");
}

void web_error_xml(struct strbuf *out, int error_num, const char *msg)
{
    sb_printf(out, "<error>\n    <error_num>%d</error_num>\n", error_num);
    element(out, "error_msg", msg);
    sb_puts(out, "</error>\n");
}

int web_email_normalize(const char *in, char *out, size_t len)
{
    size_t n = strlen(in);
    const char *at = strchr(in, '@');
    int ok = n >= 3 && n <= EMAIL_MAX && n < len && at && at > in && !strchr(at + 1, '@') &&
             strchr(at + 1, '.') && !strstr(in, "..") && in[0] != '.' && at[-1] != '.' && at[1] != '.' &&
             in[n - 1] != '.';
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char ch = (unsigned char)in[i];
        ok = ch > 0x20 && ch < 0x7f && !strchr("\"'<>(),;:\\[]", ch);
        out[i] = (char)tolower(ch);
    }
    if (!ok) {
        if (len) out[0] = 0;
        return -1;
    }
    out[n] = 0;
    return 0;
}

int web_passwd_hash_ok(const char *h)
{
    size_t n = strspn(h, "0123456789abcdefABCDEF");
    return n == PASSWD_HASH_LEN && !h[n];
}
