/** What a built-in command of the emulated containers runs with: its streams, environment and filesystem. */
import type { ContainerFs } from './filesystem'

export interface Io {
  stdin: { read(): Promise<Uint8Array | null>; readLine(): Promise<string | null> }
  /** Text, or bytes as they are (an archive on stdout). */
  out(data: string | Uint8Array): void
  err(text: string): void
  env: Record<string, string>
  signal: AbortSignal
  tty: boolean
  hostname: string
  size(): { width: number; height: number }
  /** The container's filesystem. */
  fs: ContainerFs
  /** The address of the Service `host` names (`svc`, `svc.ns`, `svc.ns.svc.cluster.local`) when it serves `port` with ready endpoints. */
  lookupService?(host: string, port: number): string | undefined
}

/** A command: its arguments (without its name) and streams in, its exit code out. */
export type Builtin = (args: string[], io: Io) => Promise<number>

/** Everything `read()` yields until the end of input, or undefined once it passes `limit` bytes. */
export async function readAll(stdin: Io['stdin'], limit: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = []
  let size = 0
  for (let chunk = await stdin.read(); chunk; chunk = await stdin.read()) {
    size += chunk.length
    if (size > limit) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}
