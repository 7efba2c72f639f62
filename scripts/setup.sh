#!/usr/bin/env bash
# Installs exactly what strand's build, tests and figure scripts need from
# Debian's packages.
# Idempotent: does nothing (and needs no network) when all are present.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libabsl-dev libgflags-dev libgoogle-glog-dev
  libgtest-dev libgmock-dev
  liburing-dev libibverbs-dev librdmacm-dev
  python3-matplotlib  # scripts/figures/ draw with it (and their CI test)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
