#!/usr/bin/env bash
# Runs the fuzz targets for SECONDS each (default 60): all of them, or those named after
# SECONDS. JOBS=2 runs two at a time (one core each). Needs the nightly toolchain; installs
# cargo-fuzz if it is missing.
#
#   fuzz/run.sh 600                  # every target, ten minutes each
#   JOBS=2 fuzz/run.sh 600 ops json_import
#
# Each target keeps what it learned in fuzz/corpus/<target>/ and starts from the seeds that
# the `seeds` program writes from the fixtures. A crash leaves its input in
# fuzz/artifacts/<target>/; reproduce it with `cargo +nightly fuzz run <target> <file>`.
# Logs go to fuzz/logs/<target>.log; the last lines say how many inputs each target ran.
set -euo pipefail
cd "$(dirname "$0")"

seconds=${1:-60}
shift || true
all=(blob_from_bytes store_from_bytes store_view store_lazy store_salvage json_import sjson_import ops patch_from_bytes delta_apply query_parse migrations_json prototype_links)
targets=("${@:-${all[@]}}")
jobs=${JOBS:-1}

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "run.sh: needs the nightly toolchain: rustup toolchain install nightly" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

cargo +nightly fuzz build
cargo run --quiet --bin seeds -- ../fixtures seeds
mkdir -p logs

run_one() {
    local target=$1
    local extra=()
    [[ $target == json_import ]] && extra+=(-dict=json.dict)
    [[ $target == sjson_import ]] && extra+=(-dict=sjson.dict)
    # ops has no seeds: its input is a list of operations.
    mkdir -p "corpus/$target" "seeds/$target"
    # -timeout: an input that takes 10 s is a hang. The exit status is the fuzzer's: a crash
    # fails the run.
    cargo +nightly fuzz run "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1 "${extra[@]}" \
        >"logs/$target.log" 2>&1
}

failed=()
running=0
for target in "${targets[@]}"; do
    echo "fuzzing $target for ${seconds}s (log: fuzz/logs/$target.log)"
    (run_one "$target" || { echo "$target: FAILED, see fuzz/logs/$target.log"; exit 1; }) &
    running=$((running + 1))
    if ((running >= jobs)); then
        wait -n || failed+=(one)
        running=$((running - 1))
    fi
done
while ((running > 0)); do
    wait -n || failed+=(one)
    running=$((running - 1))
done

echo
printf '%-18s %14s %8s %10s\n' target executions seconds corpus
for target in "${targets[@]}"; do
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$target.log" | grep -o '[0-9]*$' || echo '?')
    corpus=$(find "corpus/$target" -type f | wc -l)
    printf '%-18s %14s %8s %10s\n' "$target" "$runs" "$seconds" "$corpus"
done
if ((${#failed[@]} > 0)); then
    echo "run.sh: ${#failed[@]} target(s) failed; their inputs are in fuzz/artifacts/" >&2
    exit 1
fi
