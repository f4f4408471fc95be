#!/usr/bin/env bash
# cli_lists: the commands an operator reaches for first. `locus user|app|
# file|host|team list` as a table and as JSON, bounded by --limit with a line
# saying what was left out, and never an account key; `locus` and `locus
# campaign` alone print their usage (exit 2); `locus app add` refuses a
# platform BOINC does not know, naming the known ones; `locus campaign
# check` checks a JDL without its clusters declared (warnings) and writes
# no order; locusd logs "locusd: stopped" last after a clean stop.
set -euo pipefail

build=${LOCUS_BUILD_DIR:-build}
locus=$build/bin/locus
locusd=$build/bin/locusd
[ -x "$locus" ] && [ -x "$locusd" ] || { echo "cli_lists: $locus or $locusd not built" >&2; exit 1; }
work=$(mktemp -d /tmp/locus-cli-lists-XXXXXX)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; [ -n "${LOCUS_KEEP_TMP:-}" ] || rm -rf "$work"' EXIT
proj=$work/proj
sql() { sqlite3 -cmd ".timeout 5000" "$proj/locus.db" "$@"; }

passed=0 failed=0
fail() { echo "FAIL $1: $2" >&2; failed=$((failed + 1)); }
ok() { passed=$((passed + 1)); }

# check NAME STATUS COMMAND...: runs COMMAND, its stdout in $work/out and
# its stderr in $work/err; fails NAME unless it exits STATUS.
check() {
  local name=$1 want=$2 status=0
  shift 2
  "$@" >"$work/out" 2>"$work/err" || status=$?
  [ "$status" = "$want" ] || { fail "$name" "exit $status, wanted $want: $(cat "$work/err")"; return 1; }
}
# has NAME PATTERN FILE: FILE has a line matching the extended regex PATTERN.
has() { grep -Eq -- "$2" "$3" && ok || fail "$1" "no /$2/ in: $(cat "$3")"; }

# a port nobody listens on, for locusd
port=$((20000 + RANDOM % 12000))
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((20000 + RANDOM % 12000)); done
"$locus" init "$proj" --url "http://127.0.0.1:$port/proj/" >/dev/null
printf '#!/bin/sh\n' >"$work/app.sh"
chmod +x "$work/app.sh"

# ---- usage ----
check bare 2 "$locus" && has bare_usage "^  locus user list DIR" "$work/err"
check group 2 "$locus" campaign && has group_usage "^  locus campaign check DIR" "$work/err" &&
  { grep -q "locus batch" "$work/err" && fail group_only "other groups listed" || ok; }
check group_wrong 2 "$locus" campaign frobnicate && has group_wrong_msg "^locus: unknown command 'campaign frobnicate'" "$work/err"
check unknown 2 "$locus" frobnicate && has unknown_msg "unknown command 'frobnicate'" "$work/err"

# ---- platforms ----
check platform 1 "$locus" app add "$proj" worker --platform linux --exe "$work/app.sh" --version 1 &&
  has platform_msg "'linux' is not a BOINC platform name; known: windows_intelx86 windows_x86_64 .* x86_64-pc-linux-gnu " "$work/err"
check platform_ok 0 "$locus" app add "$proj" worker --platform x86_64-pc-linux-gnu --exe "$work/app.sh" --version 1 && ok
check platform_win 0 "$locus" app add "$proj" worker --platform windows_x86_64 --exe "$work/app.sh" --version 2 && ok

# ---- lists ----
key=$("$locus" user create "$proj" alice)
"$locus" user create "$proj" bob --role submitter >/dev/null
"$locus" user key "$proj" bob >"$work/skey"
echo data >"$work/in.dat"
"$locus" file add "$proj" "$work/in.dat" --sticky >/dev/null
sql "INSERT INTO hosts(id, user_id, create_time, rpc_time, domain_name, platform, p_ncpus, p_fpops, total_credit)
     VALUES(7, 1, 1, 1700000000, 'node7', 'x86_64-pc-linux-gnu', 8, 3.5e9, 12.5)"

"$locus" team create "$proj" "Night Owls" --founder alice >/dev/null

check users 0 "$locus" user list "$proj" &&
  has users_head "^ID +NAME +ROLE +TEAM +HOSTS +CREDIT +CREATED$" "$work/out" &&
  has users_alice "^ 1 +alice +volunteer +Night Owls +1 +0 +20" "$work/out" &&
  has users_bob "^ 2 +bob +submitter +- +0 " "$work/out"
cat "$work/out" "$work/err" >"$work/all"
check users_json 0 "$locus" user list "$proj" --json &&
  has users_json_row '"users":\[\{"id":1,"name":"alice","role":"volunteer","team":"Night Owls","hosts":1,"credit":0\.0,"created":[0-9]+\},\{"id":2,"name":"bob","role":"submitter","team":null,' \
    "$work/out" && has users_json_total '"total":2,"left_out":0\}$' "$work/out"
cat "$work/out" >>"$work/all"
# neither the account key nor a submit key is ever listed (the store has only their hashes)
grep -q -e "$key" -e "$(cat "$work/skey")" "$work/all" && fail users_no_key "a key was listed" || ok

check apps 0 "$locus" app list "$proj" &&
  has apps_row "^worker +off +1 +x86_64-pc-linux-gnu +- +7\.20\.0 +1 +20" "$work/out" &&
  has apps_win "^worker +off +2 +windows_x86_64 " "$work/out"
check app_set 0 "$locus" app set "$proj" worker --hr coarse
check apps_json 0 "$locus" app list "$proj" --json &&
  has apps_json_row '\{"app":"worker","hr":"coarse","version":2,"platform":"windows_x86_64","plan_class":"","api_version":"7\.20\.0","avg_ncpus":1\.0,"created":[0-9]+\}' \
    "$work/out"
# an app without a version yet is listed, with nothing for the version
sql "INSERT INTO apps(name, user_friendly_name, create_time) VALUES('empty', '', 1)"
check apps_empty 0 "$locus" app list "$proj" --json && has apps_empty_row '\{"app":"empty","hr":"off","version":null,' "$work/out"

check files 0 "$locus" file list "$proj" &&
  has files_head "^ID +NAME +SIZE +MD5 +STICKY +EXECUTABLE +CREATED$" "$work/out" &&
  has files_row "^ 3 +in\.dat +5 +$(md5sum "$work/in.dat" | cut -c1-32) +yes +no +20" "$work/out"
check files_json 0 "$locus" file list "$proj" --json &&
  has files_json_row '\{"id":3,"name":"in\.dat","size":5,"md5":"[0-9a-f]{32}","sticky":true,"executable":false,' "$work/out"

check hosts 0 "$locus" host list "$proj" &&
  has hosts_row "^ *7 +alice +node7 +x86_64-pc-linux-gnu +8 +3\.5e\+09 +2023-11-1[45] [0-9:]{8} +12\.5$" "$work/out"
check hosts_json 0 "$locus" host list "$proj" --json &&
  has hosts_json_row '"hosts":\[\{"id":7,"user":"alice","domain_name":"node7","platform":"x86_64-pc-linux-gnu","cpus":8,"flops":3500000000\.0,"last_contact":1700000000,"credit":12\.5\}\]' \
    "$work/out"

check teams 0 "$locus" team list "$proj" &&
  has teams_head "^ID +NAME +FOUNDER +MEMBERS +CREDIT +RECENT_CREDIT +CREATED$" "$work/out" &&
  has teams_row "^ 1 +Night Owls +alice +1 +0 +0 +20" "$work/out"
check teams_json 0 "$locus" team list "$proj" --json &&
  has teams_json_row '"teams":\[\{"id":1,"name":"Night Owls","founder":"alice","members":1,"credit":0\.0,"recent_credit":0\.0,"created":[0-9]+\}\],"total":1' \
    "$work/out"

# --limit bounds the rows and says how many were left out
check limit 0 "$locus" file list "$proj" --limit 1 &&
  [ "$(wc -l <"$work/out")" = 3 ] && has limit_line "^\(2 of 3 rows left out: raise --limit to see them\)$" "$work/out"
check limit_json 0 "$locus" user list "$proj" --limit 1 --json &&
  has limit_json_line '"users":\[\{"id":1,[^]]*\}\],"total":2,"left_out":1\}$' "$work/out"
check limit_none 0 "$locus" host list "$proj" --limit 0 && has limit_none_line "^\(1 of 1 rows left out" "$work/out"
check limit_negative 2 "$locus" user list "$proj" --limit -1 && has limit_negative_msg "--limit: 0 or more" "$work/err"
check list_args 2 "$locus" host list && has list_args_msg "usage: locus host list DIR" "$work/err"

# ---- campaign check ----
mkdir -p "$proj/admission" "$work/jdl"
echo "if user == 'bob' then reject('bob has used his quota') end" >"$proj/admission/10_quota.lua"
printf 'a 1\nb 2\n' >"$work/jdl/params.txt"
cat >"$work/jdl/c.json" <<'EOF'
{"name": "demo", "param_file": "params.txt", "exec_file": "~/run.sh", "walltime": "02:00:00",
 "clusters": {"alpha": {}, "beta": {"walltime": 60}}}
EOF
echo '{"name": "x", "nb_jobs": 3, "exec_file": "e", "clusters": {"alpha": {"waltime": 5}}}' >"$work/jdl/typo.json"
orders() { sql "SELECT count(*) FROM grid_orders"; }
before=$(orders)
check jdl_valid 0 "$locus" campaign check "$proj" "$work/jdl/c.json" &&
  has jdl_warn_alpha "^warning: clusters\.alpha: no such cluster in this project" "$work/out" &&
  has jdl_warn_beta "^warning: clusters\.beta: " "$work/out" &&
  has jdl_valid_line "c\.json: valid, with warnings \(admission rules not run: give --user NAME\)$" "$work/out"
"$locus" cluster add "$proj" alpha --driver oar --api http://127.0.0.1:6668/oarapi >/dev/null
check jdl_declared 0 "$locus" campaign check "$proj" "$work/jdl/c.json" --user alice &&
  has jdl_declared_beta "^warning: clusters\.beta: " "$work/out" &&
  { grep -q "clusters\.alpha" "$work/out" && fail jdl_declared_alpha "a declared cluster warned" || ok; } &&
  has jdl_declared_line "c\.json: valid, with warnings$" "$work/out"
check jdl_typo 1 "$locus" campaign check "$proj" "$work/jdl/typo.json" &&
  has jdl_typo_msg "^locus: .*typo\.json: invalid: clusters\.alpha\.waltime: unknown key" "$work/err"
check jdl_rule 1 "$locus" campaign check "$proj" "$work/jdl/c.json" --user bob &&
  has jdl_rule_msg "invalid: .*rule '10_quota\.lua' rejected: bob has used his quota" "$work/err"
check jdl_user 1 "$locus" campaign check "$proj" "$work/jdl/c.json" --user carol &&
  has jdl_user_msg "unknown user 'carol'" "$work/err"
[ "$(orders)" = "$before" ] && ok || fail jdl_no_order "campaign check wrote an order"

# ---- locusd's last line ----
"$locusd" "$proj" </dev/null >"$work/locusd.log" 2>&1 &
server=$!
for _ in $(seq 150); do
  curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$port/proj/" && break
  sleep 0.1
done
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=
[ "$status" = 0 ] && tail -n 1 "$work/locusd.log" | grep -q "locusd: stopped$" && ok ||
  fail locusd_stopped "exit $status, log ends: $(tail -n 3 "$work/locusd.log")"

echo "cli_lists: $passed passed, $failed failed"
[ "$failed" = 0 ]
