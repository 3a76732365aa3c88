import { assetPath } from '../assets'
import { type Command, PROGRAM, parse, print, UsageError } from './command'

/** Where docs/operations.md installs the binary; the unit it shows is this command's output for this path. */
export const INSTALLED_BINARY = '/usr/local/bin/platform-api'

/** The command that starts this program: the binary itself, or Bun with the entry point from a checkout. */
const thisProgram = (): string[] => (Bun.isStandaloneExecutable ? [process.execPath] : [process.execPath, assetPath('src/main.ts')])

/**
 * A command line word as systemd reads it: quoted when it holds anything but plain path characters, with
 * `%` (a specifier) and `$` (a variable) doubled and control characters as C escapes, so the program gets
 * the word as written and a line break cannot end the line.
 */
const systemdWord = (word: string) =>
  /^[\w/.+-]+$/.test(word)
    ? word
    : `"${word
        .replace(/[\\"]/g, '\\$&')
        .replace(/[%$]/g, '$&$&')
        .replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}"`

/**
 * The service unit (docs/operations.md, "Service"): a dedicated system user, the data dir as the
 * unit's StateDirectory (0700), the rest of the file system read-only, no privilege gains, a restart
 * after a crash but not after a configuration error (exit 2). Namespaces stay allowed: Helm renders
 * run in a network namespace of their own.
 */
/** The confinement both units share: no new privileges, a read-only system, private /tmp and devices, kernel settings untouchable. */
const CONFINED = `NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes`

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
${CONFINED}
ProtectControlGroups=yes
RestrictSUIDSGID=yes
LockPersonality=yes

[Install]
WantedBy=multi-user.target`

/** Where k3s writes the kubeconfig of its cluster (root only, 0600): the agent beside it reads it. */
export const K3S_KUBECONFIG = '/etc/rancher/k3s/k3s.yaml'
/** The environment file of the agent's unit: `PLATFORM_AGENT_TOKEN=<agent token>`, readable by root alone. */
const AGENT_ENV_FILE = '/etc/platform-agent.env'

/**
 * The unit of a cluster agent on a machine running k3s (docs/agents.md, "Running the agent beside a cluster
 * (systemd, k3s)"): it reads k3s's kubeconfig and dials out, nothing more. It runs as root, the owner of that
 * file, but without a single capability; the file system is read-only to it, it gains no privileges and may
 * open only IP and local sockets. Its token comes from the environment file, never its command line.
 */
const agentUnitFile = (
  exec: string[],
  server: string,
  caFile: string | undefined,
) => `# The platform-api cluster agent beside k3s, as a systemd service; see docs/agents.md.
# Its agent token goes into ${AGENT_ENV_FILE} as PLATFORM_AGENT_TOKEN=<token>, readable by root alone.
[Unit]
Description=platform-api cluster agent: connects this machine's k3s cluster to the platform
After=network-online.target k3s.service
Wants=network-online.target

[Service]
Type=simple
ExecStart=${[...exec, 'agent', '--server', server, '--kubeconfig', K3S_KUBECONFIG, ...(caFile === undefined ? [] : ['--ca-file', caFile])].map(systemdWord).join(' ')}
EnvironmentFile=${AGENT_ENV_FILE}
Restart=always
RestartSec=5
UMask=0077
CapabilityBoundingSet=
${CONFINED}
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictNamespaces=yes
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictSUIDSGID=yes
LockPersonality=yes

[Install]
WantedBy=multi-user.target`

/** `--server` of the agent's unit: an http(s) URL written as one line of plain characters. */
function serverFlag(text: string | undefined): string {
  if (text === undefined) throw new UsageError('--agent needs --server URL, the platform the agent connects to')
  let protocol = ''
  try {
    protocol = new URL(text).protocol
  } catch {}
  if ((protocol !== 'https:' && protocol !== 'http:') || /[\s\x00-\x1f\x7f]/.test(text))
    throw new UsageError(`--server must be the platform's http(s) URL, got ${JSON.stringify(text)}`)
  return text
}

export const systemdUnit: Command = {
  summary: 'print a systemd unit that runs this program as a service (the server, or a cluster agent)',
  usage: `Usage: ${PROGRAM} systemd-unit [--exec PATH]
       ${PROGRAM} systemd-unit --agent --server URL [--ca-file FILE] [--exec PATH]

Prints a systemd service unit for this program (docs/operations.md, "Service"): user platform-api,
data in /var/lib/platform-api, listening on 127.0.0.1:3000 behind a reverse proxy. --exec names the
program the unit starts (default: this one, as it was started), e.g.

  ${PROGRAM} systemd-unit --exec ${INSTALLED_BINARY} > /etc/systemd/system/platform-api.service

With --agent, the unit of a cluster agent on a machine running k3s (docs/agents.md): it runs
"agent --server URL --kubeconfig ${K3S_KUBECONFIG}" (and --ca-file FILE, the CA of the platform's
certificate when the system does not trust it), reading PLATFORM_AGENT_TOKEN from ${AGENT_ENV_FILE}:

  ${PROGRAM} systemd-unit --agent --server https://platform.example.com --exec ${INSTALLED_BINARY} \\
    > /etc/systemd/system/platform-agent.service`,
  async run(args) {
    const flags = parse(args, {
      exec: { type: 'string' },
      agent: { type: 'boolean' },
      server: { type: 'string' },
      'ca-file': { type: 'string' },
    })
    const exec = flags.exec === undefined ? thisProgram() : [flags.exec]
    if (!flags.agent) {
      if (flags.server !== undefined || flags['ca-file'] !== undefined) throw new UsageError('--server and --ca-file go with --agent')
      return print(unitFile(exec))
    }
    const caFile = flags['ca-file']
    if (caFile !== undefined && !caFile.startsWith('/'))
      throw new UsageError(`--ca-file must be an absolute path, got ${JSON.stringify(caFile)}`)
    return print(agentUnitFile(exec, serverFlag(flags.server), caFile))
  },
}
