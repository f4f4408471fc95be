# rpc.sh - hand-written scheduler requests and uploads for tests that talk to locusd
# directly (protocol notes 2.2), without a BOINC client. Sourced after
# boinc.sh; uses $R (the request file), $B and $H (the last reply's body
# and headers) and $SCHED (the scheduler URL), which the test sets.

# request AUTH HOSTID WORK_SECS [EXTRA_XML]: a minimal scheduler request as
# the 7.20 client writes it (protocol notes 2.2), on stdout; $CPID, when
# set, is its host CPID.
request() {
    cat <<XML
<scheduler_request>
    <authenticator>$1</authenticator>
    <hostid>$2</hostid>
    <rpc_seqno>${SEQNO:-0}</rpc_seqno>
    <core_client_major_version>7</core_client_major_version>
    <core_client_minor_version>20</core_client_minor_version>
    <core_client_release>5</core_client_release>
    <resource_share_fraction>1.000000</resource_share_fraction>
    <duration_correction_factor>1.000000</duration_correction_factor>
    <allow_multiple_clients>0</allow_multiple_clients>
    <sandbox>0</sandbox>
    <dont_send_work>0</dont_send_work>
    <work_req_seconds>$3</work_req_seconds>
    <cpu_req_secs>$3</cpu_req_secs>
    <cpu_req_instances>0.000000</cpu_req_instances>
    <estimated_delay>0.000000</estimated_delay>
    <client_cap_plan_class>1</client_cap_plan_class>
    <platform_name>x86_64-pc-linux-gnu</platform_name>
    <time_stats>
        <on_frac>1.000000</on_frac>
        <connected_frac>1.000000</connected_frac>
        <active_frac>1.000000</active_frac>
    </time_stats>
    <host_info>
        <timezone>0</timezone>
        <domain_name>badinput</domain_name>
        <ip_addr>127.0.0.1</ip_addr>
        <host_cpid>${CPID:-0123456789abcdef0123456789abcdef}</host_cpid>
        <p_ncpus>1</p_ncpus>
        <p_vendor>test</p_vendor>
        <p_model>test</p_model>
        <p_fpops>1000000000.000000</p_fpops>
        <p_iops>1000000000.000000</p_iops>
        <m_nbytes>4000000000.000000</m_nbytes>
        <d_total>100000000000.000000</d_total>
        <d_free>50000000000.000000</d_free>
        <os_name>Linux</os_name>
        <os_version>6.1</os_version>
    </host_info>
${4:-}
</scheduler_request>
XML
}

# post URL FILE [CURL_ARGS...]: POSTs FILE; body in $B, headers in $H; prints the HTTP status.
post() {
    local url=$1 file=$2
    shift 2
    curl -s -o "$B" -D "$H" -w '%{http_code}' --max-time 60 -X POST \
        -H 'Content-Type: application/x-www-form-urlencoded' --data-binary "@$file" "$@" "$url" || echo "000"
}

# register KEY: a first RPC (hostid 0, no work asked); prints the new hostid.
register() {
    request "$1" 0 0 >"$R"
    local st
    st=$(post "$SCHED" "$R")
    [ "$st" = 200 ] || fail "registering RPC: HTTP $st: $(head -c 300 "$B")"
    sed -n 's|.*<hostid>\([0-9]*\)</hostid>.*|\1|p' "$B" | head -n 1
}

# upload_req FILE NAME NBYTES MD5 [OFFSET [CERT]]: an upload header as the client writes it
# (notes 3.2), with CERT, the file's certificate from the reply, as its <xml_signature>.
upload_req() {
    cat >"$1" <<XML
<data_server_request>
    <core_client_major_version>7</core_client_major_version>
    <core_client_minor_version>20</core_client_minor_version>
    <core_client_release>5</core_client_release>
<file_upload>
<file_info>
<name>$2</name>
<xml_signature>
${6:-}</xml_signature>
<max_nbytes>67108864</max_nbytes>
</file_info>
<nbytes>$3</nbytes>
<md5_cksum>$4</md5_cksum>
<offset>${5:-0}</offset>
<data>
XML
}

# upload_status: the <status> of the last upload reply.
# size_req FILE NAME: a size query (get_file_size) as the client writes it.
size_req() {
    cat >"$1" <<XML
<data_server_request>
    <core_client_major_version>7</core_client_major_version>
    <core_client_minor_version>20</core_client_minor_version>
    <core_client_release>5</core_client_release>
    <get_file_size>$2</get_file_size>
</data_server_request>
XML
}

upload_status() { sed -n 's|.*<status>\(-\{0,1\}[0-9]*\)</status>.*|\1|p' "$B" | head -n 1; }
