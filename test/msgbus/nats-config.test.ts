import { describe, expect, test } from 'bun:test'
import { tempDir } from '../support/app'
import { MAIN } from '../support/process'

const run = (args: string[], dataDir: string) =>
  Bun.spawnSync([process.execPath, MAIN, 'msgbus', ...args], { env: { ...process.env, PLATFORM_DATA_DIR: dataDir } })

describe('msgbus nats-config', () => {
  test('without --resolver-dir → exit 2 naming it; a bad port → exit 2', () => {
    const dir = tempDir()
    const missing = run(['nats-config'], dir)
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr.toString()).toContain('--resolver-dir')
    const badPort = run(['nats-config', '--resolver-dir', dir, '--port', 'x'], dir)
    expect(badPort.exitCode).toBe(2)
    expect(badPort.stderr.toString()).toContain('--port')
  })

  test('the printed configuration passes nats-server -t and keeps the same trust chain when printed again; no seed in it', async () => {
    const dir = tempDir()
    const first = run(['nats-config', '--resolver-dir', `${dir}/jwt`, '--websocket-port', '4223'], dir).stdout.toString()
    const second = run(['nats-config', '--resolver-dir', `${dir}/jwt`], dir).stdout.toString()
    const systemAccount = (text: string) => /^system_account: (A[A-Z0-9]+)$/m.exec(text)![1]
    expect(systemAccount(second)).toBe(systemAccount(first))
    expect(first).toContain('jwt_cookie: "msgbus_jwt"')
    expect(second).not.toContain('websocket')
    expect(first).toContain('type: full')
    expect(first).not.toMatch(/\bS[OAU][A-Z0-9]{50,}/)
    const file = `${dir}/nats.conf`
    await Bun.write(file, first)
    const check = Bun.spawnSync(['/usr/sbin/nats-server', '-c', file, '-t'])
    expect(check.exitCode).toBe(0)
  })

  test('unknown msgbus subcommand → exit 2', () => {
    expect(run(['nope'], tempDir()).exitCode).toBe(2)
  })
})
