# Sourced by the test scripts: compile through ccache, so the sanitized build
# (scripts/test_sanitized.sh) takes the objects it shares with the plain build
# (the tests and examples, compiled plain in both) from the cache instead of
# compiling them again. Sets PULSE_COMPILER_CACHE to the cmake arguments.
#  - CCACHE_BASEDIR: paths under the source tree are hashed relative, so two
#    build directories share their entries;
#  - CCACHE_SLOPPINESS: the tests include a precompiled Halide.h (ccache hashes
#    the .gch itself; its defines and its fresh mtime must not defeat that);
#  - CCACHE_DIR: the tree's own .ccache unless set.
PULSE_COMPILER_CACHE=()
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
  export CCACHE_DIR="${CCACHE_DIR:-$PWD/.ccache}"
  PULSE_COMPILER_CACHE=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
