import { existsSync, statSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Presets, SingleBar } from 'cli-progress'
import { loadConfig } from '../config'
import { findOrgByName } from '../orgs/store'
import { importNdjsonFile } from '../usage/import'
import { type Command, CommandFailed, PROGRAM, parseCommandArgs, UsageError, withDeps } from './command'

export const usageImport: Command = {
  summary: 'ingest usage events from an NDJSON file for an organization',
  usage: `Usage: ${PROGRAM} usage import --org ORG FILE.ndjson

Ingests usage events (docs/decisions.md §5a), one JSON event per line, for organization ORG, with a progress
bar. Like POST /api/v1/usage/events: a bad line or event is rejected alone (reported with its index
among non-empty lines; the first 20 printed, all counted), events already stored are duplicates. Exit 1 when
any line was rejected.`,
  async run(args) {
    const parsed = parseCommandArgs(() => parseArgs({ args, options: { org: { type: 'string' } }, strict: true, allowPositionals: true }))
    const [file, ...extra] = parsed.positionals
    const orgName = parsed.values.org
    if (!orgName || !file || extra.length > 0) throw new UsageError('usage: usage import --org ORG FILE.ndjson')
    if (!existsSync(file)) throw new CommandFailed(`${file}: no such file`)
    const result = await withDeps(loadConfig(), async (deps) => {
      const org = await findOrgByName(deps.db.read, orgName)
      if (!org) throw new CommandFailed(`organization "${orgName}" does not exist`)
      const bar = new SingleBar(
        {
          format: 'importing {bar} {percentage}% | {accepted} accepted, {duplicates} duplicates, {rejected} rejected',
          hideCursor: true,
          noTTYOutput: false,
          stream: process.stderr,
        },
        Presets.shades_classic,
      )
      bar.start(Math.max(1, statSync(file).size), 0, { accepted: 0, duplicates: 0, rejected: 0 })
      try {
        return await importNdjsonFile(deps, org.id, file, (p) =>
          bar.update(p.bytesRead, { accepted: p.result.accepted, duplicates: p.result.duplicates, rejected: p.result.rejectedCount }),
        )
      } finally {
        bar.stop()
      }
    })
    console.log(`${result.accepted} accepted, ${result.duplicates} duplicates, ${result.rejectedCount} rejected`)
    for (const r of result.rejected.slice(0, 20)) console.log(`  line ${r.index}: ${r.message}`)
    if (result.rejectedCount > 20) console.log(`  … and ${result.rejectedCount - 20} more`)
    return result.rejectedCount > 0 ? 1 : 0
  },
}
