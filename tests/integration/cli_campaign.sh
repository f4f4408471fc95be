#!/usr/bin/env bash
# cli_campaign: `locus cluster` and `locus campaign` end to end without
# locusd: clusters declared, listed and changed; a campaign submitted with
# its param file (relative to the JDL, or under ~) through an admission
# rule, the order's body checked, and the command waiting for a stand-in
# daemon (sqlite3 marking the order done or refused) or timing out;
# params added to a campaign from a file or standard input, checked
# against its params, its owner and the admission rules (as the owner's);
# refusals exit 1 with one line on stderr and write no order; an event
# shown with its message, in text and JSON.
set -euo pipefail
. "$(dirname "$0")/lib/codes.sh"

build=${LOCUS_BUILD_DIR:-build}
locus=$build/bin/locus
[ -x "$locus" ] || { echo "cli_campaign: $locus not built" >&2; exit 1; }
work=$(mktemp -d /tmp/locus-cli-campaign-XXXXXX)
daemon=
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; rm -rf "$work"' EXIT
proj=$work/proj
db=$proj/locus.db
sql() { sqlite3 -cmd ".timeout 5000" "$db" "$@"; }

passed=0 failed=0
fail() { echo "FAIL $1: $2" >&2; failed=$((failed + 1)); }
ok() { passed=$((passed + 1)); }

# expect NAME STATUS PATTERN COMMAND...: the status, one "locus: " line on
# stderr matching PATTERN, and no new order.
expect() {
  local name=$1 want=$2 pattern=$3
  shift 3
  local before status=0
  before=$(sql "SELECT count(*) FROM grid_orders")
  "$@" >"$work/out" 2>"$work/err" || status=$?
  if [ "$status" != "$want" ]; then fail "$name" "exit $status, wanted $want: $(cat "$work/err")"; return; fi
  if [ "$(wc -l <"$work/err")" != 1 ] || ! grep -q "^locus: .*$pattern" "$work/err"; then
    fail "$name" "stderr: $(cat "$work/err")"; return
  fi
  [ "$(sql "SELECT count(*) FROM grid_orders")" = "$before" ] || { fail "$name" "an order was written"; return; }
  ok
}

# answer STATE RESULT ERROR: stands in for the grid daemon, once, in the
# background (its pid in $daemon): marks the next order written with STATE,
# $GOS_DONE or $GOS_REFUSED. Orders written before the call are left alone.
answer() {
  local after
  after=$(sql "SELECT coalesce(max(id), 0) FROM grid_orders")
  answer_after "$after" "$@" &
  daemon=$!
}
answer_after() {
  local after=$1 new
  shift
  for _ in $(seq 200); do
    new="state = $GOS_PENDING AND id > $after"
    if [ "$(sql "SELECT count(*) FROM grid_orders WHERE $new")" -gt 0 ]; then
      sql "UPDATE grid_orders SET state = $1, result = $2, error = '$3', done_time = 1 WHERE $new"
      return
    fi
    sleep 0.05
  done
}

"$locus" init "$proj" --url http://127.0.0.1:8125/proj/ >/dev/null
"$locus" user create "$proj" alice >/dev/null
"$locus" user create "$proj" bob >/dev/null

# ---- clusters ----
touch "$work/slurm-alpha.conf"
(cd "$work" && "$locus" cluster add "$proj" alpha --driver slurm --conf slurm-alpha.conf --partition be) >/dev/null
"$locus" cluster add "$proj" beta --driver oar --api http://127.0.0.1:6668/oarapi --timeout-ms 2000 >/dev/null
# the conf is recorded by its absolute path: locusd runs elsewhere
[ "$(sql "SELECT conf FROM clusters WHERE name = 'alpha'")" = "$work/slurm-alpha.conf" ] && ok ||
  fail cluster_conf "conf not absolute"
"$locus" cluster list "$proj" | grep -q "^2 *beta *oar *enabled *default http://127.0.0.1:6668/oarapi" && ok ||
  fail cluster_list "$("$locus" cluster list "$proj")"
"$locus" cluster list "$proj" --json | grep -q '"name":"alpha","driver":"slurm"' && ok || fail cluster_json ""
expect cluster_taken 1 "cluster alpha exists" "$locus" cluster add "$proj" alpha --driver oar --api http://h/
expect cluster_driver 2 "slurm, slurmrest or oar" "$locus" cluster add "$proj" gamma --driver pbs
expect cluster_conf_missing 1 "cannot read" "$locus" cluster add "$proj" gamma --driver slurm --conf "$work/none"
expect cluster_name 1 "name: 1 to 64" "$locus" cluster add "$proj" "a/b" --driver oar --api http://h/
expect cluster_set_unknown 1 "no cluster named 'omega'" "$locus" cluster set "$proj" omega --disabled 1
expect cluster_set_nothing 2 "give --disabled" "$locus" cluster set "$proj" beta
"$locus" cluster set "$proj" beta --disabled 1 --waiting-allowed 4 | grep -q "beta: disabled, .*: 4" && ok ||
  fail cluster_set ""
[ "$(sql "SELECT disabled, waiting_allowed FROM clusters WHERE name = 'beta'")" = "1|4" ] && ok ||
  fail cluster_set_store ""
# affinities: set, replaced, listed, removed; bad input changes nothing
"$locus" cluster affinity "$proj" alpha bob 3 --shared | grep -q "alpha, user bob: affinity 3, shared" && ok ||
  fail cluster_affinity ""
"$locus" cluster affinity "$proj" beta alice -2 >/dev/null && "$locus" cluster affinity "$proj" alpha bob 4 >/dev/null &&
  ok || fail cluster_affinity_more ""
expect affinity_cluster 1 "no cluster named 'omega'" "$locus" cluster affinity "$proj" omega bob 1
expect affinity_user 1 "unknown user 'carol'" "$locus" cluster affinity "$proj" alpha carol 1
expect affinity_value 2 "AFFINITY: expected an integer" "$locus" cluster affinity "$proj" alpha bob high
expect affinity_range 1 "affinity: from -1000 to 1000" "$locus" cluster affinity "$proj" alpha bob 5000
expect affinity_args 2 "give DIR alone" "$locus" cluster affinity "$proj" alpha bob
"$locus" cluster affinity "$proj" | awk 'NR > 1 {print $1, $2, $3, $4}' | tr '\n' ';' | grep -qx "beta alice -2 no;alpha bob 4 no;" &&
  ok || fail affinity_list "$("$locus" cluster affinity "$proj")"
"$locus" cluster affinity "$proj" beta alice 0 >/dev/null && [ "$(sql "SELECT count(*) FROM grid_affinity")" = 1 ] && ok ||
  fail affinity_remove ""

# ---- submit ----
mkdir -p "$proj/admission" "$work/jdl" "$work/home"
cat >"$proj/admission/10_cap.lua" <<'EOF'
if user == 'bob' then reject('bob has used his quota') end
for _, c in pairs(campaign.clusters) do
  if c.walltime > 600 then c.walltime = 600; c.prologue_walltime = 600; c.epilogue_walltime = 600 end
end
EOF
printf 'a 1\n# comment\nb 2\n' >"$work/jdl/params.txt"
cat >"$work/jdl/c.json" <<'EOF'
{"name": "demo", "param_file": "params.txt", "exec_file": "~/run.sh", "walltime": "02:00:00",
 "clusters": {"alpha": {}, "beta": {"walltime": 60}}}
EOF
answer $GOS_DONE 42 ''
out=$("$locus" campaign submit "$proj" "$work/jdl/c.json" --user alice --wait 10)
wait "$daemon"; daemon=
[ "$out" = 42 ] && ok || fail submit_wait "printed '$out'"
body=$(sql "SELECT body FROM grid_orders WHERE id = 1")
echo "$body" | grep -q '"params":\["a 1","b 2"\]' && ok || fail submit_params "$body"
echo "$body" | grep -q '"alpha":{[^}]*"walltime":600' && ok || fail submit_rule "$body"
[ "$(sql "SELECT user_id, kind FROM grid_orders WHERE id = 1")" = "1|$GO_SUBMIT" ] && ok || fail submit_order ""

# ~ is the submitting user's home; without a daemon the order stays queued
printf 'x 1\n' >"$work/home/p.txt"
sed 's|"params.txt"|"~/p.txt"|' "$work/jdl/c.json" >"$work/jdl/home.json"
status=0
HOME=$work/home "$locus" campaign submit "$proj" "$work/jdl/home.json" --user alice --wait 0 \
  >"$work/out" 2>"$work/err" || status=$?
[ "$status" = 1 ] && grep -q "order 2 is queued.*locusd must be running" "$work/err" && [ ! -s "$work/out" ] && ok ||
  fail submit_timeout "exit $status: $(cat "$work/err")"
sql "SELECT body FROM grid_orders WHERE id = 2" | grep -q '"params":\["x 1"\]' && ok || fail submit_home ""

sed 's|"alpha": {}|"omega": {}|' "$work/jdl/c.json" >"$work/jdl/omega.json"
echo '{"name": "x", "nb_jobs": 3, "exec_file": "e", "clusters": {"alpha": {"waltime": 5}}}' >"$work/jdl/typo.json"
sed 's|"params.txt"|"missing.txt"|' "$work/jdl/c.json" >"$work/jdl/missing.json"
expect submit_cluster 1 "clusters.omega: unknown cluster" "$locus" campaign submit "$proj" "$work/jdl/omega.json" --user alice
expect submit_field 1 "clusters.alpha.waltime: unknown key" "$locus" campaign submit "$proj" "$work/jdl/typo.json" --user alice
expect submit_file 1 "cannot read param_file $work/jdl/missing.txt" \
  "$locus" campaign submit "$proj" "$work/jdl/missing.json" --user alice
expect submit_user 1 "unknown user 'carol'" "$locus" campaign submit "$proj" "$work/jdl/c.json" --user carol
expect submit_rule 1 "rule '10_cap.lua' rejected: bob has used his quota" \
  "$locus" campaign submit "$proj" "$work/jdl/c.json" --user bob
expect submit_no_user 2 "--user is required" "$locus" campaign submit "$proj" "$work/jdl/c.json"

# ---- changes ----
sql "INSERT INTO campaigns(id, user_id, name, settings, nb_jobs, nparams, create_time) VALUES(42, 1, 'demo', '{}', 3, 3, 1)"
expect pause_other 1 "campaign 42 belongs to another user" "$locus" campaign pause "$proj" 42 --user bob
expect pause_unknown 1 "no campaign 43" "$locus" campaign pause "$proj" 43
expect fix_unknown 1 "no event 5" "$locus" campaign fix "$proj" 5 --resubmit
expect pause_id 2 "ID: expected a positive integer" "$locus" campaign pause "$proj" x
answer $GOS_REFUSED 0 'campaign 42 has ended'
status=0
"$locus" campaign cancel "$proj" 42 --user alice --wait 10 >"$work/out" 2>"$work/err" || status=$?
wait "$daemon"; daemon=
[ "$status" = 1 ] && grep -q "^locus: campaign 42 has ended$" "$work/err" && ok ||
  fail cancel_refused "exit $status: $(cat "$work/err")"
answer $GOS_DONE 0 ''
"$locus" campaign pause "$proj" 42 --wait 10 | grep -q "^campaign 42: paused" && ok || fail pause_done ""
wait "$daemon"; daemon=
[ "$(sql "SELECT kind, campaign_id FROM grid_orders ORDER BY id DESC LIMIT 1")" = "2|42" ] && ok || fail pause_order ""
answer $GOS_DONE 0 ''
"$locus" campaign share "$proj" bob 3 --wait 10 | grep -q "bob: fair-share weight 3" && ok || fail share ""
wait "$daemon"; daemon=
expect share_weight 1 "weight" "$locus" campaign share "$proj" bob 0

# ---- add-params ----
# campaign 43 of alice, 44 of bob, as the daemon stores them (the settings of the first submission)
sql "INSERT INTO campaigns(id, user_id, name, settings, nb_jobs, nparams, create_time)
       SELECT 43, 1, 'demo', json_remove(body, '\$.params'), 0, 2, 1 FROM grid_orders WHERE id = 1;
     INSERT INTO campaigns(id, user_id, name, settings, nb_jobs, nparams, create_time)
       SELECT 44, 2, 'bobs', json_remove(body, '\$.params'), 2, 2, 1 FROM grid_orders WHERE id = 1;
     INSERT INTO campaign_params(campaign_id, idx, param) VALUES(43, 0, 'a 1'), (43, 1, 'b 2');"
printf 'c 3\n# a comment\n\n  d 4  \n' >"$work/more.txt"
answer $GOS_DONE 4 ''
out=$("$locus" campaign add-params "$proj" 43 "$work/more.txt" --user alice --wait 10)
wait "$daemon"; daemon=
[ "$out" = "campaign 43: params added, 4 jobs in all" ] && ok || fail add_params "printed '$out'"
[ "$(sql "SELECT kind, user_id, campaign_id, body FROM grid_orders ORDER BY id DESC LIMIT 1")" = "7|1|43|c 3
d 4" ] && ok || fail add_params_order "$(sql "SELECT * FROM grid_orders ORDER BY id DESC LIMIT 1")"
answer $GOS_DONE 5 ''
out=$(printf 'e 5\n' | "$locus" campaign add-params "$proj" 43 - --wait 10)
wait "$daemon"; daemon=
[ "$out" = "campaign 43: params added, 5 jobs in all" ] && ok || fail add_params_stdin "printed '$out'"
[ "$(sql "SELECT user_id, body FROM grid_orders ORDER BY id DESC LIMIT 1")" = "0|e 5" ] && ok ||
  fail add_params_stdin_order ""
printf 'f 6\na again\n' >"$work/dup.txt"
: >"$work/empty.txt"
truncate -s 257M "$work/big.txt"
expect add_params_dup 1 'line 2 (params.3.): first word "a" is already the first word of params.0.' \
  "$locus" campaign add-params "$proj" 43 "$work/dup.txt"
expect add_params_empty 1 "no param to add" "$locus" campaign add-params "$proj" 43 "$work/empty.txt"
expect add_params_big 1 "param file $work/big.txt: larger than 256 MiB" \
  "$locus" campaign add-params "$proj" 43 "$work/big.txt"
expect add_params_missing 1 "cannot read param file $work/none.txt" \
  "$locus" campaign add-params "$proj" 43 "$work/none.txt"
expect add_params_other 1 "campaign 43 belongs to another user" \
  "$locus" campaign add-params "$proj" 43 "$work/more.txt" --user bob
expect add_params_unknown 1 "no campaign 99" "$locus" campaign add-params "$proj" 99 "$work/more.txt"
expect add_params_usage 2 "missing arguments" "$locus" campaign add-params "$proj" 43
# the rules run as the campaign's owner, whoever adds
expect add_params_rule 1 "rule '10_cap.lua' rejected: bob has used his quota" \
  "$locus" campaign add-params "$proj" 44 "$work/more.txt"
# the daemon may still refuse (a cancelled campaign)
answer $GOS_REFUSED 0 'campaign 43 is cancelled'
status=0
"$locus" campaign add-params "$proj" 43 "$work/more.txt" --wait 10 >"$work/out" 2>"$work/err" || status=$?
wait "$daemon"; daemon=
[ "$status" = 1 ] && grep -q "^locus: campaign 43 is cancelled$" "$work/err" && ok ||
  fail add_params_refused "exit $status: $(cat "$work/err")"

# ---- views (the daemon has saved nothing yet) ----
"$locus" campaign stat "$proj" | grep -q "^42 *demo *alice *starting" && ok || fail stat "$("$locus" campaign stat "$proj")"
"$locus" campaign stat "$proj" 42 --json | grep -q '"id":42,"name":"demo".*"state":"starting"' && ok || fail stat_json ""
"$locus" campaign clusters "$proj" | grep -q "^beta *oar *disabled *- .*never" && ok || fail clusters ""
expect stat_unknown 1 "no campaign 7" "$locus" campaign stat "$proj" 7
expect stat_jobs_unknown 1 "no campaign 7" "$locus" campaign stat "$proj" 7 --jobs
expect stat_jobs_no_id 2 "give its ID" "$locus" campaign stat "$proj" --jobs
expect stat_bad_state 2 "unknown job state 'done' (to_launch, submitted" "$locus" campaign stat "$proj" 42 --state done
expect stat_users_id 2 "no ID, --jobs or -f" "$locus" campaign stat "$proj" 42 --users
"$locus" campaign stat "$proj" 42 --jobs --json | grep -qx '{"jobs":\[\]}' && ok || fail stat_jobs_none ""
"$locus" campaign stat "$proj" --users | grep -q "^alice *[1-9][0-9]* *0 " && ok ||
  fail stat_users "$("$locus" campaign stat "$proj" --users)"
expect events_unknown 1 "no campaign 7" "$locus" campaign events "$proj" 7

# ---- an event with its message, as the daemon saves it ----
why='the submission of job 1 (param #0) to alpha was refused: user "alice" is unknown on this submit host'
sql "INSERT INTO grid_clusters(id, name) VALUES(1, 'alpha');
     INSERT INTO grid_events(id, campaign_id, cluster_id, copy_id, kind, open, notified, blacklists, exit_code, jobs,
       opened_at, message) VALUES(5, 42, 1, 1, $GEV_SUBMIT_REFUSED, 1, 1, 1, 0, 0, 1, '$why')"
"$locus" campaign events "$proj" 42 >"$work/out"
grep -q "^5 *42 *submit_refused *alpha *open" "$work/out" && [ "$(sed -n 3p "$work/out")" = "       $why" ] && ok ||
  fail events_message "$(cat "$work/out")"
"$locus" campaign events "$proj" 42 --json >"$work/out"
grep -q '"kind":"submit_refused"' "$work/out" && grep -qF "\"message\":\"${why//\"/\\\"}\"" "$work/out" && ok ||
  fail events_message_json "$(cat "$work/out")"

echo "cli_campaign: $passed passed, $failed failed"
[ "$failed" = 0 ]
