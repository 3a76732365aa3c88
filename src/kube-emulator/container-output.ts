/**
 * What the commands of run-to-completion pods (a Job's) print, kept per container so `kubectl logs`
 * shows it: timestamped lines, capped in size, dropped when the pod goes.
 */

/** Output beyond this many characters per container is dropped, as a rotated log would be. */
const MAX_CHARS = 256 * 1024

export interface LogLine {
  time: number
  text: string
}

interface Output {
  lines: LogLine[]
  partial: string
  chars: number
  done: boolean
}

export class ContainerOutputs {
  private readonly byContainer = new Map<string, Output>()

  private key = (uid: string, container: string) => `${uid}/${container}`

  start(uid: string, container: string): void {
    this.byContainer.set(this.key(uid, container), { lines: [], partial: '', chars: 0, done: false })
  }

  write(uid: string, container: string, text: string): void {
    const out = this.byContainer.get(this.key(uid, container))
    if (!out || out.done || out.chars >= MAX_CHARS) return
    const kept = text.slice(0, MAX_CHARS - out.chars)
    out.chars += kept.length
    const parts = (out.partial + kept).split('\n')
    out.partial = parts.pop() ?? ''
    for (const text of parts) out.lines.push({ time: Date.now(), text })
  }

  finish(uid: string, container: string): void {
    const out = this.byContainer.get(this.key(uid, container))
    if (!out) return
    if (out.partial) out.lines.push({ time: Date.now(), text: out.partial })
    out.partial = ''
    out.done = true
  }

  /** The container's lines so far and whether it has ended; undefined for containers that run forever (synthetic logs). */
  read(uid: string, container: string): { lines: readonly LogLine[]; done: boolean } | undefined {
    return this.byContainer.get(this.key(uid, container))
  }

  forget(uid: string): void {
    for (const key of this.byContainer.keys()) if (key.startsWith(`${uid}/`)) this.byContainer.delete(key)
  }
}
