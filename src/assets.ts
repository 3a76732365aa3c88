import { join, resolve } from 'node:path'

/**
 * Files the program reads at run time (migrations, report templates). From a checkout they are the
 * repository's; the built binary carries the same folders (scripts/build.ts embeds them) under its
 * own root, so one relative path names a file in both.
 */
const ROOT = Bun.isStandaloneExecutable ? import.meta.dir : resolve(import.meta.dir, '..')

export const assetPath = (relative: string): string => join(ROOT, relative)

declare const PLATFORM_BUILD: BuildStamp | undefined

/** What scripts/build.ts stamps into the binary. */
export interface BuildStamp {
  commit: string
  date: string
  /** `sha256` hex of the Helm binary embedded compressed, or empty when the build had none. */
  helmSha256: string
}

/** The stamp of the built binary; undefined when run from source. */
export const buildStamp: BuildStamp | undefined = typeof PLATFORM_BUILD === 'undefined' ? undefined : PLATFORM_BUILD
