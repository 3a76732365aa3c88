import { makeTestApp, type TestApp } from '../support/app'

/**
 * Two apps on one database file in this test process, standing for two processes (or machines)
 * sharing it. On bun:sqlite: two SQLite libraries in one process (bun's, libSQL's native one)
 * release each other's file locks, so libSQL across processes is tested with real processes
 * (processes.test.ts, machines.test.ts) instead.
 */
export async function twoApps(): Promise<[TestApp, TestApp]> {
  const a = await makeTestApp({ PLATFORM_DATABASE_DRIVER: 'bun:sqlite' })
  const b = await makeTestApp({ PLATFORM_DATA_DIR: a.config.dataDir, PLATFORM_DATABASE_DRIVER: 'bun:sqlite' })
  return [a, b]
}
