#!/bin/sh
# Regenerates tests/golden/types/err/*.stderr from the current checker (review the diff!).
set -e
cd "$(dirname "$0")/tests/golden/types/err"
for f in *.bt; do
  ../../../../target/debug/bt check --color never "$f" 2> "${f%.bt}.stderr" || true
done
