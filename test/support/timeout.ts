import { setDefaultTimeout } from 'bun:test'

// Preloaded for every test file (bunfig.toml): Bun's default of 5 s per test is too short for
// suites that start real programs on a loaded 2-core machine, and Bun reads no timeout from bunfig.
setDefaultTimeout(30_000)
