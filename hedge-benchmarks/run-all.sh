#!/usr/bin/env bash
# Reproduces every figure of docs/benchmarks.md in one run, on this machine (about 15 min on 2 cores).
#   hedge-benchmarks/run-all.sh            # everything
#   QUICK=1 hedge-benchmarks/run-all.sh    # smoke run: tiny sizes, seconds; numbers meaningless
#   SKIP_JMH=1 hedge-benchmarks/run-all.sh # the virtual-time simulator and timers only
# Writes raw results to hedge-benchmarks/results/ (JMH JSON and text, simulator JSON) and the
# percentile plot to docs/img/tail-percentiles.png, then prints the ratios the doc quotes.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=hedge-benchmarks/results
mkdir -p "$OUT" docs/img

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  ./mvnw -B -q package -pl hedge-benchmarks -am -DskipTests
fi
BENCH=${BENCH:-hedge-benchmarks/target/benchmarks.jar}
SIM=${SIM:-hedge-benchmarks/target/hedge-sim.jar}

if [[ "${QUICK:-0}" == 1 ]]; then
  JMH_OPTS=(-f 1 -wi 1 -w 200ms -i 1 -r 200ms)
  REQ=5000; CALLS=100000; SAMPLES=200; SHIFT=(--healthy 3 --slow 6 --after 6 --sample 1); CSHIFT=(--healthy 3 --slow 6)
  SWEEP=(--requests 5000 --large-requests 5000); PEGASUS=5000
else
  JMH_OPTS=(-f 1 -wi 3 -w 2s -i 5 -r 2s)
  REQ=200000; CALLS=10000000; SAMPLES=2000; SHIFT=(); CSHIFT=()
  SWEEP=(--requests 500000 --large-requests 1000000); PEGASUS=2000000
fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
  java -version 2>&1 | sed 's/^/jvm: /'
  echo "commit: $(git rev-parse --short HEAD)"
} > "$OUT/env.txt"
cat "$OUT/env.txt"

# 1. JMH: overhead at 1 and 2 threads (each run has its own baselines), tracker at 2 threads
if [[ "${SKIP_JMH:-0}" != 1 ]]; then
for t in 1 2; do
  java -jar "$BENCH" 'HedgedOverheadBenchmark' "${JMH_OPTS[@]}" -t "$t" -prof gc \
    -rf json -rff "$OUT/jmh-overhead-t$t.json" > "$OUT/jmh-overhead-t$t.txt"
done
java -jar "$BENCH" 'TrackerRecordBenchmark' "${JMH_OPTS[@]}" -prof gc \
  -rf json -rff "$OUT/jmh-tracker.json" > "$OUT/jmh-tracker.txt"
fi

# 2. tail simulator, the issue's command, per distribution
for dist in pareto:2,1 lognormal:0,1 exp:1 weibull:0.5,1 bimodal:0.02,1,50; do
  name=$(echo "$dist" | tr ':,' '__')
  java -jar "$SIM" tail --dist "$dist" --budget 0.05 --requests "$REQ" --seed 1 --json > "$OUT/tail-$name.json"
done
java -jar "$SIM" plot --dist pareto:2,1 --budget 0.05 --requests "$REQ" --seed 1 \
  --out docs/img/tail-percentiles.png > /dev/null
java -jar "$SIM" plot --dist lognormal:0,1 --budget 0.05 --requests "$REQ" --seed 1 \
  --out docs/img/tail-percentiles-lognormal.png > /dev/null
java -jar "$SIM" shift --dist lognormal:0,1 --budget 0.05 --seed 1 "${SHIFT[@]}" > "$OUT/shift.json"
java -jar "$SIM" shift --dist lognormal:0,1 --budget 0.05 --seed 1 --factor 5 "${SHIFT[@]}" > "$OUT/shift-5x.json"
# closed loop: 8 lanes, every replica 5x slower at 33 s (the Cassandra SideBySide shift, in virtual time)
java -jar "$SIM" closed-shift --seed 1 "${CSHIFT[@]}" > "$OUT/closed-shift.json"
java -jar "$SIM" load --dist lognormal:0,1 --budget 0.05 --requests "$REQ" --seed 1 > "$OUT/load.json"

# 2b. issue 7: the sweep (one JSON line per cell, then a summary line) and the Pegasus claim
# (b = 0.001, the delay at p99.9, on heavy tails, 2,000,000 requests per cell)
java -jar "$SIM" sweep --seed 1 "${SWEEP[@]}" > "$OUT/sweep.jsonl"
# the same grid with half the primaries beaten by a hedge left to finish (HedgeConfig.loserSampling)
java -jar "$SIM" sweep --seed 1 "${SWEEP[@]}" --loser-sampling 0.5 > "$OUT/sweep-loser-sampling.jsonl"
java -jar "$SIM" sweep --seed 1 --budgets 0.001 --large-requests "$PEGASUS" \
  --dists 'pareto:1.5,1;pareto:2,1;lognormal:0,2;weibull:0.4,1;mixture:0.03,0,0.4,2.5,0.8' > "$OUT/pegasus.jsonl"

# 3. real-time timers
java -jar "$SIM" timers --samples "$SAMPLES" --calls "$CALLS" > "$OUT/timers.json"

hedge-benchmarks/summarize.sh "$OUT"
