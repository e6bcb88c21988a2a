#!/usr/bin/env bash
# Generates TEST certificates for the NetServer TLS examples and benchmarks.
# Everything is written next to this script and regenerated on every run.
# These keys are public: never use these certificates outside of local testing.
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Ten full years from the day of generation (3653 days covers any ten calendar years, leap days
# included), and valid since the day before, so a peer whose clock lags a little accepts them too.
DAYS=3653
BACKDATE_DAYS=1
PFX_PASS="netserver"

command -v openssl >/dev/null || { echo "openssl not found" >&2; exit 1; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

cd "$DIR"

# UTC time DAYS days from now (negative: ago) as openssl ca's YYMMDDHHMMSSZ: GNU date, else BSD date.
utc_time() {
    date -u -d "$1 days" +%y%m%d%H%M%SZ 2>/dev/null || date -u -v"$1"d +%y%m%d%H%M%SZ
}

# `openssl x509 -req` and `openssl req -x509` of OpenSSL 3.0 (Debian 12) only count days from
# now; `openssl ca` takes both ends of the validity period. Every certificate gets the same two.
NOT_BEFORE="$(utc_time "-$BACKDATE_DAYS")"
NOT_AFTER="$(utc_time "+$DAYS")"

# ---------------------------------------------------------------- openssl ca and extensions
# A throwaway CA database in $TMP. Serials are random (-rand_serial: positive, 159 bits); openssl
# ca wants a serial file all the same.
touch "$TMP/index.txt"
echo 01 > "$TMP/serial"
cat > "$TMP/ca.cnf" <<EOF
[ca]
default_ca = test_ca
[test_ca]
database        = $TMP/index.txt
serial          = $TMP/serial
new_certs_dir   = $TMP
default_md      = sha256
policy          = policy_cn
unique_subject  = no
email_in_dn     = no
copy_extensions = none
[policy_cn]
commonName = supplied
EOF

cat > "$TMP/ca.ext" <<'EOF'
basicConstraints     = critical, CA:TRUE
keyUsage             = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF

cat > "$TMP/server.ext" <<'EOF'
basicConstraints       = CA:FALSE
keyUsage               = digitalSignature, keyEncipherment
extendedKeyUsage       = serverAuth
subjectAltName         = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid, issuer
EOF

cat > "$TMP/client.ext" <<'EOF'
basicConstraints       = CA:FALSE
keyUsage               = digitalSignature, keyEncipherment
extendedKeyUsage       = clientAuth
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid, issuer
EOF

# ---------------------------------------------------------------- CA
rm -f ca.key ca.pem server.key server.pem server.pfx client.key client.pem client.pfx

# sign NAME CSR EXTFILE [openssl ca options...]: NAME.pem, valid from NOT_BEFORE to NOT_AFTER.
sign() {
    local name="$1" csr="$2" ext="$3"
    shift 3
    openssl ca -batch -notext -rand_serial -preserveDN -config "$TMP/ca.cnf" \
        -startdate "$NOT_BEFORE" -enddate "$NOT_AFTER" \
        -extfile "$ext" -in "$csr" -out "$name.pem" "$@" 2>"$TMP/ca.log" \
        || { cat "$TMP/ca.log" >&2; exit 1; }
}

openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out ca.key
openssl req -new -sha256 -key ca.key -subj "/CN=NetServer Test CA" -out "$TMP/ca.csr"
sign ca "$TMP/ca.csr" "$TMP/ca.ext" -selfsign -keyfile ca.key

# ---------------------------------------------------------------- leaf certs
# make_leaf NAME CN
make_leaf() {
    local name="$1" cn="$2"
    openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$name.key"
    openssl req -new -sha256 -key "$name.key" -subj "/CN=$cn" -out "$TMP/$name.csr"
    sign "$name" "$TMP/$name.csr" "$TMP/$name.ext" -cert ca.pem -keyfile ca.key
    # OpenSSL 3 defaults (AES-256-CBC, PBKDF2, SHA-256 MAC) load fine in .NET on Linux.
    openssl pkcs12 -export -inkey "$name.key" -in "$name.pem" -certfile ca.pem \
        -name "$cn" -passout "pass:$PFX_PASS" -out "$name.pfx"
}

make_leaf server "localhost"
make_leaf client "NetServer Test Client"

chmod 644 ca.key server.key client.key server.pfx client.pfx   # test material, deliberately not secret

# ---------------------------------------------------------------- report
for c in ca server client; do
    echo "== $c.pem"
    openssl x509 -in "$c.pem" -noout -subject -issuer -serial -dates -ext subjectAltName,extendedKeyUsage 2>/dev/null \
        || openssl x509 -in "$c.pem" -noout -subject -issuer -serial -dates
done

echo "== verify"
openssl verify -CAfile ca.pem server.pem client.pem

echo "== pkcs12"
for p in server client; do
    openssl pkcs12 -in "$p.pfx" -passin "pass:$PFX_PASS" -noout
    echo "$p.pfx: OK"
done

echo "Done: certificates written to $DIR"
