#!/usr/bin/env bash
# Installs the Debian packages genie needs, in two sets so a first `make run` fetches only
# what it builds and runs with:
#   run           building the genie binary and `make run` (the default)
#   test | bench  run + what the tests and benchmarks build and run with (`make test`, CI,
#                 `make bench`): one set, as `make test` also compiles the benchmarks
# Idempotent: quiet and fast when everything is already installed. Debian packages only;
# nothing else is fetched. Prints "install-deps: installing ..." when it installs anything.
# Usage: scripts/install-deps.sh [run|test|bench]
set -euo pipefail

RUN=(
  # g++ and make rather than build-essential, which adds dpkg-dev and its perl modules (8
  # packages genie never uses, on a fresh machine's first `make run`).
  g++ make cmake ninja-build pkg-config
  protobuf-compiler libprotobuf-dev zlib1g-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev libpugixml-dev
  libnetfilter-queue-dev libfabric-dev
  # The testbed (as root): namespaces, bridges and shaping through ip/tc, loss through iptables.
  iproute2 iptables
  # genie report (docs/report.md): Chart.js is embedded into genie at build time and inlined
  # into every page (make run writes two reports).
  libjs-chart.js
)
TEST=(
  libgtest-dev libgmock-dev
  # Sanitizer and fuzz presets (clang), the launcher and fabric tests' peers.
  clang libclang-rt-14-dev
  time bc util-linux
  mpich libfabric-bin
  # Launchers whose own store bootstraps the ranks (tests/launchers_e2e_test.cc): Open MPI's
  # mpirun over PMIx (libpmix-dev: optional at build time; the build is reconfigured to find
  # it), and a one-node Slurm the test starts. Without systemd (a container) their postinst
  # scripts start nothing (invoke-rc.d finds no runlevel) and succeed, with or without a
  # policy-rc.d; the tests start their own daemons.
  openmpi-bin libpmix-dev
  slurmctld slurmd slurm-client munge
  # Headless Chromium opens the report pages in tests/report_e2e_test.cc and
  # bench/report_size.sh (fonts-dejavu-core: the pages' text in its screenshots).
  chromium fonts-dejavu-core
  # Benchmarks (compiled by `make test` too) and their peer tools.
  libbenchmark-dev libgloo-dev iperf3
)

set_name=${1:-run}
case "$set_name" in
  run) PACKAGES=("${RUN[@]}") ;;
  test | bench) PACKAGES=("${RUN[@]}" "${TEST[@]}") ;;
  *) echo "install-deps: unknown set '$set_name' (run, test or bench)" >&2; exit 2 ;;
esac

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
