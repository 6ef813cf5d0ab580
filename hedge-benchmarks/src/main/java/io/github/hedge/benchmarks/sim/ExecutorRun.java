package io.github.hedge.benchmarks.sim;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;

/**
 * Runs every request of a {@link Workload} through a real {@link HedgedExecutor} on its own
 * {@link VirtualTimeScheduler} (the executor's scheduler and ticker), against a {@link Backend}
 * that answers each attempt in virtual time. Requests start at their arrival instants; the
 * latency of each call is the virtual time from its start to the completion of its future.
 */
public final class ExecutorRun {
    /** Answers attempts in virtual time. */
    public interface Backend {
        /**
         * Starts one attempt: picks a replica, reports it, and returns a future completed later
         * by a task on {@code clock}; registers with {@code ctx.onCancel} what undoes the attempt.
         *
         * @param request the request index in the workload
         * @param ctx the attempt
         * @param clock the virtual clock and scheduler
         * @return the attempt's future
         */
        CompletableFuture<Object> start(int request, AttemptContext ctx, VirtualTimeScheduler clock);
    }

    /** The outcome of one run. */
    public static final class Result {
        /** call latency per request in ms (NaN for a call that failed) */
        public final double[] latencyMs;
        /** the executor's counters at the end */
        public final HedgeStats stats;
        /** failed calls */
        public final int failures;
        /** virtual time when the last call ended, in ns */
        public final long endNanos;

        Result(double[] latencyMs, HedgeStats stats, int failures, long endNanos) {
            this.latencyMs = latencyMs;
            this.stats = stats;
            this.failures = failures;
            this.endNanos = endNanos;
        }

        /** @return extra attempts per primary call */
        public double extraLoad() {
            return stats.calls() == 0 ? 0 : (double) stats.hedgesSent() / stats.calls();
        }

        /**
         * @return percentiles of the calls that succeeded
         */
        public Percentiles percentiles() {
            double[] ok = new double[latencyMs.length];
            int n = 0;
            for (double v : latencyMs) {
                if (!Double.isNaN(v)) {
                    ok[n++] = v;
                }
            }
            return new Percentiles(ok, n);
        }
    }

    private ExecutorRun() {}

    /**
     * @param name the executor's name
     * @param config the configuration, to which the run adds the virtual scheduler and ticker and
     *     idempotent-by-default
     * @param workload the requests
     * @param backend answers attempts
     * @param clock a fresh virtual scheduler for this run
     * @param tick called with the virtual time before each request starts (for sampling); may be
     *     null
     * @return the result
     */
    public static Result run(
            String name,
            HedgeConfig.Builder config,
            Workload workload,
            Backend backend,
            VirtualTimeScheduler clock,
            LongConsumer tick) {
        return run(executor(name, config, clock), workload, backend, clock, tick);
    }

    /**
     * @param name the executor's name
     * @param config the configuration, to which this adds {@code clock} as scheduler and ticker and
     *     idempotent-by-default
     * @param clock a fresh virtual scheduler
     * @return an executor for {@link #run(HedgedExecutor, Workload, Backend, VirtualTimeScheduler,
     *     LongConsumer)}
     */
    public static HedgedExecutor executor(String name, HedgeConfig.Builder config, VirtualTimeScheduler clock) {
        return HedgedExecutor.of(
                name,
                config.ticker(clock).scheduler(clock).idempotentByDefault(true).build());
    }

    /**
     * @param executor an executor whose scheduler and ticker are {@code clock}
     * @param workload the requests
     * @param backend answers attempts
     * @param clock the executor's virtual scheduler
     * @param tick called with the virtual time before each request starts; may be null
     * @return the result
     */
    public static Result run(
            HedgedExecutor executor,
            Workload workload,
            Backend backend,
            VirtualTimeScheduler clock,
            LongConsumer tick) {
        int n = workload.requests();
        double[] latency = new double[n];
        int[] failures = new int[1];
        long[] end = new long[1];
        for (int i = 0; i < n; i++) {
            long t0 = workload.arrivalNanos(i);
            clock.advanceTo(t0);
            if (tick != null) {
                tick.accept(t0);
            }
            final int req = i;
            executor.executeAsync(CallOptions.idempotent(), ctx -> backend.start(req, ctx, clock))
                    .whenComplete((v, e) -> {
                        long now = clock.nanoTime();
                        end[0] = Math.max(end[0], now);
                        if (e != null) {
                            latency[req] = Double.NaN;
                            failures[0]++;
                        } else {
                            latency[req] = (now - t0) / 1e6;
                        }
                    });
        }
        clock.runUntilIdle();
        return new Result(latency, executor.stats(), failures[0], end[0]);
    }

    /**
     * A backend whose replicas answer each attempt after its drawn latency times a slowdown
     * factor; cancellation removes the pending completion.
     *
     * @param workload the draws
     * @param slowdown the factor of a replica at a virtual instant (1 = healthy)
     * @return the backend
     */
    public static Backend delayed(Workload workload, Slowdown slowdown) {
        return delayed(workload, slowdown, new AttemptTime());
    }

    /**
     * {@link #delayed(Workload, Slowdown)} that also adds up how long the replicas spent on
     * attempts: an attempt that answers counts its whole latency, a cancelled one the time until
     * it was cancelled.
     *
     * @param workload the draws
     * @param slowdown the factor of a replica at a virtual instant (1 = healthy)
     * @param time where the attempts' time is added
     * @return the backend
     */
    public static Backend delayed(Workload workload, Slowdown slowdown, AttemptTime time) {
        return timed(
                workload, (k, req, replica, now) -> workload.latencyMs(k, req) * slowdown.factor(replica, now), time);
    }

    /**
     * A backend whose replicas answer each attempt after the latency {@code latency} gives it: the
     * attempt picks its replica with {@link Workload#replicaFor} (a hedge goes to a replica not
     * tried yet), reports it, and completes after that many ms of virtual time; cancellation
     * removes the pending completion. {@link #delayed} is this backend with the workload's draw
     * times a slowdown.
     *
     * @param workload the arrivals and replica choices
     * @param latency the latency of an attempt on a replica
     * @param time where the attempts' time is added (see {@link #delayed(Workload, Slowdown, AttemptTime)})
     * @return the backend
     */
    public static Backend timed(Workload workload, AttemptLatency latency, AttemptTime time) {
        return (req, ctx, clock) -> {
            int k = ctx.attemptNumber();
            int replica = workload.replicaFor(k, req, ctx.triedTargets());
            ctx.reportTarget(Workload.NAMES[replica]);
            long now = clock.nanoTime();
            double ms = latency.ms(k, req, replica, now);
            CompletableFuture<Object> cf = new CompletableFuture<>();
            var task = clock.schedule(
                    () -> {
                        time.add(ms);
                        cf.complete(Boolean.TRUE);
                    },
                    Workload.nanos(ms));
            ctx.onCancel(() -> {
                if (task.cancel()) {
                    time.add((clock.nanoTime() - now) / 1e6);
                }
            });
            return cf;
        };
    }

    /** The latency of one attempt on one replica, for {@link #timed}. */
    @FunctionalInterface
    public interface AttemptLatency {
        /**
         * @param attempt the attempt number, 1 for the primary
         * @param request the request index in the workload
         * @param replica the replica index the attempt went to
         * @param nowNanos the virtual instant the attempt starts
         * @return its latency in ms, {@code >= 0}
         */
        double ms(int attempt, int request, int replica, long nowNanos);
    }

    /**
     * The replicas' busy time summed over attempts, in ms: a proxy for the work hedging makes
     * the servers do when latency is service time. Single-threaded, like the virtual clock.
     */
    public static final class AttemptTime {
        private double ms;

        void add(double attemptMs) {
            ms += attemptMs;
        }

        /** @return the sum so far, in ms */
        public double ms() {
            return ms;
        }
    }

    /** How much slower a replica is at an instant. */
    @FunctionalInterface
    public interface Slowdown {
        /** Every replica healthy. */
        Slowdown NONE = (r, t) -> 1.0;

        /**
         * @param replica the replica index
         * @param nowNanos the virtual instant the attempt starts
         * @return the latency factor
         */
        double factor(int replica, long nowNanos);
    }
}
