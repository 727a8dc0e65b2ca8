#!/usr/bin/env bash
# Every GPU measurement of the performance targets, in one command, printing one table.
#
#   bash benchmarks/gpu_suite.sh                      # on a CUDA GPU: under 8 minutes
#   bash benchmarks/gpu_suite.sh --dry-run            # print the commands, run nothing
#   bash benchmarks/gpu_suite.sh --device cpu --quick # tiny sizes: checks that it all runs
#
# Steps (each in its own processes, each under its own time limit, so that one step that
# fails or overruns leaves the others' rows in the table):
#   1. bertscore_throughput.py: bert_score's whole list at batch 32/64/128/256, our
#      score_batch in float32 and the fast mode, per item in Opik with 16 threads without
#      and with prepare(), and Opik's engine alone with a metric that computes nothing;
#   2. encoder_paths.py: each encoder path, batch size and type, cold and warm;
#   3. large_encoder.py: MiniLM and the roberta-large shape (layer 17, random weights),
#      captions and paragraphs, against bert_score's best batch size, float32 and fast.
# Then benchmarks/gpu_suite_table.py prints one table against the targets of
# docs/performance/gpu.md. Every step's output and JSON is kept in $LOGS (printed at the end).
set -u -o pipefail

device=cuda
quick=0
dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    *) echo "usage: $0 [--device cuda|cpu] [--quick] [--dry-run]" >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 OPIK_TRACK_DISABLE=true OPIK_ANALYTICS_ENABLE=false
export TOKENIZERS_PARALLELISM=false LITELLM_LOCAL_MODEL_COST_MAP=True
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
python=${PYTHON:-python}
LOGS=${LOGS:-$(mktemp -d -t gpu-suite-XXXXXX)}

if [ "$quick" = 1 ]; then
  pairs=40
  # Fewer cases than the full run (each case is a process that loads a model): one of
  # each kind of code path, so that every step and the table are seen to work.
  throughput=(--pairs "$pairs" --rounds 1 --cases adhl)
  paths=(--pairs "$pairs" --repeats 1)
  large=(--encoder roberta-large-shape --layers 2 --captions 16 --paragraphs 2 --rounds 1
         --fast --bert-score-batch-sizes 64)
  limits=(900 900 900)
else
  pairs=2000
  throughput=(--pairs "$pairs" --rounds 2 --cases acdfhkl)
  paths=(--pairs "$pairs" --repeats 2)
  large=(--encoder both --captions 1000 --paragraphs 200 --rounds 1 --fast
         --bert-score-batch-sizes 64,256)
  limits=(180 90 190)
fi

steps=(
  "benchmarks/bertscore_throughput.py --device $device ${throughput[*]}"
  "benchmarks/encoder_paths.py --device $device ${paths[*]}"
  "benchmarks/large_encoder.py --device $device ${large[*]}"
)
names=(bertscore_throughput encoder_paths large_encoder)

if [ "$dry_run" = 1 ]; then
  for i in 0 1 2; do echo "timeout ${limits[$i]} $python ${steps[$i]}"; done
  echo "BENCHMARK_RESULTS=$LOGS (each step's JSON)"
  echo "$python benchmarks/gpu_suite_table.py --results $LOGS --pairs $pairs"
  exit 0
fi

echo "gpu suite on $device; logs in $LOGS" >&2
"$python" - <<'PY' >&2 || true
import torch
print("torch", torch.__version__, "cuda", torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
PY
uptime >&2
export BENCHMARK_RESULTS="$LOGS"
status=0
for i in 0 1 2; do
  start=$(date +%s)
  # shellcheck disable=SC2086
  timeout "${limits[$i]}" "$python" ${steps[$i]} >"$LOGS/${names[$i]}.log" 2>&1
  code=$?
  echo "${names[$i]}: exit $code in $(( $(date +%s) - start )) s" >&2
  [ "$code" = 0 ] || status=1
done
"$python" benchmarks/gpu_suite_table.py --results "$LOGS" --pairs "$pairs"
echo "full outputs: $LOGS" >&2
exit "$status"
