import type { Deps } from '../deps'
import { BadLine } from './body'
import { type IngestResult, ingestEvents } from './ingest'

/** Lines ingested per transaction: big enough to amortize a commit, small enough to keep memory flat. */
const LINES_PER_BATCH = 20_000

export interface ImportProgress {
  bytesRead: number
  totalBytes: number
  result: IngestResult
}

/**
 * `usage import`: ingests an NDJSON file for an org as the route would (each bad line or event
 * rejected alone, its index being its position among non-empty lines), streamed in batches so a
 * file of millions of events needs little memory. `onProgress` is called after every batch.
 */
export async function importNdjsonFile(
  deps: Deps,
  orgId: number,
  path: string,
  onProgress: (p: ImportProgress) => void = () => undefined,
): Promise<IngestResult> {
  const file = Bun.file(path)
  const totalBytes = file.size
  const result: IngestResult = { accepted: 0, duplicates: 0, rejected: [] }
  let bytesRead = 0
  let index = 0
  let pending = ''
  let batch: unknown[] = []
  const flush = async () => {
    if (batch.length === 0) return
    const part = await ingestEvents(deps, orgId, batch, deps.clock.now(), index - batch.length)
    result.accepted += part.accepted
    result.duplicates += part.duplicates
    result.rejected.push(...part.rejected)
    batch = []
    onProgress({ bytesRead, totalBytes, result })
  }
  const take = async (line: string) => {
    if (line.trim() === '') return
    try {
      batch.push(JSON.parse(line))
    } catch {
      batch.push(new BadLine('the line is not valid JSON'))
    }
    index++
    if (batch.length >= LINES_PER_BATCH) await flush()
  }
  const decoder = new TextDecoder()
  const reader = file.stream().getReader()
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    const chunk = next.value
    bytesRead += chunk.byteLength
    pending += decoder.decode(chunk, { stream: true })
    const lines = pending.split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) await take(line)
  }
  await take(pending + decoder.decode())
  await flush()
  onProgress({ bytesRead: totalBytes, totalBytes, result })
  return result
}
