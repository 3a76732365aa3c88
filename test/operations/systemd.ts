import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../support/app'

/** Debian's `systemd-analyze verify` on `unit` as `name` (platform-api.service): its exit code and everything it printed (warnings included). */
export function verifyUnit(unit: string, name = 'platform-api.service'): { code: number; output: string } {
  const file = join(tempDir('platform-unit-'), name)
  writeFileSync(file, unit)
  const run = Bun.spawnSync(['systemd-analyze', 'verify', file], { stdout: 'pipe', stderr: 'pipe' })
  return { code: run.exitCode, output: run.stdout.toString() + run.stderr.toString() }
}
