# clusters.sh - what the tests of real batch schedulers share (sourced by
# driver_slurm.sh and driver_oar.sh): free loopback ports for their daemons
# and the two local users whose jobs they run.

# free_ports N: a port P such that P..P+N are free on loopback. Below the
# kernel's ephemeral range (32768 and up), where a client socket of another
# program may hold a port that no connection test sees.
free_ports() {
    local n=$1 p i ok
    for _ in $(seq 100); do
        p=$(( 20000 + RANDOM % 12000 ))
        ok=1
        for i in $(seq 0 "$n"); do
            if (exec 3<>"/dev/tcp/127.0.0.1/$((p + i))") 2>/dev/null; then ok=0; break; fi
        done
        [ $ok = 1 ] && { echo "$p"; return 0; }
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
