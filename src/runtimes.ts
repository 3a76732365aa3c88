/**
 * A piece of state an area keeps for the life of one app: connection pools, caches, links to
 * outside systems. Each is declared once as a slot (`runtimeSlot` in deps.ts) and reached through
 * `deps.runtimes.of(slot)`, the one way to hold per-app state: one instance per app (tests build
 * many apps in one process), made on first use, closed with the app (`closeDeps`). State that two
 * processes must agree on does not belong here but in the database.
 */
export interface RuntimeSlot<T, Owner> {
  readonly name: string
  readonly create: (owner: Owner) => T
  /** Releases what the instance holds (sockets, timers, child processes); errors are reported, not thrown. */
  readonly close?: (value: T) => Promise<void> | void
}

/** The runtimes of one app, in the order they were made. */
export class Runtimes<Owner> {
  readonly #made = new Map<object, { name: string; value: unknown; close: () => Promise<void> | void }>()

  constructor(
    private readonly owner: () => Owner,
    private readonly closeFailed: (name: string, error: unknown) => void,
  ) {}

  /** The app's instance of `slot`, made on first use. */
  of<T>(slot: RuntimeSlot<T, Owner>): T {
    const found = this.#made.get(slot)
    if (found) return found.value as T
    const value = slot.create(this.owner())
    this.#made.set(slot, { name: slot.name, value, close: () => slot.close?.(value) })
    return value
  }

  /** Closes every instance, last made first; a slot used again afterwards gets a new instance. */
  async close(): Promise<void> {
    const made = [...this.#made.values()].reverse()
    this.#made.clear()
    for (const { name, close } of made) {
      try {
        await close()
      } catch (error) {
        this.closeFailed(name, error)
      }
    }
  }
}
