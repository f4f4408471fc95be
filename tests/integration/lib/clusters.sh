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
# runs jobs through it, and only bash passes the checkpoint signal on) and
# a home of their own, made here whatever an earlier run left: OAR's job
# shell sources ~/.bashrc. locusa's .bashrc prints a line to stdout and one
# to stderr, as a site's login scripts or a scheduler's own messages do, so
# that every cluster test shows that nothing the drivers decide depends on
# a job's output holding only what the job wrote.
TEST_USER_NOISE="locus test: noise from the job shell's .bashrc"
make_test_users() {
    local u home
    for u in locusa locusb; do
        # two tests may make them at once: the loser's useradd fails
        id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u" 2>/dev/null || id "$u" >/dev/null
        [ "$(getent passwd "$u" | cut -d: -f7)" = /bin/bash ] || usermod -s /bin/bash "$u"
        home=$(getent passwd "$u" | cut -d: -f6)
        install -d -m 755 -o "$u" -g "$(id -gn "$u")" "$home"
        if [ "$u" = locusa ]; then
            printf 'echo "%s"\necho "%s" >&2\n' "$TEST_USER_NOISE" "$TEST_USER_NOISE" >"$home/.bashrc"
        else
            printf '# a quiet login script\n' >"$home/.bashrc"
        fi
        chown "$u" "$home/.bashrc"
    done
}
