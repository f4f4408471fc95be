# tls.sh - HTTPS in a test: test CAs made with openssl, and a project
# serving HTTPS with a certificate of one of them for 127.0.0.1 beside
# plain HTTP. Source after lib/boinc.sh.

command -v openssl >/dev/null || fail "openssl is missing; run scripts/deps.sh"

# make_ca NAME: a self-signed CA, $TMP/NAME.pem and its key $TMP/NAME.key.
make_ca() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=locus test $1" \
        -keyout "$TMP/$1.key" -out "$TMP/$1.pem" 2>/dev/null || fail "openssl: cannot make CA $1"
}

# serve_https PROJ: PROJ (made by make_project) serves HTTPS on $PORT with
# a certificate of the CA $TMP/ca.pem (make_ca ca first) in PROJ/tls/, its
# master URL https://127.0.0.1:$PORT/proj/ (URL), and plain HTTP on
# $HTTP_PORT. Before starting locusd.
serve_https() {
    local proj=$1
    mkdir "$proj/tls"
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$proj/tls/server.key" -out "$TMP/server.csr" 2>/dev/null || fail "openssl: cannot make the server key"
    printf 'subjectAltName=IP:127.0.0.1\n' >"$TMP/san.ext"
    openssl x509 -req -in "$TMP/server.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" -CAcreateserial -days 2 \
        -extfile "$TMP/san.ext" -out "$proj/tls/server.pem" 2>/dev/null || fail "openssl: cannot sign the server certificate"
    chmod 600 "$proj/tls/server.key"
    HTTP_PORT=$(port)
    URL=https://127.0.0.1:$PORT/proj/
    set_config "$proj" master_url "$URL"
    set_config "$proj" listen "127.0.0.1:$HTTP_PORT"
    set_config "$proj" https_cert tls/server.pem
    set_config "$proj" https_key tls/server.key
}
