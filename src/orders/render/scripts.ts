/**
 * The install scripts of an order (reference §1.6, §1.7), without the AppRelease lines (this
 * platform registers no AppRelease CRD). Every value that reaches the shell is quoted as
 * go-shellescape does: left bare when it holds only safe characters, otherwise single-quoted
 * with `'` written as `'"'"'`, so quotes, `$()`, backticks and line breaks stay literal.
 */

export function shellQuote(value: string): string {
  if (value === '') return "''"
  if (!/[^\w@%+=:,./-]/.test(value)) return value
  return `'${value.replace(/'/g, `'"'"'`)}'`
}

/** A values flag of the helm3 script: `--set key=value`, or `--set-json key=<JSON>` where --set would change the value. */
export interface ValuesFlag {
  flag: '--set' | '--set-json'
  arg: string
}

interface WaitFor {
  resource: { group?: string; resource: string }
  labels?: { matchLabels?: Record<string, string> }
  all?: boolean
  timeout?: string
  for?: string
}

export interface ScriptPackage {
  release: string
  namespace: string
  /** `repo` (an HTTP repository and chart name), `oci` (the chart's `oci://` reference) or `archive` (a .tgz URL). */
  chart: { kind: 'repo'; repoUrl: string; name: string } | { kind: 'oci'; ref: string } | { kind: 'archive'; url: string }
  version: string
  valuesFlags: ValuesFlag[]
  waitFors: WaitFor[]
  ownedCrds: { group: string; resource: string }[]
}

const q = shellQuote

function waitLines(p: Pick<ScriptPackage, 'release' | 'namespace' | 'waitFors' | 'ownedCrds'>): string[] {
  const lines: string[] = []
  if (p.waitFors.length > 0) {
    lines.push(`# wait ${q(p.release)} to be ready`)
    for (const w of p.waitFors) {
      const parts = ['kubectl', 'wait', q(w.resource.group ? `${w.resource.group}/${w.resource.resource}` : w.resource.resource)]
      const selector = Object.entries(w.labels?.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',')
      if (selector) parts.push('-l', q(selector))
      if (w.all) parts.push('--all')
      if (w.for) parts.push('--for', q(w.for))
      if (w.timeout) parts.push('--timeout', q(w.timeout))
      parts.push('-n', q(p.namespace))
      lines.push(parts.join(' '))
    }
  }
  if (p.ownedCrds.length > 0) {
    lines.push('# wait for crds to be ready')
    for (const gvr of p.ownedCrds) {
      const crd = q(`${gvr.resource}.${gvr.group}`)
      lines.push(`until kubectl get crds ${crd} > /dev/null 2>&1; do sleep 1; done`)
      lines.push(`kubectl wait --for=condition=Established crds/${crd} --timeout=5m`)
    }
  }
  return lines
}

function installLines(p: ScriptPackage): string[] {
  const lines: string[] = []
  if (p.chart.kind === 'repo') {
    lines.push(`helm upgrade --install ${q(p.release)} ${q(p.chart.name)} \\`)
    lines.push(`  --repo ${q(p.chart.repoUrl)}${p.version ? ` --version ${q(p.version)}` : ''} \\`)
  } else if (p.chart.kind === 'oci') {
    lines.push(`helm upgrade --install ${q(p.release)} ${q(p.chart.ref)}${p.version ? ` --version ${q(p.version)}` : ''} \\`)
  } else {
    lines.push(`helm upgrade --install ${q(p.release)} ${q(p.chart.url)} \\`)
  }
  if (p.namespace) lines.push(`  --namespace ${q(p.namespace)} --create-namespace \\`)
  lines.push('  --wait --debug --burst-limit=1000 \\')
  for (const { flag, arg } of p.valuesFlags) lines.push(`  ${flag} ${q(arg)} \\`)
  // The generator writes every line with a continuation and then takes the last one back.
  const last = lines.length - 1
  lines[last] = lines[last]!.slice(0, -2)
  return lines
}

/** The helm3 script: `helm upgrade --install` per package, then its waits. */
export function helm3Script(packages: ScriptPackage[]): string {
  const out = ['#!/usr/bin/env sh', '']
  for (const p of packages) out.push(...installLines(p), ...waitLines(p), '')
  return out.join('\n')
}

export interface YamlScriptPackage extends Pick<ScriptPackage, 'release' | 'namespace' | 'waitFors' | 'ownedCrds'> {
  deprecated: boolean
  crdUrls: string[]
  manifestUrl: string
}

/** The yaml script: `kubectl apply` of each package's CRDs and manifest, then its waits. */
export function yamlScript(packages: YamlScriptPackage[]): string {
  const out = ['#!/usr/bin/env sh', '']
  for (const p of packages) {
    if (p.deprecated) out.push('# WARNING: This chart is deprecated')
    if (p.crdUrls.length > 0) out.push('# install CRDs', ...p.crdUrls.map((url) => `kubectl apply -f ${q(url)}`))
    out.push(`kubectl apply -f ${q(p.manifestUrl)}`, ...waitLines(p), '')
  }
  return out.join('\n')
}
