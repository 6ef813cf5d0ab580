package io.github.hedge.core.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/** Records every observation's context on start and which were stopped. Thread-safe. */
final class RecordingHandler implements ObservationHandler<Observation.Context> {
    final Queue<Observation.Context> started = new ConcurrentLinkedQueue<>();
    final Set<Observation.Context> stopped = ConcurrentHashMap.newKeySet();
    final Map<Observation.Context, Observation.Context> scopeOpenedWithParent = new ConcurrentHashMap<>();

    @Override
    public void onStart(Observation.Context context) {
        started.add(context);
    }

    @Override
    public void onStop(Observation.Context context) {
        stopped.add(context);
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
        return true;
    }

    List<Observation.Context> named(String name) {
        return started.stream().filter(c -> name.equals(c.getName())).toList();
    }

    List<Observation.Context> open() {
        return started.stream().filter(c -> !stopped.contains(c)).toList();
    }

    static String key(Observation.Context c, String key) {
        var kv = c.getLowCardinalityKeyValue(key);
        return kv == null ? null : kv.getValue();
    }
}
