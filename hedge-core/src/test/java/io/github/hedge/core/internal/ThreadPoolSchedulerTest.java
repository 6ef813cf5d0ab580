package io.github.hedge.core.internal;

import io.github.hedge.core.spi.ClosableHedgeScheduler;

class ThreadPoolSchedulerTest extends HedgeSchedulerContract {
    @Override
    ClosableHedgeScheduler create() {
        return new ThreadPoolScheduler();
    }
}
