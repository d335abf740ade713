#!/bin/sh
# Installs the Debian packages memfit needs, only those that are missing.
#   sh tools/deps.sh            building, the report and the test suite
#   sh tools/deps.sh validate   also PyTorch and matplotlib (make validate: measure.py, lora.py,
#                               step.py; make bench)
#   sh tools/deps.sh fuzz       also clang (make fuzz: libFuzzer)
set -eu
PKGS="build-essential pkg-config libhpdf-dev libcairo2-dev libfreetype-dev libcsv-dev libcmocka-dev
libjansson-dev fonts-dejavu-core poppler-utils qpdf valgrind python3 groff-base clang-format"
[ "${1:-}" = validate ] && PKGS="$PKGS python3-torch python3-matplotlib libopenblas0-pthread"
[ "${1:-}" = fuzz ] && PKGS="$PKGS clang"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && { echo "deps: all present"; exit 0; }
echo "deps: installing$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
