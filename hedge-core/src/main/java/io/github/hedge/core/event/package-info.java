/**
 * Typed, past-tense events of hedged calls ({@link io.github.hedge.core.event.HedgeSent},
 * {@link io.github.hedge.core.event.HedgeWon}, {@link io.github.hedge.core.event.CallCompleted}...)
 * and {@link io.github.hedge.core.event.HedgeEvents}, where listeners subscribe with a handle that
 * unsubscribes. Events never carry request payloads.
 */
package io.github.hedge.core.event;
