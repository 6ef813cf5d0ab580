package io.github.hedge.core.internal;

import java.lang.reflect.Method;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The default executor of sync-form attempts: a virtual thread per attempt when the JDK has them
 * (21+), else a shared cached pool of daemon threads that die after 60 s idle. Internal.
 */
public final class AttemptExecutors {
    private AttemptExecutors() {}

    private static final class Holder {
        static final Executor DEFAULT = create();
    }

    /** @return the process-wide default attempt executor */
    public static Executor defaultExecutor() {
        return Holder.DEFAULT;
    }

    private static Executor create() {
        try {
            Method m = java.util.concurrent.Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
            return (ExecutorService) m.invoke(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            AtomicInteger n = new AtomicInteger();
            return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "hedge-attempt-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }
    }
}
