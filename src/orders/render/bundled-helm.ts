import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { assetPath, buildStamp } from '../../assets'
import { AppError } from '../../errors'

/**
 * The Helm the built binary carries (zstd-compressed by scripts/build.ts, a quarter of its size),
 * unpacked on first use to `path` in the data dir. A file already there is used only when its
 * sha256 is the stamped one; otherwise (a partial write, a tampered file) it is unpacked again.
 */
export async function unpackBundledHelm(path: string): Promise<void> {
  const expected = buildStamp?.helmSha256
  if (!expected) throw new AppError('unavailable', 'this build carries no Helm: set HELM_PATH')
  if (existsSync(path) && sha256(await Bun.file(path).bytes()) === expected) return
  const helm = Bun.zstdDecompressSync(await Bun.file(assetPath('helm.zst')).bytes())
  if (sha256(helm) !== expected)
    throw new AppError('unavailable', 'the Helm embedded in this binary is damaged (digest mismatch): reinstall platform-api')
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const temp = `${path}.${crypto.randomUUID()}.tmp`
  try {
    writeFileSync(temp, helm, { mode: 0o700 })
    renameSync(temp, path)
  } finally {
    rmSync(temp, { force: true })
  }
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
