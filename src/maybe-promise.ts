/**
 * A value that is ready now or later. Hot paths return one so that a step known at once (a cached sign-in, a
 * cached body) costs no promise and no turn of the microtask queue; under load a chain of awaits on one
 * request measured more than the work it waited for (docs/benchmarks.md).
 */
export type MaybePromise<T> = T | Promise<T>

/** `next(value)` at once when `value` is ready, else once it is; a throw from `next` stays a throw (or a rejection). */
export function andThen<T, U>(value: MaybePromise<T>, next: (ready: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value)
}
