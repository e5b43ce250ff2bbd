#!/usr/bin/env bash
# deploy/install.sh into a temp root: the files land where they should, a second run changes
# nothing, an operator's config is kept, a removed binary comes back, --dry-run touches
# nothing. Usage: install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SRC=$1
BUILD=$2
ROOT=$(mktemp -d)
trap 'rm -rf "$ROOT"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
install_sh() { "$SRC/deploy/install.sh" --root "$ROOT/r" --build-dir "$BUILD" --prefix /opt/lh "$@"; }
snapshot() { (cd "$ROOT/r" && find . -printf '%p %y %m %s %T@\n' | sort); }

# --dry-run creates nothing.
out=$(install_sh --dry-run)
[ ! -e "$ROOT/r" ] || fail "--dry-run created $ROOT/r"
grep -q "^would install $ROOT/r/opt/lh/bin/longhauld$" <<<"$out" || fail "dry run said: $out"

install_sh >"$ROOT/first.out"
for b in longhauld longhaul-agent longhaul-shim longhaul lh-refengine; do
  [ -x "$ROOT/r/opt/lh/bin/$b" ] || fail "$b not installed"
  cmp -s "$BUILD/bin/$b" "$ROOT/r/opt/lh/bin/$b" || fail "$b differs from the build's"
done
cmp -s "$SRC/deploy/config/longhauld.yaml" "$ROOT/r/etc/longhaul/longhauld.yaml" ||
  fail "longhauld.yaml not installed"
cmp -s "$SRC/deploy/config/agent.yaml" "$ROOT/r/etc/longhaul/agent.yaml" ||
  fail "agent.yaml not installed"
[ -d "$ROOT/r/var/lib/longhaul" ] || fail "/var/lib/longhaul not created"
unit=$ROOT/r/etc/systemd/system/longhaul-agent.service
grep -qx "ExecStart=/opt/lh/bin/longhaul-agent --config /etc/longhaul/agent.yaml" "$unit" ||
  fail "agent unit's ExecStart not rewritten for --prefix: $(grep ExecStart "$unit")"
grep -qx "ExecStart=/opt/lh/bin/longhauld --config /etc/longhaul/longhauld.yaml" \
  "$ROOT/r/etc/systemd/system/longhauld.service" || fail "longhauld unit's ExecStart"

# A second run changes nothing, not even a timestamp.
before=$(snapshot)
out=$(install_sh)
grep -q "nothing to do" <<<"$out" || fail "second run said: $out"
[ "$before" = "$(snapshot)" ] || fail "second run changed files: $(diff <(echo "$before") <(snapshot))"

# An operator's config is kept; a missing binary comes back; --user goes into the units.
echo "listen: 0.0.0.0:7070  # mine" >"$ROOT/r/etc/longhaul/longhauld.yaml"
rm "$ROOT/r/opt/lh/bin/longhaul"
out=$(install_sh --user svc)
grep -q "0.0.0.0:7070  # mine" "$ROOT/r/etc/longhaul/longhauld.yaml" || fail "config overwritten"
grep -q "^keep $ROOT/r/etc/longhaul/longhauld.yaml" <<<"$out" || fail "keep not said: $out"
[ -x "$ROOT/r/opt/lh/bin/longhaul" ] || fail "removed binary not reinstalled"
grep -qx "User=svc" "$unit" || fail "--user not applied to the unit"

# --no-systemd leaves the units out.
install_sh --root "$ROOT/n" --no-systemd >/dev/null
[ ! -e "$ROOT/n/etc/systemd" ] || fail "--no-systemd installed units"
echo "install_test: ok"
