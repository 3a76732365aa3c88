import { describe, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { INSTALLED_BINARY } from '../../src/cli/systemd'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { tempDir } from '../support/app'
import { cli, REPO } from './support'
import { verifyUnit } from './systemd'

/** The service setup docs/operations.md shows ("Service"): the unit the program prints and the nginx example. */

const OPERATIONS = readFileSync(join(REPO, 'docs', 'operations.md'), 'utf8')

/** The first fenced block of `language` after `marker` in docs/operations.md. */
function docsBlock(language: string, marker: string): string {
  const from = OPERATIONS.indexOf(marker)
  expect(from).toBeGreaterThanOrEqual(0)
  const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\``).exec(OPERATIONS.slice(from))
  return block![1]!
}

describe('systemd-unit', () => {
  test('from a checkout → a unit starting it (Bun and src/main.ts) that systemd-analyze verify accepts without a word', () => {
    const out = cli(['systemd-unit'], {})
    expect(out.code).toBe(0)
    expect(out.stdout).toContain(`ExecStart=${process.execPath} ${join(REPO, 'src', 'main.ts')} serve\n`)
    expect(verifyUnit(out.stdout)).toEqual({ code: 0, output: '' })
  })

  test('the unit runs as a dedicated user in its StateDirectory, read-only elsewhere, without new privileges, restarted on failure but not on a configuration error', () => {
    const unit = cli(['systemd-unit', '--exec', INSTALLED_BINARY], {}).stdout
    for (const line of [
      'User=platform-api',
      'StateDirectory=platform-api',
      'StateDirectoryMode=0700',
      'Environment=PLATFORM_DATA_DIR=/var/lib/platform-api HOST=127.0.0.1 PORT=3000',
      'ProtectSystem=strict',
      'NoNewPrivileges=yes',
      'Restart=on-failure',
      'RestartPreventExitStatus=2',
    ])
      expect(unit.split('\n')).toContain(line)
  })

  test('--exec naming a path with a space → quoted for systemd, and verified', () => {
    const dir = join(tempDir(), 'with space')
    mkdirSync(dir)
    copyFileSync('/bin/true', join(dir, 'platform-api'))
    const unit = cli(['systemd-unit', '--exec', join(dir, 'platform-api')], {}).stdout
    expect(unit).toContain(`ExecStart="${join(dir, 'platform-api')}" serve\n`)
    expect(verifyUnit(unit)).toEqual({ code: 0, output: '' })
  })

  test('an unknown flag → one line, exit 2', () => {
    const out = cli(['systemd-unit', '--user', 'x'], {})
    expect(out.code).toBe(2)
    expect(out.stderr.trim().split('\n')).toHaveLength(1)
  })

  test('docs/operations.md shows exactly the unit printed for /usr/local/bin/platform-api', () => {
    expect(`${docsBlock('ini', '## Service')}\n`).toBe(cli(['systemd-unit', '--exec', INSTALLED_BINARY], {}).stdout)
  })
})

test("the docs' nginx reverse proxy → nginx -t accepts it (its certificate paths pointed at a generated pair)", async () => {
  const dir = tempDir('platform-nginx-')
  const tls = await generateServerTls(['platform.example.com'])
  writeFileSync(join(dir, 'fullchain.pem'), tls.certPem)
  writeFileSync(join(dir, 'privkey.pem'), tls.keyPem)
  const site = docsBlock('nginx', '## Service').replaceAll('/etc/letsencrypt/live/platform.example.com/', `${dir}/`)
  expect(site).toContain(`ssl_certificate     ${dir}/fullchain.pem;`)
  writeFileSync(join(dir, 'site.conf'), site)
  writeFileSync(
    join(dir, 'nginx.conf'),
    `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  access_log off;\n  include ${dir}/site.conf;\n}\n`,
  )
  const check = Bun.spawnSync(['nginx', '-t', '-q', '-p', `${dir}/`, '-c', join(dir, 'nginx.conf')], { stdout: 'pipe', stderr: 'pipe' })
  expect(check.stderr.toString()).toBe('')
  expect(check.exitCode).toBe(0)
})
