#!/usr/bin/env bash
# Installs the Debian packages genie builds, tests and benchmarks with. Idempotent: quiet and
# fast when everything is already installed. Debian packages only; nothing else is fetched.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  protobuf-compiler libprotobuf-dev zlib1g-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev libpugixml-dev
  libgtest-dev libgmock-dev libbenchmark-dev libgloo-dev
  libnetfilter-queue-dev
  iproute2 iptables iperf3 time bc util-linux
  mpich
  libfabric-dev libfabric-bin
  # Launchers whose own store bootstraps the ranks (tests/launchers_e2e_test.cc): Open MPI's
  # mpirun over PMIx (libpmix-dev: optional at build time), and a one-node Slurm the test starts.
  # Without systemd (a container) their postinst scripts start nothing (invoke-rc.d finds no
  # runlevel) and succeed, with or without a policy-rc.d; the tests start their own daemons.
  openmpi-bin libpmix-dev
  slurmctld slurmd slurm-client munge
  # genie report (docs/report.md): Chart.js, embedded into genie at build time and inlined into
  # every page; headless Chromium opens the pages in tests/report_e2e_test.cc and
  # bench/report_size.sh (fonts-dejavu-core: the pages' text in its screenshots).
  libjs-chart.js chromium fonts-dejavu-core
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# openmpi-bin takes over the plain mpirun/mpiexec names; genie's tests and docs name each
# launcher in full (mpiexec.mpich, mpirun.openmpi), so either owner is fine.
