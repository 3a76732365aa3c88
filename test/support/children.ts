import { afterAll } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'

/**
 * Every process a test starts ends with the test run (docs/development.md). Two traps made them
 * outlive it: Bun registers an `afterAll` written at the top of a shared module for the first test
 * file that imports the module only (later files' servers were never stopped), and Bun fires no
 * `exit` hook, so nothing runs once the runner is done. So a helper that starts a process stops it
 * where it was started (`stopWithScope`: after the test that started it, or after its file), and
 * the preload (test/support/preload.ts) ends whatever is still running when every file has run.
 */

export interface ProcessInfo {
  pid: number
  command: string
}

/** Stops `child` (SIGTERM, SIGKILL after `graceMs`) and waits until it is gone. */
export async function stopChild(child: Bun.Subprocess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await child.exited
  clearTimeout(timer)
}

/**
 * Stops `child` after the test that started it, or after its file when it was started while the
 * file loaded: where the helper was called, not where it was written. Not from a `beforeAll`: Bun
 * runs an `afterAll` registered there as soon as the `beforeAll` ends, so a process started there
 * is stopped by its caller's own `afterAll` (the preload still ends it if that fails).
 */
export function stopWithScope<T extends Bun.Subprocess>(child: T): T {
  afterAll(() => stopChild(child))
  return child
}

const readProc = (pid: string, file: string): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8')
  } catch {
    return undefined // gone meanwhile, or not ours to read
  }
}

const commandOf = (pid: string): string => (readProc(pid, 'cmdline') ?? '').split('\0').filter(Boolean).join(' ')

/** Every live process of the machine as `[pid, parent pid]` (zombies are gone already, only unreaped). */
function processTable(): [string, string][] {
  const table: [string, string][] = []
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    // The command may hold spaces and parentheses: the fields after its closing parenthesis are fixed.
    const stat = readProc(pid, 'stat')
    const [state, parent] = stat?.slice(stat.lastIndexOf(')') + 2).split(' ') ?? []
    if (parent && state !== 'Z') table.push([pid, parent])
  }
  return table
}

/** The processes below `pid` (children, theirs, ...), with their command lines. */
export function descendantsOf(pid: number): ProcessInfo[] {
  const table = processTable()
  const found: ProcessInfo[] = []
  const parents = new Set([String(pid)])
  for (let grew = true; grew; ) {
    grew = false
    for (const [child, parent] of table)
      if (parents.has(parent) && !parents.has(child)) {
        parents.add(child)
        found.push({ pid: Number(child), command: commandOf(child) })
        grew = true
      }
  }
  return found
}

/**
 * The processes whose environment (as they were started) holds `name=value`: what a run started,
 * however deep, even after its parent died and it was handed to init. `.ci/run` marks a test run
 * this way and lists what is left of it.
 */
export function processesMarked(name: string, value: string): ProcessInfo[] {
  const entry = `${name}=${value}`
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid) && Number(pid) !== process.pid)
    .filter((pid) => (readProc(pid, 'environ') ?? '').split('\0').includes(entry))
    .map((pid) => ({ pid: Number(pid), command: commandOf(pid) }))
}

/** Kills `processes` at once (SIGKILL): the end of the run is no time for a grace period. */
export function killAll(processes: ProcessInfo[]): void {
  for (const { pid } of processes) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}
