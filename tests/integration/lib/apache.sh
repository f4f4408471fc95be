# tests/integration/lib/apache.sh - the head of an Apache configuration for
# a test's own server (OAR's REST API, a WebDAV store): run by `apache2 -f
# FILE -k start` as root, no systemd, nothing of /etc/apache2 but its
# ServerRoot.
#
#   apache_conf DIR PORT USER MODULE...   prints the lines: the server on
#       127.0.0.1:PORT, its children run as USER (and group USER), its pid
#       file and error log (apache-error.log) in DIR, the prefork MPM,
#       authz_core and each MODULE (mod_MODULE.so) loaded

apache_conf() {
    local dir=$1 port=$2 user=$3 m
    shift 3
    printf 'ServerRoot /etc/apache2\nServerName localhost\nPidFile %s/apache.pid\nListen 127.0.0.1:%s\n' "$dir" "$port"
    printf 'User %s\nGroup %s\nErrorLog %s/apache-error.log\n' "$user" "$user" "$dir"
    for m in mpm_prefork authz_core "$@"; do
        printf 'LoadModule %s_module /usr/lib/apache2/modules/mod_%s.so\n' "$m" "$m"
    done
}
