import { assetPath } from '../assets'
import { type Command, PROGRAM, parse, print } from './command'

/** Where docs/operations.md installs the binary; the unit it shows is this command's output for this path. */
export const INSTALLED_BINARY = '/usr/local/bin/platform-api'

/** The command that starts this program: the binary itself, or Bun with the entry point from a checkout. */
const thisProgram = (): string[] => (Bun.isStandaloneExecutable ? [process.execPath] : [process.execPath, assetPath('src/main.ts')])

/** A command line word as systemd reads it: quoted when it holds anything but plain path characters. */
const systemdWord = (word: string) => (/^[\w/.+-]+$/.test(word) ? word : `"${word.replace(/[\\"]/g, '\\$&')}"`)

/**
 * The service unit (docs/operations.md, "Service"): a dedicated system user, the data dir as the
 * unit's StateDirectory (0700), the rest of the file system read-only, no privilege gains, a restart
 * after a crash but not after a configuration error (exit 2). Namespaces stay allowed: Helm renders
 * run in a network namespace of their own.
 */
const unitFile = (exec: string[]) => `# platform-api as a systemd service; see docs/operations.md ("Service").
# Settings (PLATFORM_PUBLIC_URL, PLATFORM_TRUSTED_PROXIES, PLATFORM_METRICS_TOKEN, ...) go into
# /etc/platform-api/env, one NAME=value a line, readable by root alone.
[Unit]
Description=platform-api, a self-hosted multi-cluster platform API
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=platform-api
Group=platform-api
ExecStart=${[...exec, 'serve'].map(systemdWord).join(' ')}
Environment=PLATFORM_DATA_DIR=/var/lib/platform-api HOST=127.0.0.1 PORT=3000
EnvironmentFile=-/etc/platform-api/env
StateDirectory=platform-api
StateDirectoryMode=0700
UMask=0077
Restart=on-failure
RestartSec=2
RestartPreventExitStatus=2
TimeoutStopSec=30
LimitNOFILE=65536
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
LockPersonality=yes

[Install]
WantedBy=multi-user.target`

export const systemdUnit: Command = {
  summary: 'print a systemd unit that runs this program as a service',
  usage: `Usage: ${PROGRAM} systemd-unit [--exec PATH]

Prints a systemd service unit for this program (docs/operations.md, "Service"): user platform-api,
data in /var/lib/platform-api, listening on 127.0.0.1:3000 behind a reverse proxy. --exec names the
program the unit starts (default: this one, as it was started), e.g.

  ${PROGRAM} systemd-unit --exec ${INSTALLED_BINARY} > /etc/systemd/system/platform-api.service`,
  async run(args) {
    const { exec } = parse(args, { exec: { type: 'string' } })
    return print(unitFile(exec === undefined ? thisProgram() : [exec]))
  },
}
