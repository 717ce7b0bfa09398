#!/usr/bin/env bash
# A long differential-fuzzer run over many cores: JOBS processes of
# test_random_systems (its [random][systems] cases without the CM sample), each
# drawing batches of SCALE*150 systems at disjoint seeds, batch after batch,
# until SECONDS_BUDGET is spent (a batch started is finished). Every batch's
# log is kept under LOG_DIR; a summary line counts systems, validator cases and
# kernels executed, and lists every batch that failed with its seed (each
# failure's log holds the shrunk reproducer). Exits 1 if any batch failed.
#
# usage: scripts/fuzz_parallel.sh BINARY LOG_DIR [JOBS (nproc)] [SECONDS_BUDGET (540)] [SCALE (7)] [FIRST_SEED (1000000)]
set -uo pipefail
bin="${1:?usage: $0 BINARY LOG_DIR [JOBS] [SECONDS_BUDGET] [SCALE] [FIRST_SEED]}"
logs="${2:?usage: $0 BINARY LOG_DIR [JOBS] [SECONDS_BUDGET] [SCALE] [FIRST_SEED]}"
jobs="${3:-$(nproc)}"
budget="${4:-540}"
scale="${5:-7}"
first="${6:-1000000}"
mkdir -p "$logs"
# A binary that cannot start would make every batch fail at once, endlessly.
"$bin" --list-tests > "$logs/tests.txt" 2>&1  # (Catch2 exits with the number of tests)
grep -q "random URE systems" "$logs/tests.txt" || { echo "fuzz_parallel: $bin does not run: $(head -c 300 "$logs/tests.txt")" >&2; exit 2; }
per_batch=$((scale * 150))
deadline=$((SECONDS + budget))
worker() {
  local k="$1" r=0
  while (( SECONDS < deadline )); do
    local seed=$((first + (r * jobs + k) * per_batch))
    PULSE_RANDOM_SCALE="$scale" PULSE_FUZZ_SEED="$seed" "$bin" "[random][systems]~[cm]" > "$logs/batch_$seed.log" 2>&1
    local rc=$?
    echo "$seed $rc" >> "$logs/status_$k.txt"
    # A batch that ended without its summary crashed: stop this worker (its log says why).
    grep -q "disagreements" "$logs/batch_$seed.log" || return
    r=$((r + 1))
  done
}
for ((k = 0; k < jobs; k++)); do worker "$k" & done
wait
batches=$(cat "$logs"/status_*.txt | wc -l)
failed=$(awk '$2 != 0 {print $1}' "$logs"/status_*.txt | sort -n | tr '\n' ' ')
sum() { find "$logs" -name 'batch_*.log' -exec grep -h -o "$1" {} + | awk '{s += $1} END {print s + 0}'; }
systems=$(sum "[0-9]* systems (")
cases=$(sum "[0-9]* validator cases")
kernels=$(sum "[0-9]* kernels executed")
disagreements=$(sum "[0-9]* disagreements")
echo "fuzz_parallel: $batches batches from seed $first on $jobs processes: $systems systems, $cases validator cases," \
     "$kernels kernels executed, $disagreements disagreements; failed batches (seeds): ${failed:-none}"
[ -z "$failed" ]
