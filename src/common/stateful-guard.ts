/** What the seed-parity classes with a state share: their state as plain JSON, and starting over. */

/**
 * A guard class whose memory is one plain, serialisable state: `toJSON()` gives it (rebuild with the class's own
 * `static fromJSON`, passing the options again: they may hold functions and RegExps), `reset()` starts over.
 *
 * @example
 * ```ts
 * const guard = new SafetyGuard({ maxIterations: 30 });
 * const copy = SafetyGuard.fromJSON(JSON.parse(JSON.stringify(guard.toJSON())), { maxIterations: 30 });
 * guard.reset();
 * ```
 */
export abstract class StatefulGuard<S> {
  /** The guard's state (plain JSON). */
  protected state: S;
  readonly #fresh: () => S;

  protected constructor(state: S, fresh: () => S) {
    this.state = state;
    this.#fresh = fresh;
  }

  /** Starts over: forgets everything the guard has seen (outputs, counters, strikes, …); its options stay. */
  reset(): void {
    this.state = this.#fresh();
  }

  /** The guard's state as plain JSON (a deep copy): `JSON.stringify(guard.toJSON())`. */
  toJSON(): {
    /** The guard's state. */
    state: S;
  } {
    return { state: structuredClone(this.state) };
  }
}
