#!/usr/bin/env bash
# The library as its users get it: installs the build into a fresh prefix
# (cmake --install), checks what is there and that the versions agree
# (parbench version, the SONAME, pkg-config, the CMake package), then builds
# the installed examples out of tree against that prefix -- with pkg-config,
# shared and static, and with CMake's find_package(parbench) -- and runs them:
# GEMM and the reduction on ref and openmp, SpMV of a small Matrix Market file.
# usage: install_test.sh BUILD_DIR CMAKE CC [EXTRA_FLAGS]
# (EXTRA_FLAGS: compiler and linker flags the examples need too, e.g. the
# sanitizers the library was built with.)
set -euo pipefail
build=$1 cmake=$2 cc=$3 extra=${4:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/parbench-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() {
    echo "FAIL: $*"
    exit 1
}
# Runs a command that must succeed and say ": ok".
run_ok() {
    local out
    if ! out=$("$@" 2>&1); then
        echo "$out"
        fail "$* exited with an error"
    fi
    echo "  $out"
    grep -q ': ok$' <<<"$out" || fail "$*: no ': ok' in its output"
}

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || {
    cat "$tmp/install.log"
    fail "cmake --install failed"
}

# ---- what is installed -------------------------------------------------------
pc=$(find "$prefix" -name parbench.pc)
[ -n "$pc" ] || fail "no parbench.pc under the prefix"
libdir=$(dirname "$(dirname "$pc")")
for f in bin/parbench include/parbench/pb.h include/parbench/pb_backend.h include/parbench/pb_kernels.h \
    include/parbench/pb_matrix.h share/man/man1/parbench.1 share/bash-completion/completions/parbench \
    share/doc/parbench/examples/gemm.c share/doc/parbench/examples/CMakeLists.txt; do
    [ -f "$prefix/$f" ] || fail "$f is not installed"
done
for f in libparbench.a libparbench.so pkgconfig/parbench.pc cmake/parbench/parbench-config.cmake \
    cmake/parbench/parbench-config-version.cmake cmake/parbench/parbench-targets.cmake; do
    [ -e "$libdir/$f" ] || fail "$libdir/$f is not installed"
done
# No header of the sources' private tree, no path of the build machine's tree.
[ "$(ls "$prefix/include/parbench" | wc -l)" = "$(ls "$prefix/include/parbench"/*.h | wc -l)" ] ||
    fail "include/parbench holds more than headers"
if grep -rl "$(cd "$build" && pwd)" "$libdir/pkgconfig" "$libdir/cmake" 2>/dev/null; then
    fail "the .pc or CMake files above name the build directory"
fi

# ---- one version everywhere ------------------------------------------------------
export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$("$prefix/bin/parbench" version | awk '{ print $2 }')
pc_version=$(pkg-config --modversion parbench)
cmake_version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$libdir/cmake/parbench/parbench-config-version.cmake")
soname=$(LC_ALL=C objdump -p "$libdir/libparbench.so" | awk '$1 == "SONAME" { print $2 }')
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "parbench version printed '$version'"
[ "$pc_version" = "$version" ] || fail "pkg-config says $pc_version, parbench $version"
[ "$cmake_version" = "$version" ] || fail "the CMake package says $cmake_version, parbench $version"
[ "$soname" = "libparbench.so.${version%%.*}" ] || fail "SONAME $soname for version $version"
[ -e "$libdir/$soname" ] || fail "$soname is not installed"
echo "version $version: parbench, pkg-config, CMake package and SONAME $soname agree"

# ---- the examples, built three ways ------------------------------------------------
flags="-O2 -Wall -Wextra -Werror $extra"
cp -r "$prefix/share/doc/parbench/examples" "$tmp/shared"
cp -r "$prefix/share/doc/parbench/examples" "$tmp/static"
cp -r "$prefix/share/doc/parbench/examples" "$tmp/cmake"
make -s -C "$tmp/shared" CC="$cc" CFLAGS="$flags" LDFLAGS="$extra" || fail "make (pkg-config) failed"
make -s -C "$tmp/static" STATIC=1 CC="$cc" CFLAGS="$flags" LDFLAGS="$extra" || fail "make STATIC=1 failed"
"$cmake" -S "$tmp/cmake" -B "$tmp/cmake/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$tmp/cmake.log" 2>&1 || {
    cat "$tmp/cmake.log"
    fail "configuring the examples with find_package(parbench) failed"
}
grep -q "^parbench_DIR:PATH=$libdir/cmake/parbench$" "$tmp/cmake/build/CMakeCache.txt" ||
    fail "find_package(parbench) did not find the installed package: $(grep parbench_DIR "$tmp/cmake/build/CMakeCache.txt")"
"$cmake" --build "$tmp/cmake/build" >"$tmp/build.log" 2>&1 || {
    cat "$tmp/build.log"
    fail "building the examples with CMake failed"
}

# Linked the way each was meant to: the installed shared library, or none.
# (Outputs are captured before grep reads them: grep -q ending a pipe early
# would fail it under pipefail.)
needs() { LC_ALL=C objdump -p "$1" | awk '$1 == "NEEDED" { print $2 }'; }
for exe in "$tmp/shared/gemm" "$tmp/cmake/build/gemm"; do
    grep -qx "$soname" <<<"$(needs "$exe")" || fail "$exe does not need $soname"
done
grep -q "$soname => $libdir/$soname" <<<"$(LD_LIBRARY_PATH=$libdir ldd "$tmp/shared/gemm")" ||
    fail "$tmp/shared/gemm does not load the installed $soname"
grep -q "$soname => $libdir/$soname" <<<"$(ldd "$tmp/cmake/build/gemm")" ||
    fail "the CMake-built gemm does not load the installed $soname"
if grep -q libparbench <<<"$(needs "$tmp/static/gemm")"; then
    fail "the static build still needs a shared libparbench"
fi

# ---- and they run ------------------------------------------------------------------
backends=ref
grep -q '^  openmp ' <<<"$("$prefix/bin/parbench" list)" && backends="ref openmp"
cat >"$tmp/tiny.mtx" <<'EOF'
%%MatrixMarket matrix coordinate real general
% 4 x 5 with an empty row
4 5 6
1 1 1.5
1 3 -2
2 2 4
4 1 1
4 4 2.25
4 5 -1
EOF
for dir in shared static cmake/build; do
    echo "examples built in $dir:"
    for b in $backends; do
        LD_LIBRARY_PATH=$libdir run_ok "$tmp/$dir/gemm" 96 "$b"
        LD_LIBRARY_PATH=$libdir run_ok "$tmp/$dir/reduce" 100000 "$b"
        LD_LIBRARY_PATH=$libdir run_ok "$tmp/$dir/spmv" "$tmp/tiny.mtx" "" "$b"
    done
    LD_LIBRARY_PATH=$libdir run_ok "$tmp/$dir/spmv" "$tmp/tiny.mtx" csr ref
done
LD_LIBRARY_PATH=$libdir run_ok "$tmp/shared/gemm" 64 # the best device here
# A failure says why, from pb_last_error().
if out=$(LD_LIBRARY_PATH=$libdir "$tmp/shared/spmv" "$tmp/tiny.mtx" no-such-variant ref 2>&1); then
    fail "spmv with an unknown variant succeeded: $out"
fi
grep -q "has no spmv variant 'no-such-variant'" <<<"$out" || fail "spmv's error does not say why: $out"
if out=$(LD_LIBRARY_PATH=$libdir "$tmp/shared/spmv" "$tmp/missing.mtx" 2>&1); then
    fail "spmv of a missing file succeeded: $out"
fi
grep -q "missing.mtx" <<<"$out" || fail "spmv's error does not name the file: $out"
"$prefix/bin/parbench" run gemm --n 64 --backend ref --quiet >"$tmp/run.log" 2>&1 || {
    cat "$tmp/run.log"
    fail "the installed parbench run gemm failed"
}
echo "ok: installed, built with pkg-config (shared, static) and find_package, run"
