# clusters.sh - what the tests of real batch schedulers share (sourced by
# the driver_* and grid_* tests and bench/grid_finalize.sh): free loopback
# ports for their daemons, the two local users whose jobs they run, and
# checks that go on after a failure.

# free_ports N: a port P such that P..P+N are free on loopback and were not
# handed out before in this test (recorded in $TMP/.ports, as lib/boinc.sh's
# `port` does), so that two clusters started one after the other never get
# overlapping ranges. Below the kernel's ephemeral range (32768 and up),
# where a client socket of another program may hold a port that no
# connection test sees.
free_ports() {
    local n=$1 p i ok used=$TMP/.ports
    for _ in $(seq 100); do
        p=$(( 20000 + RANDOM % 12000 ))
        ok=1
        for i in $(seq 0 "$n"); do
            if grep -qx "$((p + i))" "$used" 2>/dev/null || (exec 3<>"/dev/tcp/127.0.0.1/$((p + i))") 2>/dev/null
            then ok=0; break; fi
        done
        [ $ok = 1 ] || continue
        seq "$p" $((p + n)) >> "$used"
        echo "$p"
        return 0
    done
    return 1
}

# bad MSG: records a failed check; the test goes on, and checks_passed at
# its end fails it with the list.
FAILS=()
bad() {
    FAILS+=("$*")
    say "CHECK FAILED: $*"
}
checks_passed() {
    if [ ${#FAILS[@]} -gt 0 ]; then
        printf '  - %s\n' "${FAILS[@]}" >&2
        fail "${#FAILS[@]} checks failed (listed above)"
    fi
    say "PASS"
}

# wait_for SECONDS COMMAND...: polls COMMAND every half second; 1 on timeout.
wait_for() {
    local i n=$(($1 * 2))
    shift
    for ((i = 0; i < n; i++)); do
        "$@" && return 0
        sleep 0.5
    done
    return 1
}

# make_test_users: locusa and locusb, with bash as their login shell (OAR
# runs jobs through it, and only bash passes the checkpoint signal on).
make_test_users() {
    local u
    for u in locusa locusb; do
        id "$u" >/dev/null 2>&1 || useradd -M -s /bin/bash "$u"
        [ "$(getent passwd "$u" | cut -d: -f7)" = /bin/bash ] || usermod -s /bin/bash "$u"
    done
}
