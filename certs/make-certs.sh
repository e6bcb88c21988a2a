#!/usr/bin/env bash
# Generates TEST certificates for the NetServer TLS examples and benchmarks.
# Everything is written next to this script and regenerated on every run.
# These keys are public: never use these certificates outside of local testing.
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DAYS=3650
PFX_PASS="netserver"

command -v openssl >/dev/null || { echo "openssl not found" >&2; exit 1; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

cd "$DIR"

# Random positive 128-bit serial (top bit cleared).
serial() {
    local hex
    hex="$(openssl rand -hex 16)"
    printf '0x%x%s' $(( 0x${hex:0:1} & 7 )) "${hex:1}"
}

# ---------------------------------------------------------------- extensions
cat > "$TMP/ca.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt             = no
x509_extensions    = v3_ca
[dn]
CN = NetServer Test CA
[v3_ca]
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

openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out ca.key
openssl req -new -x509 -sha256 -key ca.key -days "$DAYS" \
    -set_serial "$(serial)" -config "$TMP/ca.cnf" -out ca.pem

# ---------------------------------------------------------------- leaf certs
# make_leaf NAME CN
make_leaf() {
    local name="$1" cn="$2"
    openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$name.key"
    openssl req -new -sha256 -key "$name.key" -subj "/CN=$cn" -out "$TMP/$name.csr"
    openssl x509 -req -sha256 -in "$TMP/$name.csr" \
        -CA ca.pem -CAkey ca.key -set_serial "$(serial)" \
        -days "$DAYS" -extfile "$TMP/$name.ext" -out "$name.pem"
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
    openssl x509 -in "$c.pem" -noout -subject -issuer -serial -enddate -ext subjectAltName,extendedKeyUsage 2>/dev/null \
        || openssl x509 -in "$c.pem" -noout -subject -issuer -serial -enddate
done

echo "== verify"
openssl verify -CAfile ca.pem server.pem client.pem

echo "== pkcs12"
for p in server client; do
    openssl pkcs12 -in "$p.pfx" -passin "pass:$PFX_PASS" -noout
    echo "$p.pfx: OK"
done

echo "Done: certificates written to $DIR"
