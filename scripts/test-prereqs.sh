#!/usr/bin/env bash
# The system programs the test suite drives for real: tmux and screen (multiplexer backends, the
# attach CLI tests), vi (full-screen keyframe tests), bwrap (the session sandbox), chromium (the web
# page, via playwright-core), nginx (the fleet's front door, test/a2a/fleet.test.ts).
# `npm run check` runs this first, so the README's test command works on a fresh Debian machine:
# as root with apt it installs what is missing; otherwise it stops at once naming what to install.
set -euo pipefail

missing=()
for pair in tmux:tmux screen:screen vi:vim-tiny bwrap:bubblewrap; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
# /usr/sbin is often not on an unprivileged PATH.
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
if [ -n "${CHROMIUM_PATH:-}" ]; then
  [ -x "$CHROMIUM_PATH" ] || { echo "test-prereqs: CHROMIUM_PATH=$CHROMIUM_PATH is not an executable" >&2; exit 1; }
elif [ ! -x /usr/bin/chromium ]; then
  missing+=(chromium)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-prereqs: installing ${missing[*]} (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi

echo "test-prereqs: the tests need these Debian packages, which are not installed: ${missing[*]}" >&2
echo "  install them first, e.g.: sudo apt-get install ${missing[*]}" >&2
echo "  (chromium can also be any Chromium/Chrome binary named by CHROMIUM_PATH)" >&2
exit 1
