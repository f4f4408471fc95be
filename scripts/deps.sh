#!/usr/bin/env bash
# Installs the Debian packages locus needs to build, test, demo and package
# (debhelper, dpkg-dev: `make deb`), only those missing, so that a fresh
# machine (CI included) works with one command.
set -euo pipefail
pkgs=(cmake make gcc clang pkg-config libclang-rt-14-dev
      libsqlite3-dev sqlite3 zlib1g-dev libmicrohttpd-dev libexpat1-dev libjansson-dev
      libcurl4-openssl-dev libssl-dev openssl libsodium-dev liblua5.4-dev libcmocka-dev curl boinc-client
      slurmctld slurmd slurm-client munge slurmrestd slurm-wlm-jwt-plugin python3 strace prometheus
      libjs-chart.js chromium chromium-driver
      debhelper dpkg-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# prometheus is here for its promtool (the tests check /metrics with it);
# where systemd runs, its own server, which the package starts, is stopped
# and disabled: nothing here wants a Prometheus listening on :9090.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
  $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
