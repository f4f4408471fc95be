#!/usr/bin/env bash
# job_show: seeing what happened to jobs (docs/guide.md, "What went
# wrong"; docs/api.md). Two locus-clients of bob's (two hosts: a host
# never gets two instances of one job) compute batch pr of the example
# worker: pr_0 succeeds, pr_1 fails on each host with exit status 3
# (--fail-code 3, its stderr known) and so fails, pr_2 succeeds
# but stays validated with its output in upload/ (an assimilator hook
# that fails for it). A batch made before pr puts the job ids of pr's
# instance names apart from its job numbers. Then
#  - `locus job show` finds pr_1 by its name, by an instance's wire name
#    (pr_1__4_1: the job's name and id) and by its number, and shows
#    every field, text and --json, each checked against the store; pr_2's
#    output is shown in upload/ and
#    results/ with the sizes on disk;
#  - `locus batch show` groups pr's errors, and `locus stat` says that pr
#    failed and why, text and --json (and nothing for a batch without);
#  - GET /api/v1/batches/B/jobs/J and /failures answer the same JSON as
#    the CLI to the batch's owner and an admin; 404 to another submitter
#    (as for a batch that does not exist), 401 without a key, 403 with an
#    account key; the public GET batches/B is still open.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
AGENT_DIR=$TMP/agent
AGENT_LOG=$TMP/agent.log
AGENT_OPTS=(--max-cpus 1 --retry-min 1 --retry-max 4 --min-queue 60 --benchmark-seconds 0.5)
. "$(dirname "$0")/lib/agent.sh"

proj=$TMP/proj
make_project "$proj" alice bob carl dan
KEY_A=$(submit_key_of "$proj" alice) KEY_C=$(submit_key_of "$proj" carl) KEY_D=$(submit_key_of "$proj" dan)
"$LOCUS" user role "$proj" dan admin || fail "locus user role dan admin failed"
printf '#!/bin/sh\n# keeps pr_2 validated, with its upload\n[ "$LOCUS_JOB_NAME" != pr_2 ]\n' >"$TMP/assim.sh"
chmod +x "$TMP/assim.sh"
set_config "$proj" assimilator_cmd "$TMP/assim.sh"
# no end-of-batch spares: the counts shown are those of the jobs' own instances
set_config "$proj" end_of_batch_replication 0
echo '{"cmdline": "--iterations 1000"}' >"$TMP/one.json"
"$LOCUS" batch create "$proj" --app worker --count 2 --input-template "$TMP/one.json" --name first --user carl \
    >/dev/null || fail "locus batch create first failed"
cat >"$TMP/jobs.jsonl" <<'JOBS'
{"cmdline": "--iterations 1000 --seed 1", "inputs": ["in.dat=in"]}
{"cmdline": "--iterations 1000 --fail-code 3", "inputs": ["in.dat=in"]}
{"cmdline": "--iterations 1000 --seed 2", "inputs": ["in.dat=in"]}
JOBS
"$LOCUS" batch create "$proj" --app worker --jobs "$TMP/jobs.jsonl" --name pr --user alice --max-error-instances 1 \
    >/dev/null || fail "locus batch create pr failed"
[ "$(sql "$proj" "SELECT id FROM jobs WHERE name='pr_1'")" = 4 ] || fail "pr_1 is not job 4"
start_locusd "$proj"
start_agent
key_of bob | lc attach "$URL" - || afail "attach failed"
start_second_agent "$(key_of bob)"

# until pr_0 is done, pr_1 failed, pr_2 validated (its hook failed) and nothing of pr is out
want="$JOB_DONE $JOB_FAILED $JOB_VALIDATED 0"
got=
for i in $(seq 240); do
    got=$(sql "$proj" "SELECT (SELECT state FROM jobs WHERE name='pr_0'), (SELECT state FROM jobs WHERE name='pr_1'),
                       (SELECT state FROM jobs WHERE name='pr_2'),
                       (SELECT count(*) FROM instances i JOIN jobs j ON j.id = i.job_id
                        WHERE j.batch_id = 2 AND i.state = $INST_IN_PROGRESS)" | tr '|' ' ')
    [ "$got" = "$want" ] && grep -q "job 5 kept validated" "$LOCUSD_LOG" && break
    sleep 0.5
done
[ "$got" = "$want" ] || afail "pr's jobs and instances out: '$got' after 120 s, expected '$want'"
say "pr_0 done, pr_1 failed, pr_2 validated and kept"

# has WHAT TEXT WANT: TEXT holds WANT (a fixed string)
has() { grep -qF -- "$3" <<<"$2" || fail "$1: no '$3' in: $2"; }
# like WHAT TEXT REGEX: TEXT matches REGEX (grep -E)
like() { grep -qE -- "$3" <<<"$2" || fail "$1: nothing like '$3' in: $2"; }

# ---- locus job show pr_1: the failed job, every field against the store ----
DOM=$(sql "$proj" "SELECT domain_name FROM hosts WHERE id = (SELECT host_id FROM instances WHERE job_id = 4)")
UID_B=$(sql "$proj" "SELECT id FROM users WHERE name = 'bob'")
ERR1=$(sql "$proj" "SELECT stderr FROM instances WHERE job_id = 4 AND seq = 0" \
       | sed -n '/<stderr_txt>/,/<\/stderr_txt>/p' | grep -v -e '<stderr_txt>' -e '</stderr_txt>' | grep -v '^ *$' | head -n 1)
[ -n "$ERR1" ] || fail "pr_1's stderr has no line: $(sql "$proj" "SELECT stderr FROM instances WHERE job_id = 4")"
J=$("$LOCUS" job show "$proj" pr pr_1 --json) || fail "locus job show pr pr_1 --json failed"
has "job --json" "$J" '{"batch":"pr","asked":"pr_1","matched_by":"name","job":{"id":4,"name":"pr_1","batch":"pr","number":1,"app":"worker","state":"failed","errors":["too_many_errors"],"cmdline":"--iterations 1000 --fail-code 3","inputs":[{"file":"in.dat","open_name":"in","nbytes":3000}],"target_nresults":1,"canonical_instance":null,"done_time":'
has "job --json" "$J" '"results":[{"name":"out","file":"out","path":null,"nbytes":null}]},"instances":['
for seq in 0 1; do
    IFS='|' read -r HID sent due back st <<<"$(sql "$proj" "SELECT host_id, sent_time, deadline, received_time,
                                                            exit_status FROM instances WHERE job_id = 4 AND seq = $seq")"
    [ "$st" = 3 ] || fail "pr_1's instance $seq: exit status $st in the store, expected 3"
    has "job --json" "$J" "{\"name\":\"pr_1__4_$seq\",\"seq\":$seq,\"host_id\":$HID,\"host\":\"$DOM\",\"user_id\":$UID_B,\"user\":\"bob\",\"app_version\":{\"version_num\":100,\"platform\":\"x86_64-pc-linux-gnu\",\"plan_class\":\"\"},\"anonymous_platform\":false,\"state\":\"over\",\"outcome\":\"client_error\",\"validate_state\":\"init\",\"exit_status\":3,\"sent_time\":$sent,\"deadline\":$due,\"received_time\":$back,"
    like "job --json" "$J" "\"name\":\"pr_1__4_$seq\",[^]]*\"elapsed_time\":[0-9.e+-]+,\"cpu_time\":[0-9.e+-]+,\"credit\":0.0,\"canonical\":false,\"message\":\"\",\"stderr_tail\":\"[^\"]*worker: failing with code 3 as asked\",\"stderr_lines\":[1-9][0-9]*,\"stderr_cut\":false,\"outputs\":\\[\\{\"name\":\"out\",\"file\":\"pr_1__4_${seq}_0\",\"path\":null,\"nbytes\":null\\}\\]\\}"
done
T=$("$LOCUS" job show "$proj" pr pr_1) || fail "locus job show pr pr_1 failed"
has "job" "$T" "job pr_1 (id 4), number 1 of batch pr: failed (too_many_errors)"
has "job" "$T" "app worker, command line '--iterations 1000 --fail-code 3', results wanted: 1"
has "job" "$T" "input in.dat as in (3000 bytes)"
has "job" "$T" "results: none in results/"
has "job" "$T" "instance pr_1__4_1: over, client_error, exit status 3, validation init"
has "job" "$T" "  host $HID ($DOM), user bob, app version 100 x86_64-pc-linux-gnu"   # pr_1__4_1's host
has "job" "$T" "  output out: not on disk (pr_1__4_1_0)"
has "job" "$T" "    | worker: failing with code 3 as asked"
like "job" "$T" "  sent [0-9-]+ [0-9:]+, deadline [0-9-]+ [0-9:]+, received [0-9-]+ [0-9:]+"
like "job" "$T" "  elapsed [0-9.]+ s, cpu [0-9.]+ s, credit 0.00"
# what a volunteer sees names the job and its id: pr_1__4_1 is pr_1's second instance; 1 is its number
J=$("$LOCUS" job show "$proj" pr pr_1__4_1 --json) || fail "locus job show pr pr_1__4_1 failed"
has "job by instance" "$J" '{"batch":"pr","asked":"pr_1__4_1","matched_by":"instance","job":{"id":4,"name":"pr_1",'
has "job by instance" "$("$LOCUS" job show "$proj" pr pr_1__4_1)" "  pr_1__4_1 is its instance 1"
J=$("$LOCUS" job show "$proj" 2 1 --json) || fail "locus job show 2 1 failed"
has "job by number" "$J" '{"batch":"pr","asked":"1","matched_by":"number","job":{"id":4,"name":"pr_1",'
if "$LOCUS" job show "$proj" pr first_0__1_0 2>"$TMP/err"; then
    fail "first_0__1_0 (an instance of first's job 1) found in pr"
fi
has "job absent" "$(cat "$TMP/err")" \
    "batch pr has no job named 'first_0__1_0', no instance of that name and no job of that number"
say "locus job show: pr_1 by name, by instance name and by number, every field"

# ---- pr_2: validated, its output in upload/ and copied to results/ ----
UP=$(upload_path "$proj" pr_2__5_0_0)
[ -n "$UP" ] || fail "pr_2's upload pr_2__5_0_0 is not kept"
NUP=$(stat -c %s "$UP")
NRES=$(stat -c %s "$proj/results/pr/pr_2/out")
J=$("$LOCUS" job show "$proj" pr pr_2 --json) || fail "locus job show pr pr_2 failed"
has "pr_2 --json" "$J" "\"state\":\"validated\",\"errors\":[],"
has "pr_2 --json" "$J" "\"canonical_instance\":\"pr_2__5_0\",\"done_time\":0,\"results\":[{\"name\":\"out\",\"file\":\"out\",\"path\":\"results/pr/pr_2/out\",\"nbytes\":$NRES}]"
has "pr_2 --json" "$J" "\"canonical\":true,"
has "pr_2 --json" "$J" "\"outputs\":[{\"name\":\"out\",\"file\":\"pr_2__5_0_0\",\"path\":\"${UP#"$proj"/}\",\"nbytes\":$NUP}]"
T=$("$LOCUS" job show "$proj" pr pr_2) || fail "locus job show pr pr_2 failed"
has "pr_2" "$T" "instance pr_2__5_0 (canonical): over, success, exit status 0"
has "pr_2" "$T" "  output out: ${UP#"$proj"/} ($NUP bytes)"
has "pr_2" "$T" "result out: results/pr/pr_2/out ($NRES bytes)"
say "locus job show: pr_2's output in upload/ and results/"

# ---- locus batch show, locus stat ----
BACK=$(sql "$proj" "SELECT received_time FROM instances WHERE job_id = 4 AND seq = 1")
GROUP="{\"outcome\":\"client_error\",\"exit_status\":3,\"error\":\"$ERR1\",\"instances\":2,\"hosts\":2,\"example_job\":\"pr_1\",\"example_instance\":\"pr_1__4_1\",\"last_time\":$BACK}"
F=$("$LOCUS" batch show "$proj" pr --json) || fail "locus batch show pr --json failed"
has "batch show --json" "$F" '{"batch":{"id":2,"name":"pr","state":"active","app":"worker","create_time":'
has "batch show --json" "$F" '"jobs":3,"done":1,"to_assimilate":1,"active":0,"failed":1,"cancelled":0,"instances_in_progress":0,"instances_success":2,"instances_error":2,"min_quorum":1,"adaptive":false,"throughput_jobs_per_h":'
has "batch show --json" "$F" "\"failed_by\":{\"too_many_errors\":1},\"instances_read\":2,\"groups\":[$GROUP],\"other_groups\":0,\"other_instances\":0}"
T=$("$LOCUS" batch show "$proj" pr) || fail "locus batch show pr failed"
has "batch show" "$T" "batch pr (id 2): app worker, active, created "
has "batch show" "$T" "jobs 3: 1 done, 1 to assimilate, 0 active, 1 failed, 0 cancelled"
has "batch show" "$T" "instances: 0 in progress, 2 succeeded, 2 errored; "
has "batch show" "$T" "failed jobs, by reason: too_many_errors 1"
has "batch show" "$T" "  2 instances on 2 hosts: client_error, exit 3: $ERR1"
has "batch show" "$T" "      e.g. job pr_1 (instance pr_1__4_1), back "
has "batch show" "$("$LOCUS" batch show "$proj" first)" "no errored instances"
S=$("$LOCUS" stat "$proj") || fail "locus stat failed"
has "stat" "$(grep -A1 '^2 *pr ' <<<"$S")" \
    "       failures: 1 job failed (too_many_errors 1); 2 errored instances, most often (2) client_error, exit 3: $ERR1; see locus batch show"
[ "$(grep -A1 '^1 *first ' <<<"$S" | grep -c failures)" = 0 ] || fail "stat: a failures line under first: $S"
has "stat --json" "$("$LOCUS" stat "$proj" pr --json)" "\"failed_by\":{\"too_many_errors\":1},\"top_error\":$GROUP}],\"generator_failed\":[]}"
has "stat --json" "$("$LOCUS" stat "$proj" first --json)" '"failed_by":{},"top_error":null}],"generator_failed":[]}'
say "locus batch show and locus stat: pr's errors grouped"

# ---- the API: the same JSON, for the batch's owner and admins only ----
B=$TMP/body   # api_get's answer
# tail_of FILE: a failures view without its batch's figures (throughput and ETA move with the clock)
tail_of() { sed 's/^{"batch":{[^}]*},//' "$1"; }

"$LOCUS" job show "$proj" pr pr_1 --json >"$TMP/cli.json"
for key in "$KEY_A" "$KEY_D"; do
    st=$(api_get batches/pr/jobs/pr_1 "$key")
    [ "$st" = 200 ] || fail "GET batches/pr/jobs/pr_1: HTTP $st: $(cat "$B")"
    cmp -s "$B" "$TMP/cli.json" || fail "GET batches/pr/jobs/pr_1 differs from locus job show --json: $(cat "$B")"
    st=$(api_get batches/2/failures "$key")
    [ "$st" = 200 ] || fail "GET batches/2/failures: HTTP $st: $(cat "$B")"
    has "GET failures" "$(cat "$B")" '{"batch":{"id":2,"name":"pr","state":"active","app":"worker",'
    "$LOCUS" batch show "$proj" pr --json >"$TMP/cli.json.f"
    [ "$(tail_of "$B")" = "$(tail_of "$TMP/cli.json.f")" ] || fail "GET failures differs from locus batch show --json: $(cat "$B")"
done
st=$(api_get batches/pr/jobs/pr_1__4_0 "$KEY_A")
[ "$st" = 200 ] && grep -qF '"asked":"pr_1__4_0","matched_by":"instance"' "$B" || fail "GET jobs/pr_1__4_0: $st $(cat "$B")"
st=$(api_get batches/pr/jobs/nosuch "$KEY_A")
[ "$st" = 404 ] && grep -qF '"no such job in this batch"' "$B" || fail "GET jobs/nosuch: $st $(cat "$B")"
st=$(api_get batches/nosuch/failures "$KEY_A")
[ "$st" = 404 ] || fail "GET batches/nosuch/failures: HTTP $st"
cp "$B" "$TMP/absent.json"
for path in batches/pr/failures batches/2/jobs/pr_1 batches/pr/jobs/1; do
    st=$(api_get "$path" "$KEY_C")
    [ "$st" = 404 ] && cmp -s "$B" "$TMP/absent.json" || fail "carl's GET $path: HTTP $st $(cat "$B"), not as absent"
done
st=$(api_get batches/first/failures "$KEY_A")
[ "$st" = 404 ] || fail "alice's GET of carl's batch first: HTTP $st"
st=$(api_get batches/first/failures "$KEY_C")
[ "$st" = 200 ] || fail "carl's GET of his batch first: HTTP $st: $(cat "$B")"
st=$(api_get batches/pr/failures "")
[ "$st" = 401 ] || fail "GET failures without a key: HTTP $st"
st=$(api_get batches/pr/jobs/pr_1 "$(key_of bob)")
[ "$st" = 403 ] || fail "GET a job with an account key: HTTP $st"
st=$(api_get batches/pr/nope "$KEY_A")
[ "$st" = 404 ] && grep -qF 'NAME_OR_ID/failures' "$B" || fail "GET batches/pr/nope: $st $(cat "$B")"
st=$(api_get batches/pr "")
[ "$st" = 200 ] && grep -qF '"name":"pr"' "$B" || fail "the public GET batches/pr: $st $(cat "$B")"
say "API: the CLI's JSON for alice (owner) and dan (admin); carl reads pr as absent; 401 and 403 without a submit key"

stop_agent
AGENT_PID=$AGENT2_PID AGENT_LOG=$TMP/agent2.log stop_agent
AGENT2_PID=
stop_locusd
say "PASS"
