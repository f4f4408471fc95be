#!/usr/bin/env bash
# cli_bad_input: every kind of bad input to `locus` fails with exit status 1
# (2 for usage errors), exactly one "locus: ..." line on stderr, and leaves
# the project as it was: the same store dump and the same download files.
set -euo pipefail

build=${LOCUS_BUILD_DIR:-build}
locus=$build/bin/locus
[ -x "$locus" ] || { echo "cli_bad_input: $locus not built" >&2; exit 1; }
work=$(mktemp -d /tmp/locus-cli-bad-XXXXXX)
trap 'rm -rf "$work"' EXIT
proj=$work/proj
url=http://127.0.0.1:8124/proj/

# A project with a user, an input file, an app and one batch.
"$locus" init "$proj" --url "$url" >/dev/null
"$locus" user create "$proj" alice >/dev/null
echo "input data" >"$work/input.dat"
"$locus" file add "$proj" "$work/input.dat" >/dev/null
printf '#!/bin/sh\necho hi >out\n' >"$work/app.sh"
"$locus" app add "$proj" hello --platform x86_64-pc-linux-gnu --exe "$work/app.sh" --version 1 >/dev/null
echo '{"name": "taken", "inputs": ["input.dat"]}' >"$work/first.jsonl"
"$locus" batch create "$proj" --app hello --jobs "$work/first.jsonl" --name first >/dev/null

# The state a failed command must leave alone.
snapshot() {
  sqlite3 "$proj/locus.db" .dump
  (cd "$proj/download" && find . -type f -exec md5sum {} + | sort)
}

passed=0 failed=0
fail() { echo "FAIL $1: $2" >&2; failed=$((failed + 1)); }

# expect NAME STATUS COMMAND...: runs COMMAND, checks its status, one line on
# stderr starting with "locus: ", and an unchanged project.
expect() {
  local name=$1 want=$2
  shift 2
  local before after status=0
  before=$(snapshot)
  "$@" >"$work/out" 2>"$work/err" || status=$?
  after=$(snapshot)
  if [ "$status" -ne "$want" ]; then fail "$name" "exit status $status, expected $want"; return; fi
  if [ "$(wc -l <"$work/err")" -ne 1 ] || ! grep -q '^locus: ' "$work/err"; then
    fail "$name" "stderr is not one 'locus: ' line: $(cat "$work/err")"; return
  fi
  if [ "$before" != "$after" ]; then fail "$name" "the project changed"; return; fi
  passed=$((passed + 1))
}

jobs() { printf '%s\n' "$@" >"$work/jobs.jsonl"; echo "$work/jobs.jsonl"; }
create() { "$locus" batch create "$proj" --app hello "$@"; }
good='{"cmdline": "-n 1", "inputs": ["input.dat"]}'

expect malformed_json 1 create --jobs "$(jobs "$good" '{"cmdline": "-n 2",')" --name b1
expect unknown_key 1 create --jobs "$(jobs "$good" '{"cmdline": "x", "colour": "red"}')" --name b2
expect unknown_input_file 1 create --jobs "$(jobs "$good" '{"inputs": ["missing.dat"]}')" --name b3
expect duplicate_job_name 1 create --jobs "$(jobs '{"name": "j"}' '{"name": "j"}')" --name b4
expect job_name_of_other_batch 1 create --jobs "$(jobs "$good" '{"name": "taken"}')" --name b5
expect unsafe_job_name 1 create --jobs "$(jobs '{"name": "../escape"}')" --name b6
expect unsafe_batch_name 1 create --jobs "$(jobs "$good")" --name 'a/b'
expect existing_batch_name 1 create --jobs "$(jobs "$good")" --name first
expect quorum_0 1 create --jobs "$(jobs "$good")" --quorum 0
expect target_below_quorum 1 create --jobs "$(jobs "$good")" --quorum 3 --target-nresults 2
expect unknown_app 1 "$locus" batch create "$proj" --app nope --jobs "$(jobs "$good")"
expect bad_output 1 create --jobs "$(jobs "$good")" --output 'out:0'
expect both_job_sources 2 create --jobs "$(jobs "$good")" --count 3
expect unknown_option 2 create --jobs "$(jobs "$good")" --colour red
echo '{"cmdline": "{n}", "inputs": ["part_{n}"]}' >"$work/t.json"
expect template_unknown_file 1 create --count 3 --input-template "$work/t.json"
expect file_name_dotdot 1 "$locus" file add "$proj" "$work/input.dat" --name ../x
expect file_name_slash 1 "$locus" file add "$proj" "$work/input.dat" --name a/b
echo "other data" >"$work/other.dat"
expect file_other_content 1 "$locus" file add "$proj" "$work/other.dat" --name input.dat
expect app_same_version 1 "$locus" app add "$proj" hello --platform x86_64-pc-linux-gnu --exe "$work/app.sh" --version 1
expect app_unsafe_name 1 "$locus" app add "$proj" 'he llo' --platform x86_64-pc-linux-gnu --exe "$work/app.sh" --version 2
expect app_missing_exe 1 "$locus" app add "$proj" hello --platform x86_64-pc-linux-gnu --exe "$work/none" --version 2
expect user_duplicate 1 "$locus" user create "$proj" alice
expect missing_project 1 "$locus" stat "$work/no-such-project"
expect init_existing_project 1 "$locus" init "$proj" --url "$url"
expect init_localhost 1 "$locus" init "$work/new" --url http://localhost/new/
[ ! -e "$work/new" ] || fail init_localhost "$work/new was created"
[ -z "$(find "$work" -maxdepth 1 -name '.*init-*')" ] || fail init_leftovers "a temporary folder was left"

echo "cli_bad_input: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
