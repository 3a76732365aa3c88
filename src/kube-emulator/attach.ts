/**
 * pods/attach: the channel protocols of exec (exec.ts) joined to a running container's process.
 * What the container prints from now on arrives on stdout: the synthetic server log, or a Job
 * command's output until it ends (then a Success status); stdin is taken and dropped, as a server
 * that does not read it would. The stream also ends when the pod goes.
 */
import type { KubeObject } from '../kube'
import type { ContainerOutputs } from './container-output'
import { type Program, StreamSession, streamRequest } from './exec'
import { followIntervalMs, type LogClock, lineSourceOf } from './logs'
import { sleep } from './shell'

export interface AttachEnvironment {
  clock: LogClock
  outputs: ContainerOutputs
  /** False once the pod is gone (deleted, or replaced by one of the same name). */
  podExists(): boolean
  startDelayMs: number
}

/** Validates an attach request before the upgrade (the kubelet's 400s) and prepares its session. */
export function prepareAttach(
  pod: KubeObject,
  q: URLSearchParams,
  offered: string[],
  env: AttachEnvironment,
): { session: StreamSession; protocol: string } {
  const { tty, streams, container, protocol } = streamRequest(pod, q, offered)
  const source = lineSourceOf(pod, container, env.clock, env.outputs)
  const program: Program = async (io) => {
    void drain(io.stdin)
    if (!source) return 0
    let next = source.written()
    while (!io.signal.aborted && env.podExists()) {
      for (const upTo = source.written(); next < upTo; next++) io.out(`${source.line(next).text}\n`)
      if (source.done()) break
      await sleep(followIntervalMs(source, env.clock), io.signal)
    }
    return 0
  }
  const session = new StreamSession({ protocol, streams, tty, startDelayMs: env.startDelayMs, program, command: [] })
  return { session, protocol }
}

/** Reads stdin to its end so nothing sent there piles up. */
async function drain(stdin: { read(): Promise<Uint8Array | null> }): Promise<void> {
  while (await stdin.read()) {}
}
