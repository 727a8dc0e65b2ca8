#!/usr/bin/env bash
# Every GPU measurement of the performance targets, in one command, printing one table.
#
#   bash benchmarks/gpu_suite.sh                      # on a CUDA GPU: under 8 minutes
#   bash benchmarks/gpu_suite.sh --dry-run            # print the commands, run nothing
#   bash benchmarks/gpu_suite.sh --device cpu --quick # tiny sizes: checks that it all runs
#
# Needs torch and transformers, the package (src/ is put on PYTHONPATH), opik and
# bert_score; no network. Without the packaged MiniLM, step 0 builds a model of its shape
# with random weights (benchmarks/minilm_shape.py); timing does not depend on weights.
#
# Steps, most wanted first, each one Python process under its own time limit (every case
# of a step runs in that process: the package and Opik are imported once, each model is
# loaded once, and every case is timed after its warm-up):
#   0. minilm_shape.py: the MiniLM every step times;
#   1. bertscore_throughput.py: bert_score's whole list at batch 32/64/128/256,
#      torchmetrics' BERTScore at 64/256, our score_batch in float32 and the fast mode,
#      per item in Opik with 16 threads without and with prepare(), and Opik's engine
#      alone with a metric that computes nothing;
#   2. large_encoder.py: MiniLM and the roberta-large shape (layer 17, random weights),
#      captions and paragraphs, against bert_score's best batch size, float32 and fast;
#   3. comet_shapes.py: our COMET on a tiny and an XLM-R-base-shaped checkpoint;
#   4. encoder_paths.py: each encoder path, batch size and type, cold and warm.
# Every case appends its figures to $LOGS/<step>.jsonl the moment it ends, so a step cut
# short by its limit keeps every case it finished. The limits come from case times
# measured on an H200 (docs/performance/gpu.md); no step may start past the suite's
# budget (SUITE_BUDGET_S, 470 s before the table). Then gpu_suite_table.py prints one
# table against the targets of docs/performance/gpu.md.
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
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OPIK_TRACK_DISABLE=true
export OPIK_ANALYTICS_ENABLE=false TOKENIZERS_PARALLELISM=false LITELLM_LOCAL_MODEL_COST_MAP=True
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
python=${PYTHON:-python}
if [ "$dry_run" = 1 ]; then
  LOGS=${LOGS:-/tmp/gpu-suite-XXXXXX}  # made by mktemp in a real run
else
  LOGS=${LOGS:-$(mktemp -d -t gpu-suite-XXXXXX)}
  mkdir -p "$LOGS"
fi

if [ "$quick" = 1 ]; then
  # Tiny sizes and a few cases of each kind, so that every step and the table are seen
  # to work; 2-layer large shapes with small vocabularies.
  throughput=(--pairs 40 --rounds 1 --cases adhlm --peak-repeats 2)
  large=(--encoder roberta-large-shape --layers 2 --captions 16 --paragraphs 2 --rounds 1
         --fast --bert-score-batch-sizes 64 --peak-repeats 2)
  comet=(--segments 10 --rounds 1 --xlmr-layers 2 --small-vocabulary)
  paths=(--pairs 24 --repeats 1)
  limits=(300 600 600 300 600)
  budget=${SUITE_BUDGET_S:-1800}
else
  # Expected on an H200 (case times of docs/performance/gpu.md, plus 12 s of imports and
  # the model loads): about 110, 120, 45 and 70 s; each limit leaves room above that.
  throughput=(--pairs 2000 --rounds 2 --cases acdfhklm)
  large=(--encoder both --captions 1000 --paragraphs 200 --rounds 1 --fast
         --bert-score-batch-sizes 64,256)
  comet=(--segments 500 --rounds 1)
  paths=(--pairs 1000 --repeats 1)
  limits=(60 150 160 80 100)
  budget=${SUITE_BUDGET_S:-470}
fi

names=(minilm_shape bertscore_throughput large_encoder comet_shapes encoder_paths)
steps=(
  "benchmarks/minilm_shape.py $LOGS/minilm"
  "benchmarks/bertscore_throughput.py --in-process --device $device ${throughput[*]}"
  "benchmarks/large_encoder.py --in-process --device $device ${large[*]}"
  "benchmarks/comet_shapes.py --device $device ${comet[*]}"
  "benchmarks/encoder_paths.py --in-process --device $device ${paths[*]}"
)

if [ "$dry_run" = 1 ]; then
  for i in "${!steps[@]}"; do echo "timeout ${limits[$i]} $python ${steps[$i]}"; done
  echo "BENCHMARK_RESULTS=$LOGS (each step's JSON lines); suite budget ${budget} s"
  echo "$python benchmarks/gpu_suite_table.py --results $LOGS"
  exit 0
fi

echo "gpu suite on $device; logs in $LOGS" >&2
"$python" - <<'PY' >&2 || true
import torch
print("torch", torch.__version__, "cuda", torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
PY
git log -1 --format='commit %h %cd' >&2 2>/dev/null || true
uptime >&2
export BENCHMARK_RESULTS="$LOGS"
suite_start=$(date +%s)
status=0
for i in "${!steps[@]}"; do
  left=$(( budget - ($(date +%s) - suite_start) ))
  limit=${limits[$i]}
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 5 ]; then
    echo "${names[$i]}: not started, the suite's ${budget} s are spent" >&2
    status=1
    continue
  fi
  start=$(date +%s)
  if [ "$i" = 0 ]; then
    # shellcheck disable=SC2086
    minilm=$(timeout "$limit" "$python" ${steps[$i]} 2>"$LOGS/${names[$i]}.log")
    code=$?
    [ "$code" = 0 ] && export BENCHMARK_MINILM="$minilm"
    echo "MiniLM: ${minilm:-none} ($(tail -1 "$LOGS/${names[$i]}.log"))" >&2
  else
    # shellcheck disable=SC2086
    timeout "$limit" "$python" ${steps[$i]} >"$LOGS/${names[$i]}.log" 2>&1
    code=$?
  fi
  echo "${names[$i]}: exit $code in $(( $(date +%s) - start )) s (limit $limit s)" >&2
  [ "$code" = 0 ] || status=1
done
"$python" benchmarks/gpu_suite_table.py --results "$LOGS"
echo "suite: $(( $(date +%s) - suite_start )) s; full outputs: $LOGS" >&2
exit "$status"
