import { gzipSync } from 'node:zlib'
import type { ChartArchive } from './archive'

/**
 * Writes a chart reading back as a plain archive, which is what Helm is handed: tar readers can
 * disagree on a crafted archive (a PAX size, a GNU name, a field one reader ignores), so Helm
 * never reads the original bytes, only these, made from exactly the files that were checked.
 * Every entry is a POSIX ustar file; a path longer than the name field gets a PAX path record.
 */

const BLOCK = 512
const NAME_BYTES = 100

const octal = (value: number, width: number) => `${value.toString(8).padStart(width - 1, '0')}\0`
const padding = (size: number) => new Uint8Array((BLOCK - (size % BLOCK)) % BLOCK)

/** A ustar header block: a regular file (type 0) unless `type` says otherwise. */
export function tarHeader(entry: { path: string; type?: string; linkname?: string }, size: number): Buffer {
  const header = Buffer.alloc(BLOCK)
  header.write(entry.path, 0, NAME_BYTES, 'utf8')
  header.write(octal(0o644, 8), 100, 'ascii')
  header.write(octal(0, 8), 108, 'ascii')
  header.write(octal(0, 8), 116, 'ascii')
  header.write(octal(size, 12), 124, 'ascii')
  header.write(octal(0, 12), 136, 'ascii')
  header.write('        ', 148, 'ascii')
  header.write(entry.type ?? '0', 156, 'ascii')
  if (entry.linkname) header.write(entry.linkname, 157, 100, 'utf8')
  header.write('ustar\x0000', 257, 'ascii')
  let sum = 0
  for (const byte of header) sum += byte
  header.write(`${octal(sum, 7)} `, 148, 'ascii')
  return header
}

/** One PAX record, `<length> <key>=<value>\n`, whose length counts its own digits. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`
  const bodyBytes = Buffer.byteLength(body)
  let length = bodyBytes + 1
  while (String(length).length + bodyBytes !== length) length = String(length).length + bodyBytes
  return Buffer.from(`${length}${body}`)
}

function fileEntry(path: string, data: Uint8Array): Uint8Array[] {
  const blocks: Uint8Array[] = []
  let name = path
  if (Buffer.byteLength(path) > NAME_BYTES) {
    const record = paxRecord('path', path)
    blocks.push(tarHeader({ path: 'PaxHeader', type: 'x' }, record.length), record, padding(record.length))
    name = 'long-name'
  }
  blocks.push(tarHeader({ path: name }, data.byteLength), data, padding(data.byteLength))
  return blocks
}

/** The gzipped tar of `archive` under its top directory, each subchart archive packed the same way. */
export function packChartArchive(archive: ChartArchive): Uint8Array {
  const blocks: Uint8Array[] = []
  for (const [path, data] of archive.files) blocks.push(...fileEntry(`${archive.root}/${path}`, data))
  for (const [path, subchart] of archive.subcharts) blocks.push(...fileEntry(`${archive.root}/${path}`, packChartArchive(subchart)))
  blocks.push(new Uint8Array(BLOCK * 2))
  // Level 1: the archive is written once per chart and read by Helm on every render; size hardly matters.
  return gzipSync(Buffer.concat(blocks), { level: 1 })
}
