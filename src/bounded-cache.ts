/**
 * A map bounded by the bytes its values hold, as the caller weighs them: past the bound the least
 * recently used entries go first. For caches an outsider can fill (charts any signed-in user
 * names), where counting entries bounds nothing.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>()
  private held = 0

  constructor(readonly maxBytes: number) {}

  /** The bytes held now; never above maxBytes. */
  get bytes(): number {
    return this.held
  }

  get size(): number {
    return this.entries.size
  }

  /** The value under `key`, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  /** Keeps `value` as `bytes` large, dropping the least recently used to stay in bounds; a value larger than the bound is not kept. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key)
    if (bytes > this.maxBytes) return
    this.entries.set(key, { value, bytes })
    this.held += bytes
    for (const [oldest, entry] of this.entries) {
      if (this.held <= this.maxBytes) break
      this.entries.delete(oldest)
      this.held -= entry.bytes
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key)
    if (!entry) return
    this.entries.delete(key)
    this.held -= entry.bytes
  }
}
