import type { Deps } from '../deps'
import { BAD_JSON_LINE, BadLine } from './body'
import { Ingestion, type IngestResult } from './ingest'

/** Lines ingested per transaction: big enough to amortize a commit, small enough to keep memory flat. */
const LINES_PER_TRANSACTION = 20_000

const ImportMessages = {
  notUtf8: 'the line is not valid UTF-8 text',
} as const

export interface ImportProgress {
  bytesRead: number
  totalBytes: number
  result: IngestResult
}

const NEWLINE = 0x0a
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** The value of one line of the file (its bytes), a BadLine when it is not UTF-8 or not JSON, undefined when blank. */
function valueOfLine(bytes: Uint8Array): unknown {
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  } catch {
    return new BadLine(ImportMessages.notUtf8)
  }
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return new BadLine(BAD_JSON_LINE)
  }
}

/** The lines of `file` as bytes, read a chunk at a time (a newline byte never occurs inside a UTF-8 character). */
async function* linesOf(file: Blob, onChunk: (bytes: number) => void): AsyncGenerator<Uint8Array> {
  let pending = new Uint8Array(0)
  const reader = file.stream().getReader()
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    const chunk = next.value
    onChunk(chunk.byteLength)
    const bytes = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    let start = 0
    for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
      yield bytes.subarray(start, end)
      start = end + 1
    }
    pending = bytes.slice(start)
  }
  if (pending.length > 0) yield pending
}

/**
 * `usage import`: ingests an NDJSON file for an org as the route would (each bad line or event
 * rejected alone, its index being its position among non-empty lines; the first rejections listed
 * and all counted), in a transaction per LINES_PER_TRANSACTION lines, so a file of millions of
 * events needs little memory. `onProgress` is called after every transaction.
 */
export async function importNdjsonFile(
  deps: Deps,
  orgId: number,
  path: string,
  onProgress: (p: ImportProgress) => void = () => undefined,
): Promise<IngestResult> {
  const file = Bun.file(path)
  const totalBytes = file.size
  const ingestion = new Ingestion(deps, orgId)
  let bytesRead = 0
  let lines = 0
  for await (const line of linesOf(file, (bytes) => (bytesRead += bytes))) {
    const value = valueOfLine(line)
    if (value === undefined) continue
    ingestion.take(value)
    if (++lines % LINES_PER_TRANSACTION === 0) {
      await ingestion.store()
      onProgress({ bytesRead, totalBytes, result: ingestion.result() })
    }
  }
  await ingestion.store()
  const result = ingestion.result()
  onProgress({ bytesRead: totalBytes, totalBytes, result })
  return result
}
