#!/bin/sh
# The testbed a suite's cases share under ctest (a fixture; tests/CMakeLists.txt, suite_testbed.h).
#   up GENIE NAME ARGS...  brings up testbed NAME (ARGS: --topology ...), a leftover of a killed
#                          run taken down first; without root or network namespaces nothing is
#                          made (the cases skip, saying why)
#   down GENIE NAME        takes it down; fails when any of its namespaces is left
set -u
what=$1 genie=$2 name=$3
shift 3
if [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
  echo "suite testbed $name: no root or no network namespaces here: nothing to $what"
  exit 0
fi
case $what in
  up)
    "$genie" testbed down "$name" >/dev/null 2>&1
    exec "$genie" testbed up --name "$name" "$@"
    ;;
  down)
    "$genie" testbed status "$name" >/dev/null 2>&1 || exit 0
    "$genie" testbed down "$name" || exit 1
    left=$(ip netns list 2>/dev/null | grep -c "^$name-")
    [ "$left" -eq 0 ] || { echo "suite testbed $name: $left namespace(s) left" >&2; exit 1; }
    ;;
esac
