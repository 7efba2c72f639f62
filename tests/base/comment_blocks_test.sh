#!/usr/bin/env bash
# No comment block of 23 or more lines in a source file: a header keeps a
# contract a reader takes in at a glance (about 20 lines and a link), and
# proofs, designs, walk-throughs and layouts go to docs/design/, told once.
# A block is a run of consecutive lines whose first non-blank characters
# are //. Usage: comment_blocks_test.sh SRC
set -euo pipefail
cd "$1"
limit=23
long="$(git ls-files -z -- '*.h' '*.cc' | xargs -0 awk -v limit="$limit" '
  function report() {
    if (run >= limit) print file ":" start ": " run " lines"
    run = 0
  }
  FNR == 1 { report(); file = FILENAME }
  /^[ \t]*\/\// { if (run == 0) start = FNR; run++; next }
  { report() }
  END { report() }
')"
if [ -n "$long" ]; then
  echo "$long"
  echo "FAIL: comment blocks of $limit or more lines (move the argument to docs/design/ and link it)"
  exit 1
fi
echo "no comment block of $limit or more lines"
