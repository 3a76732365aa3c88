import { createHash } from 'node:crypto'
import { BoundedCache } from '../../bounded-cache'
import { type Rendered, readTemplateOutput } from './output'

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

/**
 * A render weighs this many times the bytes of Helm's output: the documents' text (measured 2.3×)
 * and, once a route asked for them, their parsed objects (3.1× more), rounded up.
 */
const RENDER_WEIGHT = 6

/** Renders kept in memory up to a bound in bytes, least recently used dropped first; concurrent misses of one key share one Helm run. */
export class RenderCache {
  private readonly pending = new Map<string, Promise<Rendered>>()
  readonly done: BoundedCache<Rendered>

  constructor(maxBytes: number) {
    this.done = new BoundedCache(maxBytes)
  }

  /** The render of `key`, from the cache or from `helm` (Helm's output). A failed render is not kept: the next request tries again. */
  get(key: string, helm: () => Promise<string>): Promise<Rendered> {
    const hit = this.done.get(key)
    if (hit) return Promise.resolve(hit)
    const running = this.pending.get(key)
    if (running) return running
    const render = (async () => {
      const output = await helm()
      const rendered = readTemplateOutput(output)
      this.done.set(key, rendered, output.length * RENDER_WEIGHT)
      return rendered
    })()
    this.pending.set(key, render)
    render.then(
      () => this.pending.delete(key),
      () => this.pending.delete(key),
    )
    return render
  }
}
