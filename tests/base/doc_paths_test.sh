#!/usr/bin/env bash
# Every repository path a comment, header or document names exists: a
# reader who follows "see wal/log_writer.h" must find it. Paths are the
# ones under the repository's top folders (base/, wal/, docs/, ...); system
# headers (#include <rdma/...>) are not ours. Usage: doc_paths_test.sh SRC
set -euo pipefail
cd "$1"
folders='base|cc|rdma|storage|index|txn|engine|partition|wal|tpcc|bench|tools|docs|scripts|tests|examples|cmake|config'
missing=0
while IFS= read -r path; do
  if [ ! -e "$path" ]; then
    echo "named but missing: $path (in: $(git grep -l -F "$path" | head -3 | tr '\n' ' '))"
    missing=$((missing + 1))
  fi
done < <(git ls-files -z -- '*.h' '*.cc' '*.md' '*.py' '*.sh' '*.txt' '*.cmake' |
  xargs -0 grep -hP -v '^\s*#\s*include\s*<' |
  grep -oP "(?<![\w/.-])($folders)/[A-Za-z0-9_./-]+\.(h|cc|md|py|sh|txt|cmake)\b" |
  sort -u)
if [ "$missing" -gt 0 ]; then
  echo "FAIL: $missing path(s) named in comments or docs do not exist"
  exit 1
fi
echo "every named path exists"
