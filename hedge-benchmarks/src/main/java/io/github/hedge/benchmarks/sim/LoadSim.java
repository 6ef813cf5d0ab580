package io.github.hedge.benchmarks.sim;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * The {@code load} scenario: each of three replicas is a FIFO queue in front of {@code servers}
 * servers; an attempt's service time is its draw from the distribution, its latency is queueing
 * plus service. Hedges add real work. Cancelling an attempt removes it from its queue, or stops its
 * service and frees the server. The arrival rate sets the utilization of the unhedged system,
 * {@code rate * E[S] / (3 * servers)}. For each utilization, unhedged ({@code maxAttempts(1)}) and
 * hedged ({@code maxExtraLoad(b)}) run on the same draws.
 */
public final class LoadSim {
    /** Settings of one run. */
    public static final class Config {
        final Distribution dist;
        final double budget;
        final int requests;
        final long seed;
        final int servers;
        final double[] utilizations;
        final double loserSampling;

        /**
         * @param dist service-time distribution
         * @param budget b
         * @param requests requests per utilization
         * @param seed the seed
         * @param servers servers per replica
         * @param utilizations the utilizations to run
         * @param loserSampling the hedged variant's {@code HedgeConfig.loserSampling}, in [0, 1]: a
         *     beaten primary left running keeps its server busy and the queue behind it waiting
         */
        public Config(
                Distribution dist,
                double budget,
                int requests,
                long seed,
                int servers,
                double[] utilizations,
                double loserSampling) {
            this.loserSampling = loserSampling;
            this.dist = dist;
            this.budget = budget;
            this.requests = requests;
            this.seed = seed;
            this.servers = servers;
            this.utilizations = utilizations.clone();
        }
    }

    private LoadSim() {}

    /** One attempt's work at a replica. */
    private static final class Job {
        final long serviceNanos;
        final CompletableFuture<Object> future = new CompletableFuture<>();
        long startedNanos = -1;
        ScheduledTask completion;
        boolean finished;

        Job(long serviceNanos) {
            this.serviceNanos = serviceNanos;
        }
    }

    /** A replica: FIFO queue, {@code servers} servers. Virtual time is single-threaded. */
    private static final class Replica {
        final int servers;
        final VirtualTimeScheduler clock;
        final ArrayDeque<Job> queue = new ArrayDeque<>();
        int busy;
        long busyNanos;
        long wastedNanos;
        long cancelledQueued;
        long cancelledInService;

        Replica(int servers, VirtualTimeScheduler clock) {
            this.servers = servers;
            this.clock = clock;
        }

        Job submit(long serviceNanos) {
            Job job = new Job(serviceNanos);
            if (busy < servers) {
                begin(job);
            } else {
                queue.addLast(job);
            }
            return job;
        }

        private void begin(Job job) {
            busy++;
            job.startedNanos = clock.nanoTime();
            job.completion = clock.schedule(() -> complete(job), job.serviceNanos);
        }

        private void complete(Job job) {
            job.finished = true;
            busy--;
            busyNanos += job.serviceNanos;
            next();
            job.future.complete(Boolean.TRUE);
        }

        void cancel(Job job) {
            if (job.finished) {
                return;
            }
            job.finished = true;
            if (job.startedNanos < 0) {
                queue.remove(job);
                cancelledQueued++;
                return;
            }
            job.completion.cancel();
            long used = clock.nanoTime() - job.startedNanos;
            busyNanos += used;
            wastedNanos += used;
            cancelledInService++;
            busy--;
            next();
        }

        private void next() {
            while (busy < servers && !queue.isEmpty()) {
                begin(queue.pollFirst());
            }
        }
    }

    /**
     * @param c the settings
     * @return the result as one line of JSON
     */
    public static String run(Config c) {
        double meanMs = c.dist.meanMs();
        if (!Double.isFinite(meanMs) || meanMs <= 0) {
            throw new UsageException(
                    "load needs a distribution with a finite positive mean; " + c.dist.spec() + " has none");
        }
        Json j = new Json().beginObject();
        j.field("scenario", "load")
                .field("dist", c.dist.spec())
                .field("budget", c.budget)
                .field("seed", c.seed)
                .field("loser_sampling", c.loserSampling)
                .field("requests", c.requests)
                .field("replicas", Workload.REPLICAS)
                .field("servers_per_replica", c.servers)
                .field("mean_service_ms", Percentiles.round(meanMs));
        j.beginArray("utilizations");
        for (double rho : c.utilizations) {
            double rate = rho * Workload.REPLICAS * c.servers / (meanMs / 1000.0);
            Workload w = new Workload(c.dist, c.requests, rate, 2, c.seed);
            Outcome un = runOne("sim-load-unhedged", HedgeConfig.builder().maxAttempts(1), w, c.servers);
            Outcome he = runOne(
                    "sim-load-hedged",
                    HedgeConfig.builder().maxExtraLoad(c.budget).loserSampling(c.loserSampling),
                    w,
                    c.servers);
            double unP999 = un.run.percentiles().at(0.999);
            double heP999 = he.run.percentiles().at(0.999);
            HedgeSim.log(String.format(
                    "load rho %.2f: unhedged p999 %.3f ms, hedged p999 %.3f ms, extra %.4f",
                    rho, unP999, heP999, he.run.extraLoad()));
            j.beginObject()
                    .field("utilization", rho)
                    .field("rate_per_s", Percentiles.round(rate))
                    .field("p999_hedged_over_unhedged", Percentiles.round(heP999 / unP999));
            un.write(j, "unhedged", w);
            he.write(j, "hedged", w);
            j.endObject();
        }
        j.endArray();
        return j.endObject().toString();
    }

    private static final class Outcome {
        final ExecutorRun.Result run;
        final Replica[] replicas;

        Outcome(ExecutorRun.Result run, Replica[] replicas) {
            this.run = run;
            this.replicas = replicas;
        }

        void write(Json j, String name, Workload w) {
            long busy = 0;
            long wasted = 0;
            long cq = 0;
            long cs = 0;
            for (Replica r : replicas) {
                busy += r.busyNanos;
                wasted += r.wastedNanos;
                cq += r.cancelledQueued;
                cs += r.cancelledInService;
            }
            double spanNanos = Math.max(1, run.endNanos);
            int ok = run.latencyMs.length - run.failures;
            j.beginObject(name);
            run.percentiles().writeTo(j);
            j.field("extra_load", Percentiles.round5(run.extraLoad()))
                    .field("goodput_per_s", Percentiles.round(ok / (spanNanos / 1e9)))
                    .field("completed", ok)
                    .field("failed", run.failures)
                    .field(
                            "measured_utilization",
                            Percentiles.round(busy / (spanNanos * replicas.length * replicas[0].servers)))
                    .field("wasted_work_share", Percentiles.round(busy == 0 ? 0 : (double) wasted / busy))
                    .field("cancelled_in_queue", cq)
                    .field("cancelled_in_service", cs);
            j.endObject();
        }
    }

    private static Outcome runOne(String name, HedgeConfig.Builder config, Workload w, int servers) {
        VirtualTimeScheduler clock = new VirtualTimeScheduler();
        Replica[] replicas = new Replica[Workload.REPLICAS];
        for (int r = 0; r < replicas.length; r++) {
            replicas[r] = new Replica(servers, clock);
        }
        ExecutorRun.Backend backend = (int req, AttemptContext ctx, VirtualTimeScheduler vts) -> {
            int k = ctx.attemptNumber();
            int r = w.replicaFor(k, req, ctx.triedTargets());
            ctx.reportTarget(Workload.NAMES[r]);
            Replica replica = replicas[r];
            Job job = replica.submit(Workload.nanos(w.latencyMs(k, req)));
            ctx.onCancel(() -> replica.cancel(job));
            return job.future;
        };
        ExecutorRun.Result result = ExecutorRun.run(name, config, w, backend, clock, null);
        return new Outcome(result, replicas);
    }
}
