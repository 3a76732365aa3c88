import { createHash } from 'node:crypto'
import type { Rendered } from './output'

/** What decides a render's output; equal keys render equal bytes, so Helm runs once per key. */
export interface RenderKey {
  digest: string
  valuesJson: string | undefined
  release: string
  namespace: string
  kubeVersion: string
}

export function renderKeyOf(key: RenderKey): string {
  const valuesHash = createHash('sha256')
    .update(key.valuesJson ?? '')
    .digest('hex')
  return JSON.stringify([key.digest, key.valuesJson === undefined ? '' : valuesHash, key.release, key.namespace, key.kubeVersion])
}

/** Renders kept in memory, least recently used dropped first; concurrent misses of one key share one Helm run. */
export class RenderCache {
  private readonly entries = new Map<string, Promise<Rendered>>()

  constructor(private readonly capacity: number) {}

  get(key: string, render: () => Promise<Rendered>): Promise<Rendered> {
    const hit = this.entries.get(key)
    if (hit) {
      this.entries.delete(key)
      this.entries.set(key, hit)
      return hit
    }
    const pending = render()
    this.entries.set(key, pending)
    // A failed render is not kept: the next request tries again (a registry may be back).
    pending.catch(() => {
      if (this.entries.get(key) === pending) this.entries.delete(key)
    })
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!)
    return pending
  }
}
