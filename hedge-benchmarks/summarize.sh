#!/usr/bin/env bash
# Prints the ratios docs/benchmarks.md quotes, from the raw results run-all.sh wrote.
#   hedge-benchmarks/summarize.sh [hedge-benchmarks/results]
set -euo pipefail
OUT=${1:-hedge-benchmarks/results}
score() { # file benchmark-suffix [secondary] -> ns/op or bytes/op
  jq -r --arg b "$2" --arg s "${3:-}" '.[] | select(.benchmark | endswith("." + $b))
    | if $s == "" then .primaryMetric.score else .secondaryMetrics[$s].score end' "$1"
}
for t in 1 2; do
  f="$OUT/jmh-overhead-t$t.json"
  [[ -f $f ]] || continue
  echo "== JMH overhead, $t thread(s) (ns/op, bytes/op)"
  for b in directSync hedgedSync directAsync hedgedAsync stpeScheduleCancel sharedSchedulerScheduleCancel; do
    printf '  %-30s %10.1f ns %8.1f B\n' "$b" "$(score "$f" "$b")" "$(score "$f" "$b" gc.alloc.rate.norm)"
  done
  jq -rn --argjson ds "$(score "$f" directSync)" --argjson hs "$(score "$f" hedgedSync)" \
        --argjson da "$(score "$f" directAsync)" --argjson ha "$(score "$f" hedgedAsync)" \
        --argjson st "$(score "$f" stpeScheduleCancel)" \
        --argjson dsb "$(score "$f" directSync gc.alloc.rate.norm)" --argjson hsb "$(score "$f" hedgedSync gc.alloc.rate.norm)" \
        --argjson dab "$(score "$f" directAsync gc.alloc.rate.norm)" --argjson hab "$(score "$f" hedgedAsync gc.alloc.rate.norm)" \
    '"  throughput ratio hedged/direct: sync \($ds/$hs*1000|round/1000), async \($da/$ha*1000|round/1000) (target >= 0.50)",
     "  added cost / STPE schedule+cancel: sync \(($hs-$ds)/$st*1000|round/1000), async \(($ha-$da)/$st*1000|round/1000) (target <= 1.5)",
     "  extra bytes/call: sync \($hsb-$dsb|round), async \($hab-$dab|round) (target <= 64)"'
done
f="$OUT/jmh-tracker.json"
if [[ -f $f ]]; then
  echo "== JMH tracker record, 2 threads (ns/op)"
  for b in trackerRecord trackerRecordTarget recorderRecord; do
    printf '  %-30s %10.2f ns %8.1f B\n' "$b" "$(score "$f" "$b")" "$(score "$f" "$b" gc.alloc.rate.norm)"
  done
  jq -rn --argjson t "$(score "$f" trackerRecord)" --argjson tt "$(score "$f" trackerRecordTarget)" --argjson r "$(score "$f" recorderRecord)" \
    '"  tracker/Recorder: \($t/$r*1000|round/1000), with target \($tt/$r*1000|round/1000) (target <= 0.33)"'
fi
for f in "$OUT"/tail-*.json; do
  [[ -f $f ]] || continue
  jq -r --arg f "$(basename "$f" .json)" '"== \($f): p999 unhedged \(.unhedged.p999) hedged \(.hedged.p999) fixed \(.fixed.p999) oracle \(.oracle.p999) ms;"
    + " hedged/unhedged \(.hedged.p999/.unhedged.p999*1000|round/1000), hedged/oracle \(.hedged.p999/.oracle.p999*1000|round/1000),"
    + " extra_load hedged \(.hedged.extra_load) fixed \(.fixed.extra_load)"' "$f"
done
[[ -f $OUT/shift.json ]] && jq -r '"== shift: delay_max/healthy_p95 \(.delay_max_over_healthy_p95) (max \(.delay_max_ms) ms vs \(.healthy_p95_ms) ms);"
  + " p999 during slowdown hedged \(.during_slowdown.hedged.p999) vs unhedged \(.during_slowdown.unhedged.p999) ms; extra_load \(.extra_load)"' "$OUT/shift.json"
[[ -f $OUT/load.json ]] && jq -r '.utilizations[] | "== load rho \(.utilization): p999 hedged \(.hedged.p999) vs unhedged \(.unhedged.p999) ms (ratio \(.p999_hedged_over_unhedged));"
  + " goodput \(.hedged.goodput_per_s) vs \(.unhedged.goodput_per_s)/s; extra_load \(.hedged.extra_load); wasted \(.hedged.wasted_work_share)"' "$OUT/load.json"
[[ -f $OUT/shift-5x.json ]] && jq -r '"== shift 5x: delay_max/healthy_p95 \(.delay_max_over_healthy_p95); extra load back within b+0.5pp after \(.extra_load_within_b_plus_half_pp_after_s) s"
  + " (max per second \(.max_extra_load_per_second_during_slowdown)); extra_load \(.extra_load)"' "$OUT/shift-5x.json"
[[ -f $OUT/closed-shift.json ]] && jq -r '"== closed-shift: \(.lanes) lanes, \(.factor)x: every 5 s average within b+0.5pp from second \(.back_within_b_plus_half_pp_5s_average_from_s);"
  + " extra load per second from the shift: \([.per_second[] | select(.t_s >= 0 and .t_s < 8) | .extra_load] | map(tostring) | join(" "))"' "$OUT/closed-shift.json"
for f in "$OUT/sweep.jsonl" "$OUT/sweep-loser-sampling.jsonl" "$OUT/pegasus.jsonl"; do
  [[ -f $f ]] || continue
  echo "== $(basename "$f"): dist b | p999 p9999 hedged/oracle | extra_load (limit) | denied/sent | est unhedged p99 p999 / true"
  jq -r 'select(.scenario == "sweep") | "  \(.dist) \(.budget) | \(.hedged_p999_over_oracle) \(.hedged_p9999_over_oracle)"
    + " | \(.hedged.extra_load) (\(.extra_load_limit)) | \(.hedged.budget_denied)/\(.hedged.hedges_sent)"
    + " | \(.estimated_unhedged.p99_over_true) \(.estimated_unhedged.p999_over_true)"' "$f"
  jq -c 'select(.scenario == "sweep-summary")' "$f"
done
[[ -f $OUT/timers.json ]] && jq -r '"== timers: lateness p99 \(.lateness.p99_ratio) x 5 ms (met \(.lateness.met));"
  + " after \(.schedule_cancel.calls) schedule+cancel: pending \(.schedule_cancel.pending_after), in flight \(.schedule_cancel.in_flight_after) (met \(.schedule_cancel.met))"' "$OUT/timers.json"
exit 0
