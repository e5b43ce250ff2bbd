#!/usr/bin/env bash
# Installs a built longhaul (./build/bin) as services: the binaries, the systemd units, the
# example configs and the `longhaul` user with its state directory. Idempotent: a second run
# changes nothing, and an existing /etc/longhaul file is never overwritten.
#
#   deploy/install.sh [--prefix /usr/local] [--user longhaul] [--no-systemd] [--dry-run]
#                     [--root DIR] [--build-dir build]
#
#   --prefix DIR     binaries go to DIR/bin (the units' ExecStart follow)
#   --user NAME      the system user the daemons run as (created when missing)
#   --no-systemd     leave the units out (and do not call systemctl)
#   --dry-run        print what would be done, do nothing
#   --root DIR       install under DIR instead of / (DESTDIR-style, for packaging and tests);
#                    then no user is created and systemctl is not called
#   --build-dir DIR  where the build is (default ./build; its bin/ holds the binaries)
#
# Then: edit /etc/longhaul/*.yaml, check them with `longhauld --check-config` and
# `longhaul-agent --check-config`, and `systemctl enable --now longhauld longhaul-agent`.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=/usr/local
USER_NAME=longhaul
SYSTEMD=1
DRY_RUN=0
ROOT=
BUILD_DIR=$SRC/build
usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) PREFIX=${2:?--prefix needs a directory}; shift 2 ;;
    --user) USER_NAME=${2:?--user needs a name}; shift 2 ;;
    --no-systemd) SYSTEMD=0; shift ;;
    --dry-run) DRY_RUN=1; shift ;;
    --root) ROOT=$(realpath -m "${2:?--root needs a directory}"); shift 2 ;;
    --build-dir) BUILD_DIR=$(realpath -m "${2:?--build-dir needs a directory}"); shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "install.sh: unknown argument '$1'" >&2; usage 2 >&2 ;;
  esac
done
case $PREFIX in /*) ;; *) echo "install.sh: --prefix must be absolute: $PREFIX" >&2; exit 2 ;; esac
[ "$ROOT" = / ] && ROOT=
BINARIES=(longhauld longhaul-agent longhaul-shim longhaul
          lh-refengine lh-serve lh-datagen lh-extract lh-finetune lh-bench lh-inspect lh-gpucheck)
for b in "${BINARIES[@]}"; do
  if [ ! -x "$BUILD_DIR/bin/$b" ]; then
    echo "install.sh: $BUILD_DIR/bin/$b is missing: build first (deploy/build.sh main_job)" >&2
    exit 1
  fi
done

changes=0
say() { if [ "$DRY_RUN" = 1 ]; then echo "would $*"; else echo "$*"; fi; }
run() { if [ "$DRY_RUN" = 0 ]; then "$@"; fi; }

# ensure_dir DIR MODE [OWNER]
ensure_dir() {
  if [ ! -d "$ROOT$1" ]; then
    say "create $ROOT$1"; changes=$((changes + 1))
    run install -d -m "$2" "$ROOT$1"
  fi
  if [ -n "${3:-}" ] && [ -z "$ROOT" ] && [ "$(stat -c %U "$1" 2>/dev/null)" != "$3" ]; then
    say "chown $3: $1"; changes=$((changes + 1))
    run chown "$3:$3" "$1"
  fi
}
# put_file SOURCE DEST MODE: installs or replaces DEST when its content differs.
put_file() {
  if [ -f "$ROOT$2" ] && cmp -s "$1" "$ROOT$2"; then return; fi
  say "install $ROOT$2"; changes=$((changes + 1))
  run install -m "$3" "$1" "$ROOT$2"
}
# keep_file SOURCE DEST MODE: installs DEST only when there is none (an operator's config).
keep_file() {
  if [ -e "$ROOT$2" ]; then
    cmp -s "$1" "$ROOT$2" || echo "keep $ROOT$2 (exists; the example is $1)"
    return
  fi
  say "install $ROOT$2"; changes=$((changes + 1))
  run install -m "$3" "$1" "$ROOT$2"
}

# The user first: the directories below belong to it.
if [ -z "$ROOT" ] && ! getent passwd "$USER_NAME" >/dev/null; then
  say "create system user $USER_NAME (home /var/lib/longhaul)"; changes=$((changes + 1))
  run useradd --system --user-group --home-dir /var/lib/longhaul --no-create-home \
    --shell /usr/sbin/nologin "$USER_NAME"
fi

ensure_dir "$PREFIX/bin" 0755
for b in "${BINARIES[@]}"; do put_file "$BUILD_DIR/bin/$b" "$PREFIX/bin/$b" 0755; done

ensure_dir /etc/longhaul 0755
keep_file "$SRC/deploy/config/longhauld.yaml" /etc/longhaul/longhauld.yaml 0644
keep_file "$SRC/deploy/config/agent.yaml" /etc/longhaul/agent.yaml 0644
ensure_dir /var/lib/longhaul 0750 "$USER_NAME"

if [ "$SYSTEMD" = 1 ]; then
  ensure_dir /etc/systemd/system 0755
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  units_changed=0
  for unit in longhauld.service longhaul-agent.service; do
    sed -e "s|/usr/local/bin/|$PREFIX/bin/|" -e "s|^User=longhaul$|User=$USER_NAME|" \
        -e "s|^Group=longhaul$|Group=$USER_NAME|" "$SRC/deploy/systemd/$unit" >"$tmp/$unit"
    before=$changes
    put_file "$tmp/$unit" "/etc/systemd/system/$unit" 0644
    [ "$changes" = "$before" ] || units_changed=1
  done
  if [ "$units_changed" = 1 ] && [ -z "$ROOT" ] && command -v systemctl >/dev/null &&
     [ -d /run/systemd/system ]; then
    say "systemctl daemon-reload"
    run systemctl daemon-reload
  fi
fi

if [ "$changes" = 0 ]; then
  echo "install.sh: nothing to do, ${ROOT:-/} is up to date"
elif [ "$DRY_RUN" = 1 ]; then
  echo "install.sh: $changes changes would be made (dry run: none made)"
else
  echo "install.sh: $changes changes made. Next: edit ${ROOT}/etc/longhaul/*.yaml, check them" \
       "with --check-config, then systemctl enable --now longhauld longhaul-agent"
fi
