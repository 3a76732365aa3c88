import { describe, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { INSTALLED_BINARY, K3S_KUBECONFIG } from '../../src/cli/systemd'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { tempDir } from '../support/app'
import { cli, REPO } from './support'
import { verifyUnit } from './systemd'

/** The service setup docs/operations.md shows ("Service"): the unit the program prints and the nginx example. */

const OPERATIONS = readFileSync(join(REPO, 'docs', 'operations.md'), 'utf8')
const AGENTS = readFileSync(join(REPO, 'docs', 'agents.md'), 'utf8')

/** The first fenced block of `language` after `marker` in docs/operations.md (or `doc`). */
function docsBlock(language: string, marker: string, doc = OPERATIONS): string {
  const from = doc.indexOf(marker)
  expect(from).toBeGreaterThanOrEqual(0)
  const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\``).exec(doc.slice(from))
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

describe('systemd-unit --agent (docs/agents.md: the agent beside k3s)', () => {
  const SERVER = 'https://platform.example.com'
  const agentUnit = (args: string[]) => cli(['systemd-unit', '--agent', ...args], {})

  test('--server URL → a unit running `agent --server URL --kubeconfig <k3s>` with the token file, restarted always; verified without a word', () => {
    const out = agentUnit(['--server', SERVER])
    expect(out.code).toBe(0)
    const lines = out.stdout.split('\n')
    expect(lines).toContain(
      `ExecStart=${process.execPath} ${join(REPO, 'src', 'main.ts')} agent --server "${SERVER}" --kubeconfig ${K3S_KUBECONFIG}`,
    )
    for (const line of ['EnvironmentFile=/etc/platform-agent.env', 'Restart=always', 'RestartSec=5', 'WantedBy=multi-user.target'])
      expect(lines).toContain(line)
    expect(verifyUnit(out.stdout, 'platform-agent.service')).toEqual({ code: 0, output: '' })
  })

  test('--ca-file F → passed on as --ca-file F; verified', () => {
    const out = agentUnit(['--server', SERVER, '--ca-file', '/etc/platform-agent/ca.crt'])
    expect(out.stdout).toContain(`--kubeconfig ${K3S_KUBECONFIG} --ca-file /etc/platform-agent/ca.crt\n`)
    expect(verifyUnit(out.stdout, 'platform-agent.service')).toEqual({ code: 0, output: '' })
  })

  test("hardened as the server's unit where it applies, and more: no capability, a read-only system, IP and local sockets only", () => {
    const lines = agentUnit(['--server', SERVER]).stdout.split('\n')
    for (const line of [
      'CapabilityBoundingSet=',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'PrivateDevices=yes',
      'ProtectKernelTunables=yes',
      'ProtectKernelModules=yes',
      'ProtectControlGroups=yes',
      'RestrictNamespaces=yes',
      'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX',
      'RestrictSUIDSGID=yes',
      'LockPersonality=yes',
    ])
      expect(lines).toContain(line)
    // It runs as root, the owner of k3s's kubeconfig (0600), and keeps no state.
    expect(lines.filter((line) => /^(User|StateDirectory)=/.test(line))).toEqual([])
  })

  test('% and $ → doubled, as systemd reads specifiers and variables; a line break → escaped, not a new line; verified', () => {
    const out = agentUnit(['--server', 'https://platform.example.com/a%20b$c', '--ca-file', '/etc/ca\nExecStartPre=/bin/false'])
    expect(out.stdout).toContain('--server "https://platform.example.com/a%%20b$$c" ')
    expect(out.stdout).toContain('--ca-file "/etc/ca\\x0aExecStartPre=/bin/false"\n')
    expect(out.stdout.split('\n').filter((line) => line.startsWith('ExecStart'))).toHaveLength(1)
    expect(verifyUnit(out.stdout, 'platform-agent.service')).toEqual({ code: 0, output: '' })
  })

  test('no --server, a URL that is not http(s), a relative --ca-file, or --server without --agent → one line, exit 2', () => {
    for (const args of [
      ['systemd-unit', '--agent'],
      ['systemd-unit', '--agent', '--server', 'ftp://platform.example.com'],
      ['systemd-unit', '--agent', '--server', 'https://platform.example.com/\nExecStartPre=/bin/false'],
      ['systemd-unit', '--agent', '--server', SERVER, '--ca-file', 'ca.crt'],
      ['systemd-unit', '--server', SERVER],
    ]) {
      const out = cli(args, {})
      expect(out.code).toBe(2)
      expect(out.stderr.trim().split('\n')).toHaveLength(1)
    }
  })

  test('docs/agents.md shows exactly the unit printed for /usr/local/bin/platform-api and https://platform.example.com', () => {
    const printed = agentUnit(['--server', SERVER, '--exec', INSTALLED_BINARY]).stdout
    expect(`${docsBlock('ini', '## Running the agent beside a cluster', AGENTS)}\n`).toBe(printed)
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
