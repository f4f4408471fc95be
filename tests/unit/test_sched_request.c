/* test_sched_request.c - the scheduler request parser against a full
 * request shaped like the ones BOINC 7.20.5 sends, and against broken, truncated, hostile and over-limit input. Every
 * failing case also checks that nothing is left to free (LSan would see). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/strbuf.h"
#include "proto/sched_request.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char FULL_REQUEST[] =
"<scheduler_request>\n"
"    <authenticator>7a3f0c9e2b5d4e8f1a6c3b9d0e2f4a8c</authenticator>\n"
"    <hostid>42</hostid>\n"
"    <rpc_seqno>17</rpc_seqno>\n"
"    <core_client_major_version>7</core_client_major_version>\n"
"    <core_client_minor_version>20</core_client_minor_version>\n"
"    <core_client_release>5</core_client_release>\n"
"    <resource_share_fraction>1.000000</resource_share_fraction>\n"
"    <rrs_fraction>1.000000</rrs_fraction>\n"
"    <prrs_fraction>1.000000</prrs_fraction>\n"
"    <duration_correction_factor>0.987654</duration_correction_factor>\n"
"    <allow_multiple_clients>0</allow_multiple_clients>\n"
"    <sandbox>0</sandbox>\n"
"    <dont_send_work>0</dont_send_work>\n"
"    <work_req_seconds>103680.000000</work_req_seconds>\n"
"    <cpu_req_secs>103680.000000</cpu_req_secs>\n"
"    <cpu_req_instances>2.000000</cpu_req_instances>\n"
"    <estimated_delay>12.500000</estimated_delay>\n"
"    <client_cap_plan_class>1</client_cap_plan_class>\n"
"    <platform_name>x86_64-pc-linux-gnu</platform_name>\n"
"    <alt_platform>\n"
"        <name>i686-pc-linux-gnu</name>\n"
"    </alt_platform>\n"
"<code_sign_key>\n"
"1024\n"
"c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2\n"
"0000000000000000000000000000000000000000000000000000000000010001\n"
".\n"
"</code_sign_key>\n"
"<working_global_preferences>\n"
"<global_preferences>\n"
"   <source_project>http://127.0.0.1:18080/proj/</source_project>\n"
"   <mod_time>1700000000.000000</mod_time>\n"
"   <run_if_user_active>1</run_if_user_active>\n"
"   <suspend_cpu_usage>0.000000</suspend_cpu_usage>\n"
"   <work_buf_min_days>0.100000</work_buf_min_days>\n"
"   <work_buf_additional_days>0.500000</work_buf_additional_days>\n"
"   <disk_max_used_gb>0.000000</disk_max_used_gb>\n"
"   <ram_max_used_busy_pct>50.000000</ram_max_used_busy_pct>\n"
"   <cpu_usage_limit>100.000000</cpu_usage_limit>\n"
"</global_preferences>\n"
"</working_global_preferences>\n"
"<cross_project_id></cross_project_id>\n"
"<time_stats>\n"
"    <on_frac>0.998700</on_frac>\n"
"    <connected_frac>-1.000000</connected_frac>\n"
"    <cpu_and_network_available_frac>0.999000</cpu_and_network_available_frac>\n"
"    <active_frac>0.997800</active_frac>\n"
"    <gpu_active_frac>0.997800</gpu_active_frac>\n"
"    <client_start_time>1700000000.000000</client_start_time>\n"
"    <total_start_time>1699990000.000000</total_start_time>\n"
"    <total_duration>10000.000000</total_duration>\n"
"    <total_active_duration>9990.000000</total_active_duration>\n"
"    <total_gpu_active_duration>9990.000000</total_gpu_active_duration>\n"
"    <now>1700003600.123456</now>\n"
"    <previous_uptime>3600.000000</previous_uptime>\n"
"    <session_active_duration>3600.000000</session_active_duration>\n"
"    <session_gpu_active_duration>3600.000000</session_gpu_active_duration>\n"
"</time_stats>\n"
"<net_stats>\n"
"    <bwup>0.000000</bwup>\n"
"    <avg_up>1234.500000</avg_up>\n"
"    <avg_time_up>1700003000.000000</avg_time_up>\n"
"    <bwdown>0.000000</bwdown>\n"
"    <avg_down>9876.500000</avg_down>\n"
"    <avg_time_down>1700003000.000000</avg_time_down>\n"
"</net_stats>\n"
"<host_info>\n"
"    <timezone>3600</timezone>\n"
"    <domain_name>worker-7.example.org</domain_name>\n"
"    <ip_addr>192.0.2.17</ip_addr>\n"
"    <host_cpid>0b9d5a3f1e2c7d8a6b4f3e2d1c0b9a87</host_cpid>\n"
"    <p_ncpus>2</p_ncpus>\n"
"    <p_vendor>GenuineIntel</p_vendor>\n"
"    <p_model>Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz [Family 6 Model 79 Stepping 1]</p_model>\n"
"    <p_features>fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov</p_features>\n"
"    <p_fpops>1000000000.000000</p_fpops>\n"
"    <p_iops>1000000000.000000</p_iops>\n"
"    <p_membw>1000000000.000000</p_membw>\n"
"    <p_calculated>1700000000.000000</p_calculated>\n"
"    <p_vm_extensions_disabled>0</p_vm_extensions_disabled>\n"
"    <m_nbytes>4104953856.000000</m_nbytes>\n"
"    <m_cache>36700160.000000</m_cache>\n"
"    <m_swap>1023406080.000000</m_swap>\n"
"    <d_total>52521566208.000000</d_total>\n"
"    <d_free>31468453888.000000</d_free>\n"
"    <os_name>Linux Debian</os_name>\n"
"    <os_version>Debian GNU/Linux 12 (bookworm) [6.1.0-13-amd64|libc 2.36]</os_version>\n"
"    <n_usable_coprocs>0</n_usable_coprocs>\n"
"    <wsl_available>0</wsl_available>\n"
"</host_info>\n"
"<disk_usage>\n"
"    <d_boinc_used_total>1048576.000000</d_boinc_used_total>\n"
"    <d_boinc_used_project>524288.000000</d_boinc_used_project>\n"
"    <d_project_share>10000000000.000000</d_project_share>\n"
"</disk_usage>\n"
"<result>\n"
"    <name>wu_1_r0</name>\n"
"    <final_cpu_time>9.871200</final_cpu_time>\n"
"    <final_elapsed_time>10.112233</final_elapsed_time>\n"
"    <exit_status>0</exit_status>\n"
"    <state>5</state>\n"
"    <platform>x86_64-pc-linux-gnu</platform>\n"
"    <version_num>1</version_num>\n"
"    <final_peak_working_set_size>2301952.000000</final_peak_working_set_size>\n"
"    <final_peak_swap_size>5439488.000000</final_peak_swap_size>\n"
"    <final_peak_disk_usage>20480.000000</final_peak_disk_usage>\n"
"    <app_version_num>1</app_version_num>\n"
"<stderr_out>\n"
"<core_client_version>7.20.5</core_client_version>\n"
"<![CDATA[\n"
"<stderr_txt>\n"
"starting: 3 < 4 && <b>bold</b> &amp; done\n"
"14:02:11 (1234): called boinc_finish(0)\n"
"\n"
"</stderr_txt>\n"
"]]>\n"
"</stderr_out>\n"
"    <file_info>\n"
"        <name>wu_1_r0_out</name>\n"
"        <nbytes>20047.000000</nbytes>\n"
"        <max_nbytes>1000000.000000</max_nbytes>\n"
"        <md5_cksum>a9b2650d535d1efadac4ec7a3865f5da</md5_cksum>\n"
"        <upload_url>http://127.0.0.1:18080/proj_cgi/file_upload_handler</upload_url>\n"
"    </file_info>\n"
"</result>\n"
"<result>\n"
"    <name>wu_2_r1</name>\n"
"    <final_cpu_time>0.000000</final_cpu_time>\n"
"    <final_elapsed_time>3.250000</final_elapsed_time>\n"
"    <exit_status>-186</exit_status>\n"
"    <state>3</state>\n"
"    <platform>x86_64-pc-linux-gnu</platform>\n"
"    <version_num>1</version_num>\n"
"    <app_version_num>1</app_version_num>\n"
"    <file_info>\n"
"        <name>wu_2_r1_out</name>\n"
"        <nbytes>1250024.000000</nbytes>\n"
"        <max_nbytes>1000000.000000</max_nbytes>\n"
"        <md5_cksum>0123456789abcdef0123456789abcdef</md5_cksum>\n"
"        <upload_url>http://127.0.0.1:18080/proj_cgi/file_upload_handler</upload_url>\n"
"        <error_msg>permanent upload error</error_msg>\n"
"    </file_info>\n"
"    <file_info>\n"
"        <name>wu_2_r1_log</name>\n"
"        <nbytes>311.000000</nbytes>\n"
"        <max_nbytes>100000.000000</max_nbytes>\n"
"        <md5_cksum>fedcba9876543210fedcba9876543210</md5_cksum>\n"
"        <upload_url>http://127.0.0.1:18080/proj_cgi/file_upload_handler</upload_url>\n"
"    </file_info>\n"
"</result>\n"
"<file_info>\n"
"    <name>wu_1_in</name>\n"
"    <nbytes>29.000000</nbytes>\n"
"    <status>1</status>\n"
"</file_info>\n"
"<file_info>\n"
"    <name>ref_genome_chr7</name>\n"
"    <nbytes>159345973.000000</nbytes>\n"
"    <status>1</status>\n"
"</file_info>\n"
"<app_versions>\n"
"<app_version>\n"
"    <app_name>mockapp</app_name>\n"
"    <version_num>1</version_num>\n"
"    <platform>x86_64-pc-linux-gnu</platform>\n"
"    <avg_ncpus>1.000000</avg_ncpus>\n"
"    <flops>1000000000.000000</flops>\n"
"    <api_version>7.20.0</api_version>\n"
"</app_version>\n"
"<app_version>\n"
"    <app_name>otherapp</app_name>\n"
"    <version_num>203</version_num>\n"
"    <platform>i686-pc-linux-gnu</platform>\n"
"    <avg_ncpus>1.000000</avg_ncpus>\n"
"    <flops>900000000.000000</flops>\n"
"</app_version>\n"
"</app_versions>\n"
"<other_results>\n"
"    <other_result>\n"
"        <name>wu_3_r0</name>\n"
"        <app_version>0</app_version>\n"
"    </other_result>\n"
"    <other_result>\n"
"        <name>wu_4_r2</name>\n"
"        <app_version>1</app_version>\n"
"    </other_result>\n"
"</other_results>\n"
"<working_global_preferences>\n"
"<global_preferences>\n"
"   <source_project>http://127.0.0.1:18080/proj/</source_project>\n"
"   <work_buf_min_days>0.100000</work_buf_min_days>\n"
"   <work_buf_additional_days>0.500000</work_buf_additional_days>\n"
"</global_preferences>\n"
"</working_global_preferences>\n"
"<global_preferences>\n"
"   <source_project>http://127.0.0.1:18080/proj/</source_project>\n"
"   <mod_time>1700000500.250000</mod_time>\n"
"   <work_buf_min_days>7</work_buf_min_days>\n"
"   <venue name=\"home\">\n"
"      <mod_time>1800000000</mod_time>\n"
"   </venue>\n"
"</global_preferences>\n"
"<global_prefs_source_email_hash>0cc175b9c0f1b6a831c399e269772661</global_prefs_source_email_hash>\n"
"<in_progress_results>\n"
"    <ip_result>\n"
"        <name>wu_3_r0</name>\n"
"        <report_deadline>1700003600</report_deadline>\n"
"        <time_remaining>1234.50</time_remaining>\n"
"        <avg_ncpus>1.000000</avg_ncpus>\n"
"    </ip_result>\n"
"    <ip_result>\n"
"        <name>wu_4_r2</name>\n"
"        <report_deadline>1700007200</report_deadline>\n"
"        <cpu_time_remaining>99.00</cpu_time_remaining>\n"
"    </ip_result>\n"
"</in_progress_results>\n"
"</scheduler_request>\n";

/* Parses a NUL-terminated text; on failure checks that *req is empty. */
static int parse(const char *s, struct sched_request *req, char *err, size_t errlen)
{
    int rc = sched_request_parse(s, strlen(s), req, err, errlen);
    if (rc < 0) {
        assert_int_equal(req->nresults, 0);
        assert_null(req->results);
        assert_null(req->sticky);
        assert_null(req->other_results);
        assert_null(req->app_versions);
        assert_true(err[0] != 0);
        assert_null(strchr(err, '\n'));
    }
    return rc;
}

/* Expects parse failure with a message containing want. */
static void expect_error(const char *doc, const char *want)
{
    struct sched_request req;
    char err[256] = "";
    int rc = parse(doc, &req, err, sizeof err);
    if (rc != -1 || !strstr(err, want))
        fail_msg("rc=%d err=\"%s\", wanted an error with \"%s\"", rc, err, want);
}

/* Wraps body in a minimal request and expects failure. */
static void expect_body_error(const char *body, const char *want)
{
    struct strbuf sb;
    sb_init(&sb);
    sb_printf(&sb, "<scheduler_request>\n<hostid>1</hostid>\n%s\n</scheduler_request>\n", body);
    expect_error(sb.s, want);
    sb_free(&sb);
}

static void test_full_request_top_level(void **state)
{
    (void)state;
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(FULL_REQUEST, &req, err, sizeof err), 0);
    assert_string_equal(req.authenticator, "7a3f0c9e2b5d4e8f1a6c3b9d0e2f4a8c");
    assert_int_equal(req.hostid, 42);
    assert_int_equal(req.rpc_seqno, 17);
    assert_int_equal(req.core_major, 7);
    assert_int_equal(req.core_minor, 20);
    assert_int_equal(req.core_release, 5);
    assert_string_equal(req.platform, "x86_64-pc-linux-gnu");
    assert_int_equal(req.nalt_platforms, 1);
    assert_string_equal(req.alt_platforms[0], "i686-pc-linux-gnu");
    assert_float_equal(req.resource_share_fraction, 1.0, 1e-12);
    assert_float_equal(req.duration_correction_factor, 0.987654, 1e-12);
    assert_int_equal(req.dont_send_work, 0);
    assert_float_equal(req.work_req_seconds, 103680.0, 1e-9);
    assert_float_equal(req.cpu_req_secs, 103680.0, 1e-9);
    assert_float_equal(req.cpu_req_instances, 2.0, 1e-12);
    assert_float_equal(req.estimated_delay, 12.5, 1e-12);
    assert_int_equal(req.has_code_sign_key, 1);
    sched_request_free(&req);
}

static void test_full_request_host(void **state)
{
    (void)state;
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(FULL_REQUEST, &req, err, sizeof err), 0);
    assert_float_equal(req.on_frac, 0.9987, 1e-12);
    assert_float_equal(req.connected_frac, -1.0, 1e-12);
    assert_float_equal(req.active_frac, 0.9978, 1e-12);
    assert_string_equal(req.host_cpid, "0b9d5a3f1e2c7d8a6b4f3e2d1c0b9a87");
    assert_string_equal(req.domain_name, "worker-7.example.org");
    assert_string_equal(req.os_name, "Linux Debian");
    assert_string_equal(req.os_version, "Debian GNU/Linux 12 (bookworm) [6.1.0-13-amd64|libc 2.36]");
    assert_string_equal(req.p_vendor, "GenuineIntel");
    assert_string_equal(req.p_model,
        "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz [Family 6 Model 79 Stepping 1]");
    assert_int_equal(req.p_ncpus, 2);
    assert_float_equal(req.p_fpops, 1e9, 1e-3);
    assert_float_equal(req.p_iops, 1e9, 1e-3);
    assert_float_equal(req.m_nbytes, 4104953856.0, 1e-3);
    assert_float_equal(req.d_total, 52521566208.0, 1e-3);
    assert_float_equal(req.d_free, 31468453888.0, 1e-3);
    sched_request_free(&req);
}

static void test_full_request_results(void **state)
{
    (void)state;
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(FULL_REQUEST, &req, err, sizeof err), 0);
    assert_int_equal(req.nresults, 2);

    const struct sr_result *a = &req.results[0];
    assert_string_equal(a->name, "wu_1_r0");
    assert_int_equal(a->state, 5);
    assert_int_equal(a->exit_status, 0);
    assert_float_equal(a->final_cpu_time, 9.8712, 1e-12);
    assert_float_equal(a->final_elapsed_time, 10.112233, 1e-12);
    assert_int_equal(a->app_version_num, 1);
    assert_non_null(a->stderr_out);
    /* the CDATA part is kept as text, markup and entities untouched */
    assert_non_null(strstr(a->stderr_out, "<stderr_txt>\nstarting: 3 < 4 && <b>bold</b> &amp; done\n"));
    assert_non_null(strstr(a->stderr_out, "called boinc_finish(0)"));
    assert_non_null(strstr(a->stderr_out, "</stderr_txt>"));
    /* the <core_client_version> element inside stderr_out is kept as text */
    assert_true(strncmp(a->stderr_out, "\n<core_client_version>7.20.5</core_client_version>\n\n<stderr_txt>",
                        strlen("\n<core_client_version>7.20.5</core_client_version>\n\n<stderr_txt>")) == 0);
    assert_int_equal(a->nfiles, 1);
    assert_string_equal(a->files[0].name, "wu_1_r0_out");
    assert_float_equal(a->files[0].nbytes, 20047.0, 1e-9);
    assert_string_equal(a->files[0].md5_cksum, "a9b2650d535d1efadac4ec7a3865f5da");
    assert_int_equal(a->files[0].has_error, 0);

    const struct sr_result *b = &req.results[1];
    assert_string_equal(b->name, "wu_2_r1");
    assert_int_equal(b->state, 3);
    assert_int_equal(b->exit_status, -186);
    assert_float_equal(b->final_elapsed_time, 3.25, 1e-12);
    assert_null(b->stderr_out);
    assert_int_equal(b->nfiles, 2);
    assert_string_equal(b->files[0].name, "wu_2_r1_out");
    assert_int_equal(b->files[0].has_error, 1);
    assert_float_equal(b->files[0].nbytes, 1250024.0, 1e-9);
    assert_string_equal(b->files[1].name, "wu_2_r1_log");
    assert_int_equal(b->files[1].has_error, 0);
    assert_string_equal(b->files[1].md5_cksum, "fedcba9876543210fedcba9876543210");
    sched_request_free(&req);
}

static void test_full_request_lists(void **state)
{
    (void)state;
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(FULL_REQUEST, &req, err, sizeof err), 0);
    /* top-level file_info are sticky files, not the results' outputs */
    assert_int_equal(req.nsticky, 2);
    assert_string_equal(req.sticky[0].name, "wu_1_in");
    assert_float_equal(req.sticky[0].nbytes, 29.0, 1e-9);
    assert_int_equal(req.sticky[0].status, 1);
    assert_string_equal(req.sticky[1].name, "ref_genome_chr7");
    assert_float_equal(req.sticky[1].nbytes, 159345973.0, 1e-9);
    for (int i = 0; i < req.nsticky; i++)
        assert_null(strstr(req.sticky[i].name, "_r"));

    assert_int_equal(req.nother, 2);
    assert_string_equal(req.other_results[0], "wu_3_r0");
    assert_string_equal(req.other_results[1], "wu_4_r2");

    assert_int_equal(req.napp_versions, 2);
    assert_string_equal(req.app_versions[0].app_name, "mockapp");
    assert_int_equal(req.app_versions[0].version_num, 1);
    assert_string_equal(req.app_versions[0].platform, "x86_64-pc-linux-gnu");
    assert_string_equal(req.app_versions[1].app_name, "otherapp");
    assert_int_equal(req.app_versions[1].version_num, 203);
    assert_string_equal(req.app_versions[1].platform, "i686-pc-linux-gnu");

    /* the work it holds, for the deadline check, and its buffer */
    assert_true(req.has_ip_results);
    assert_int_equal(req.nip, 2);
    assert_string_equal(req.ip[0].name, "wu_3_r0");
    assert_float_equal(req.ip[0].report_deadline, 1700003600, 0);
    assert_float_equal(req.ip[0].time_remaining, 1234.5, 1e-9);
    assert_float_equal(req.ip[0].avg_ncpus, 1, 0);
    assert_float_equal(req.ip[1].time_remaining, 99, 1e-9);   /* the pre-6.x name */
    assert_float_equal(req.ip[1].avg_ncpus, 0, 0);
    assert_float_equal(req.work_buf_min_days, 0.1, 1e-9);
    assert_float_equal(req.work_buf_additional_days, 0.5, 1e-9);
    /* the account's preferences the client holds: only their own mod_time,
     * not a venue's, and none of their values steer the work fetch */
    assert_float_equal(req.working_prefs_mod_time, 1700000000, 0);
    assert_float_equal(req.master_prefs_mod_time, 1700000500.25, 1e-9);
    sched_request_free(&req);
}

/* The first RPC of a new host: hostid 0, no key, no results. */
static void test_first_rpc(void **state)
{
    (void)state;
    const char *doc =
        "<scheduler_request>\n"
        "    <authenticator>  SOMEKEY  </authenticator>\n"
        "    <hostid>0</hostid>\n"
        "    <rpc_seqno>0</rpc_seqno>\n"
        "    <work_req_seconds>1.000000</work_req_seconds>\n"
        "    <cpu_req_secs>1.000000</cpu_req_secs>\n"
        "    <platform_name>x86_64-pc-linux-gnu</platform_name>\n"
        "</scheduler_request>\n";
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(doc, &req, err, sizeof err), 0);
    assert_string_equal(req.authenticator, "SOMEKEY");
    assert_int_equal(req.hostid, 0);
    assert_int_equal(req.has_code_sign_key, 0);
    assert_float_equal(req.cpu_req_secs, 1.0, 1e-12);
    assert_int_equal(req.nresults, 0);
    assert_null(req.results);
    assert_int_equal(req.nsticky, 0);
    assert_int_equal(req.nalt_platforms, 0);
    assert_float_equal(req.master_prefs_mod_time, 0, 0);
    assert_float_equal(req.working_prefs_mod_time, 0, 0);
    sched_request_free(&req);
    sched_request_free(&req);   /* a freed request can be freed again */
}

static void test_unknown_elements_ignored(void **state)
{
    (void)state;
    const char *doc =
        "<?xml version=\"1.0\"?>\n"
        "<scheduler_request>\n"
        "  <future_thing attr=\"x\"><result><name>not_a_report</name></result></future_thing>\n"
        "  <result><name>r1</name><weird><name>nested</name><state>9</state></weird>\n"
        "    <state>5</state><file_info><name>f</name><junk><error_msg>x</error_msg></junk></file_info>\n"
        "  </result>\n"
        "  <host_info><coprocs><coproc_cuda><p_ncpus>99</p_ncpus></coproc_cuda></coprocs></host_info>\n"
        "  <msg_from_host><variety>x</variety><msg_text>hello</msg_text></msg_from_host>\n"
        "  <dont_send_work/>\n"
        "</scheduler_request>";
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(doc, &req, err, sizeof err), 0);
    assert_int_equal(req.nresults, 1);
    assert_string_equal(req.results[0].name, "r1");
    assert_int_equal(req.results[0].state, 5);
    assert_int_equal(req.results[0].nfiles, 1);
    assert_int_equal(req.results[0].files[0].has_error, 0);
    assert_int_equal(req.p_ncpus, 0);
    assert_int_equal(req.dont_send_work, 1);
    sched_request_free(&req);
}

static void test_malformed_xml(void **state)
{
    (void)state;
    expect_error("<scheduler_request><hostid>1</rpc_seqno></scheduler_request>", "mismatched tag");
    expect_error("<scheduler_request><hostid>1</rpc_seqno></scheduler_request>", "line 1");
    expect_error("<scheduler_request>\n<a>\n<b x=1/></a></scheduler_request>", "line 3");
    expect_error("<scheduler_request>&bogus;</scheduler_request>", "malformed XML");
    expect_error("<scheduler_request></scheduler_request><x/>", "junk after document element");
    expect_error("\x01\x02garbage", "malformed XML");
}

static void test_truncated(void **state)
{
    (void)state;
    size_t n = strlen(FULL_REQUEST);
    /* cut at many places, including inside the CDATA and inside a tag */
    for (size_t cut = 1; cut + 1 < n; cut += 97) {
        struct sched_request req;
        char err[256] = "";
        int rc = sched_request_parse(FULL_REQUEST, cut, &req, err, sizeof err);
        assert_int_equal(rc, -1);
        assert_null(req.results);
        assert_true(strstr(err, "malformed XML") || strstr(err, "expected"));
    }
}

static void test_wrong_root_and_empty(void **state)
{
    (void)state;
    expect_error("<scheduler_reply><hostid>1</hostid></scheduler_reply>",
                 "root element is <scheduler_reply>, expected <scheduler_request>");
    expect_error("", "empty");
    expect_error("  \n\t ", "empty");
    expect_error("<!-- only a comment -->", "no element found");

    struct sched_request req;
    char err[64];
    assert_int_equal(sched_request_parse(NULL, 0, &req, err, sizeof err), -1);
    /* a NULL or zero-length err buffer is allowed */
    assert_int_equal(sched_request_parse("<x/>", 4, &req, NULL, 0), -1);
    /* a short err buffer gets a truncated, terminated message */
    char small[8];
    assert_int_equal(sched_request_parse("<x/>", 4, &req, small, sizeof small), -1);
    assert_int_equal(strlen(small), 7);
}

static void test_doctype_rejected(void **state)
{
    (void)state;
    expect_error("<?xml version=\"1.0\"?>\n"
                 "<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;\">]>\n"
                 "<scheduler_request><authenticator>&lol2;</authenticator></scheduler_request>",
                 "DOCTYPE");
}

/* Builds a request with n copies of item inside wrapper open/close. */
static char *repeat_doc(const char *open, const char *item_fmt, int n, const char *close)
{
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, "<scheduler_request>\n");
    sb_puts(&sb, open);
    for (int i = 0; i < n; i++) sb_printf(&sb, item_fmt, i, i);
    sb_puts(&sb, close);
    sb_puts(&sb, "</scheduler_request>\n");
    char *doc = sb_detach(&sb);
    sb_free(&sb);   /* sb_detach leaves a fresh empty buffer behind */
    return doc;
}

static void check_limit(const char *open, const char *item, int max, const char *close,
                        const char *want)
{
    struct sched_request req;
    char err[256] = "";
    char *ok = repeat_doc(open, item, max, close);
    assert_int_equal(parse(ok, &req, err, sizeof err), 0);
    sched_request_free(&req);
    free(ok);
    char *bad = repeat_doc(open, item, max + 1, close);
    expect_error(bad, want);
    free(bad);
}

static void test_limits(void **state)
{
    (void)state;
    check_limit("", "<result><name>r_%d</name><state>%d</state></result>\n", SR_MAX_REPORTED, "",
                "too many <result> elements (max 1000)");
    check_limit("", "<file_info><name>s_%d</name><status>%d</status></file_info>\n", SR_MAX_STICKY, "",
                "too many top-level <file_info> elements (max 10000)");
    check_limit("<other_results>", "<other_result><name>o_%d_%d</name></other_result>\n", SR_MAX_OTHER,
                "</other_results>", "too many <other_result> elements (max 10000)");
    check_limit("<app_versions>",
                "<app_version><app_name>a%d</app_name><version_num>%d</version_num></app_version>\n",
                SR_MAX_APP_VERSIONS, "</app_versions>", "too many <app_version> elements (max 100)");
    check_limit("", "<alt_platform><name>p%d_%d</name></alt_platform>\n", SR_MAX_ALT_PLATFORMS, "",
                "too many <alt_platform> elements (max 8)");
    check_limit("<result><name>r</name>", "<file_info><name>f%d_%d</name></file_info>\n",
                SR_MAX_RESULT_FILES, "</result>",
                "too many <file_info> elements in one <result> (max 16)");
}

static void test_long_names(void **state)
{
    (void)state;
    char name[SR_NAME_LEN + 1];
    memset(name, 'n', SR_NAME_LEN);
    name[SR_NAME_LEN] = 0;          /* 256 bytes: one too many */
    char body[1024];
    snprintf(body, sizeof body, "<result><name>%s</name></result>", name);
    expect_body_error(body, "<name> too long (256 bytes, max 255)");
    snprintf(body, sizeof body, "<authenticator>%s</authenticator>", name);
    expect_body_error(body, "<authenticator> too long");
    snprintf(body, sizeof body, "<file_info><name>%s</name></file_info>", name);
    expect_body_error(body, "<name> too long");
    char plat[65];
    memset(plat, 'p', 64);
    plat[64] = 0;
    snprintf(body, sizeof body, "<platform_name>%s</platform_name>", plat);
    expect_body_error(body, "<platform_name> too long (64 bytes, max 63)");
    expect_body_error("<result><name>r</name><file_info><name>f</name>"
                      "<md5_cksum>0123456789abcdef0123456789abcdef0</md5_cksum></file_info></result>",
                      "<md5_cksum> too long");

    /* exactly 255 bytes fits */
    name[SR_NAME_LEN - 1] = 0;
    char doc[1024];
    snprintf(doc, sizeof doc, "<scheduler_request><result><name>%s</name></result></scheduler_request>", name);
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(doc, &req, err, sizeof err), 0);
    assert_string_equal(req.results[0].name, name);
    sched_request_free(&req);

    /* an over-long text is refused while it is read, not after */
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, "<scheduler_request><host_info><p_model>");
    for (int i = 0; i < 70000; i++) sb_puts(&sb, "x");
    sb_puts(&sb, "</p_model></host_info></scheduler_request>");
    expect_error(sb.s, "text of <p_model> longer than 65536 bytes");
    sb_free(&sb);
}

static void test_bad_numbers(void **state)
{
    (void)state;
    expect_body_error("<rpc_seqno>12abc</rpc_seqno>", "bad integer in <rpc_seqno>: \"12abc\"");
    expect_body_error("<rpc_seqno>99999999999</rpc_seqno>", "bad integer in <rpc_seqno>");
    expect_body_error("<hostid>99999999999999999999</hostid>", "bad integer in <hostid>");
    expect_body_error("<hostid>1.5</hostid>", "bad integer in <hostid>");
    expect_body_error("<hostid></hostid>", "bad integer in <hostid>");
    expect_body_error("<host_info><p_fpops>fast</p_fpops></host_info>", "bad number in <p_fpops>: \"fast\"");
    expect_body_error("<host_info><p_fpops>nan</p_fpops></host_info>", "bad number in <p_fpops>");
    expect_body_error("<host_info><d_free>1e999</d_free></host_info>", "bad number in <d_free>");
    expect_body_error("<time_stats><on_frac>inf</on_frac></time_stats>", "bad number in <on_frac>");
    expect_body_error("<result><name>r</name><exit_status>-</exit_status></result>",
                      "bad integer in <exit_status>");
    expect_body_error("<result><name>r</name><file_info><name>f</name><nbytes>12 KB</nbytes>"
                      "</file_info></result>", "bad number in <nbytes>: \"12 KB\"");
    expect_body_error("<file_info><name>s</name><status>yes</status></file_info>", "bad integer in <status>");
    expect_body_error("<dont_send_work>maybe</dont_send_work>", "bad boolean in <dont_send_work>");
    /* the quoted value stays on one line */
    expect_body_error("<rpc_seqno>1\n2</rpc_seqno>", "\"1?2\"");

    /* numbers we ignore may be anything */
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse("<scheduler_request><sandbox>what</sandbox><host_info><m_cache>?</m_cache>"
                           "</host_info><hostid> 7 </hostid></scheduler_request>", &req, err, sizeof err), 0);
    assert_int_equal(req.hostid, 7);
    sched_request_free(&req);
}

static void test_missing_names(void **state)
{
    (void)state;
    expect_body_error("<result><state>5</state></result>", "<result> without <name>");
    expect_body_error("<result><name>  </name></result>", "<result> without <name>");
    expect_body_error("<result><name>r</name><file_info><nbytes>1</nbytes></file_info></result>",
                      "<file_info> without <name> in reported <result>");
    expect_body_error("<file_info><status>1</status></file_info>", "top-level <file_info> without <name>");
    expect_body_error("<other_results><other_result/></other_results>", "<other_result> without <name>");
    expect_body_error("<app_versions><app_version><version_num>1</version_num></app_version></app_versions>",
                      "<app_version> without <app_name>");
    expect_body_error("<alt_platform></alt_platform>", "<alt_platform> without <name>");
    expect_body_error("<in_progress_results><ip_result><time_remaining>1</time_remaining></ip_result>"
                      "</in_progress_results>", "<ip_result> without <name>");
}

static void test_depth_limit(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, "<scheduler_request>");
    for (int i = 0; i < SR_MAX_DEPTH - 1; i++) sb_puts(&sb, "<a>");
    for (int i = 0; i < SR_MAX_DEPTH - 1; i++) sb_puts(&sb, "</a>");
    sb_puts(&sb, "</scheduler_request>");
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(sb.s, &req, err, sizeof err), 0);   /* exactly 32 levels */
    sched_request_free(&req);

    sb_reset(&sb);
    sb_puts(&sb, "<scheduler_request>");
    for (int i = 0; i < SR_MAX_DEPTH; i++) sb_puts(&sb, "<a>");
    for (int i = 0; i < SR_MAX_DEPTH; i++) sb_puts(&sb, "</a>");
    sb_puts(&sb, "</scheduler_request>");
    expect_error(sb.s, "nested deeper than 32");
    sb_free(&sb);
}

static void test_stderr_cut(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, "<scheduler_request><result><name>r</name><stderr_out><![CDATA[");
    /* "xx" then many 3-byte characters: the cut must not split one */
    sb_puts(&sb, "xx");
    for (int i = 0; i < 40000; i++) sb_puts(&sb, "\xe2\x82\xac");
    sb_puts(&sb, "]]></stderr_out><state>5</state></result></scheduler_request>");
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(sb.s, &req, err, sizeof err), 0);
    const char *e = req.results[0].stderr_out;
    assert_non_null(e);
    size_t n = strlen(e);
    assert_true(n <= SR_STDERR_MAX);
    assert_true(n > SR_STDERR_MAX - 3);
    assert_int_equal((n - 2) % 3, 0);   /* whole characters only */
    assert_int_equal(req.results[0].state, 5);
    sched_request_free(&req);
    sb_free(&sb);

    /* empty stderr_out gives "", absent gives NULL */
    assert_int_equal(parse("<scheduler_request><result><name>r</name><stderr_out></stderr_out></result>"
                           "<result><name>s</name></result></scheduler_request>", &req, err, sizeof err), 0);
    assert_string_equal(req.results[0].stderr_out, "");
    assert_null(req.results[1].stderr_out);
    sched_request_free(&req);
}

/* An app's stderr can hold bytes XML forbids; the request must still parse. */
static void test_stderr_bad_bytes(void **state)
{
    (void)state;
    const char doc[] =
        "<scheduler_request>\n<result>\n<name>r</name>\n<stderr_out>\n<![CDATA[\n<stderr_txt>\n"
        "color \x1b[31mred\x1b[0m, latin1 caf\xe9, nul-free \xff\xfe end\n"
        "</stderr_txt>\n]]>\n</stderr_out>\n<exit_status>0</exit_status>\n</result>\n</scheduler_request>\n";
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(sched_request_parse(doc, sizeof doc - 1, &req, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_non_null(strstr(req.results[0].stderr_out, "color ?[31mred?[0m, latin1 caf?, nul-free ?? end"));
    sched_request_free(&req);

    /* a NUL byte too, and the error of a still-broken document is reported */
    const char doc2[] = "<scheduler_request><result><name>r\0x</name></result></scheduler_request>";
    assert_int_equal(sched_request_parse(doc2, sizeof doc2 - 1, &req, err, sizeof err), 0);
    assert_string_equal(req.results[0].name, "r?x");
    sched_request_free(&req);
    const char doc3[] = "<scheduler_request><result><name>r\x01</nam></result></scheduler_request>";
    assert_int_equal(sched_request_parse(doc3, sizeof doc3 - 1, &req, err, sizeof err), -1);
    assert_non_null(strstr(err, "mismatched tag"));
}

/* More than 1 MiB, so the parser is fed in several slices. */
static void test_big_request(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, "<scheduler_request>\n");
    for (int i = 0; i < SR_MAX_REPORTED; i++) {
        sb_printf(&sb, "<result><name>big_%d</name><state>5</state><stderr_out><![CDATA[", i);
        for (int j = 0; j < 40; j++) sb_puts(&sb, "line of stderr output, fairly long\n");
        sb_printf(&sb, "]]></stderr_out><file_info><name>big_%d_out</name><nbytes>%d</nbytes>"
                       "</file_info></result>\n", i, i);
    }
    sb_puts(&sb, "</scheduler_request>\n");
    assert_true(sb.len > (1u << 20));
    struct sched_request req;
    char err[256] = "";
    assert_int_equal(parse(sb.s, &req, err, sizeof err), 0);
    assert_int_equal(req.nresults, SR_MAX_REPORTED);
    assert_string_equal(req.results[999].name, "big_999");
    assert_string_equal(req.results[999].files[0].name, "big_999_out");
    assert_float_equal(req.results[999].files[0].nbytes, 999.0, 1e-9);
    assert_int_equal(strlen(req.results[500].stderr_out), 40 * 35);
    sched_request_free(&req);
    sb_free(&sb);
}

/* Many threads parse at once: the parser keeps no shared state. */
static void *parse_many(void *arg)
{
    long bad = 0;
    for (int i = 0; i < 50; i++) {
        struct sched_request req;
        char err[256];
        if (sched_request_parse(FULL_REQUEST, strlen(FULL_REQUEST), &req, err, sizeof err) != 0 ||
            req.nresults != 2 || strcmp(req.results[1].files[1].name, "wu_2_r1_log") != 0)
            bad++;
        sched_request_free(&req);
    }
    (void)arg;
    return (void *)bad;
}

static void test_threads(void **state)
{
    (void)state;
    pthread_t t[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, parse_many, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        assert_null(bad);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_request_top_level),
        cmocka_unit_test(test_full_request_host),
        cmocka_unit_test(test_full_request_results),
        cmocka_unit_test(test_full_request_lists),
        cmocka_unit_test(test_first_rpc),
        cmocka_unit_test(test_unknown_elements_ignored),
        cmocka_unit_test(test_malformed_xml),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_wrong_root_and_empty),
        cmocka_unit_test(test_doctype_rejected),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_long_names),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_missing_names),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_stderr_cut),
        cmocka_unit_test(test_stderr_bad_bytes),
        cmocka_unit_test(test_big_request),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
