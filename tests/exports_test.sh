#!/usr/bin/env bash
# The shared library exports exactly the functions the public headers declare:
# each one of them, and nothing else (no internal pb__ function, nothing of the
# statically linked CUDA runtime or of other static code); its SONAME is the
# one the version gives.
# usage: exports_test.sh LIBPARBENCH_SO INCLUDE_DIR CC NM SONAME
set -euo pipefail
so=$1 inc=$2 cc=$3 nm=$4 soname=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# Declared: names before "(" in the preprocessed headers (comments removed).
for h in "$inc"/parbench/*.h; do
    printf '#include "%s"\n' "$h"
done | "$cc" -E -P -I "$inc" -x c - | grep -oE '\bpb_[a-z0-9_]+[[:space:]]*\(' |
    sed 's/[[:space:](]//g' | sort -u >"$tmp/declared"
"$nm" -D --defined-only "$so" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' | sort -u >"$tmp/exported"

for f in pb_version pb_gemm pb_kernel_run pb_coo_read; do
    if ! grep -qx "$f" "$tmp/declared"; then
        echo "FAIL: $f not found among the headers' declarations (is the header parsing broken?)"
        fail=1
    fi
done
if ! diff -u --label declared --label exported "$tmp/declared" "$tmp/exported"; then
    echo "FAIL: the exported symbols of $so differ from the public declarations (- declared only, + exported only)"
    fail=1
fi
got=$(LC_ALL=C objdump -p "$so" | awk '$1 == "SONAME" {print $2}')
if [ "$got" != "$soname" ]; then
    echo "FAIL: SONAME is '$got', expected '$soname'"
    fail=1
fi
[ "$fail" = 0 ] && echo "ok: $(wc -l <"$tmp/exported") symbols exported, all declared in include/parbench; SONAME $got"
exit "$fail"
