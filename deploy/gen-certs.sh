#!/usr/bin/env bash
# Makes the certificates of a longhaul cluster with openssl (docs/security.md):
#   DIR/ca.crt, ca.key                 the cluster CA (made once, reused by later calls)
#   DIR/coordinator.crt, .key          longhauld's certificate, for every --host given
#   DIR/agent-ID.crt, .key             one per --agent ID; the certificate's CN is the agent id
#
# usage: deploy/gen-certs.sh DIR [--host NAME|IP]... [--agent ID]... [--days N]
#                                [--not-before YYYYMMDDHHMMSSZ --not-after YYYYMMDDHHMMSSZ]
#
# The coordinator's certificate always names localhost and 127.0.0.1 as well. --not-before
# and --not-after set the validity of the agent certificates made by this call (to make an
# expired one for a test); otherwise they are valid for --days (default 825) from now.
# Private keys are created mode 0600. Nothing is overwritten: an existing file is kept.
set -euo pipefail

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
mkdir -p "$1"; DIR=$(cd "$1" && pwd); shift
HOSTS=() AGENTS=() DAYS=825 NOT_BEFORE="" NOT_AFTER=""
while [ $# -gt 0 ]; do
  case $1 in
    --host) HOSTS+=("$2"); shift 2 ;;
    --agent) AGENTS+=("$2"); shift 2 ;;
    --days) DAYS=$2; shift 2 ;;
    --not-before) NOT_BEFORE=$2; shift 2 ;;
    --not-after) NOT_AFTER=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "gen-certs.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
if { [ -n "$NOT_BEFORE" ] && [ -z "$NOT_AFTER" ]; } ||
   { [ -z "$NOT_BEFORE" ] && [ -n "$NOT_AFTER" ]; }; then
  echo "gen-certs.sh: --not-before and --not-after go together" >&2; exit 2
fi

umask 077
mkdir -p "$DIR/.ca/new"
CNF="$DIR/.ca/openssl.cnf"
[ -f "$DIR/.ca/index.txt" ] || : > "$DIR/.ca/index.txt"
[ -f "$DIR/.ca/serial" ] || openssl rand -hex 16 > "$DIR/.ca/serial"
cat > "$CNF" <<CNF
[ ca ]
default_ca = lh_ca
[ lh_ca ]
dir = $DIR/.ca
database = \$dir/index.txt
serial = \$dir/serial
new_certs_dir = \$dir/new
certificate = $DIR/ca.crt
private_key = $DIR/ca.key
default_md = sha256
policy = lh_policy
unique_subject = no
copy_extensions = none
[ lh_policy ]
commonName = supplied
[ server_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = \${ENV::LH_SAN}
[ client_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
CNF

newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

if [ ! -f "$DIR/ca.crt" ]; then
  newkey "$DIR/ca.key"
  openssl req -x509 -new -key "$DIR/ca.key" -sha256 -days 3650 -subj "/CN=longhaul cluster CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$DIR/ca.crt"
  echo "made $DIR/ca.crt (keep $DIR/ca.key off the cluster's machines)"
fi

# sign NAME CN EXT [startdate enddate]
sign() {
  local name=$1 cn=$2 ext=$3
  if [ -f "$DIR/$name.crt" ]; then echo "kept $DIR/$name.crt (exists)"; return; fi
  newkey "$DIR/$name.key"
  openssl req -new -key "$DIR/$name.key" -subj "/CN=$cn" -out "$DIR/.ca/$name.csr"
  local dates=(-days "$DAYS")
  if [ "$ext" = client_ext ] && [ -n "$NOT_BEFORE" ]; then
    dates=(-startdate "$NOT_BEFORE" -enddate "$NOT_AFTER")
  fi
  openssl ca -batch -notext -config "$CNF" -extensions "$ext" "${dates[@]}" \
    -in "$DIR/.ca/$name.csr" -out "$DIR/$name.crt" 2>/dev/null
  chmod 644 "$DIR/$name.crt"
  echo "made $DIR/$name.crt"
}

SAN="DNS:localhost,IP:127.0.0.1"
for h in "${HOSTS[@]}"; do
  if [[ $h =~ ^[0-9.]+$ || $h == *:* ]]; then SAN="$SAN,IP:$h"; else SAN="$SAN,DNS:$h"; fi
done
LH_SAN=$SAN sign coordinator "${HOSTS[0]:-localhost}" server_ext
for a in "${AGENTS[@]}"; do
  LH_SAN=$SAN sign "agent-$a" "$a" client_ext
done
chmod 644 "$DIR/ca.crt"
