import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { CONSOLE_API_TYPES, consoleApiTypes } from '../../scripts/console-api-types'

test("the console's API types are those of the current OpenAPI document (else: bun scripts/console-api-types.ts)", async () => {
  expect(readFileSync(CONSOLE_API_TYPES, 'utf8')).toBe(await consoleApiTypes())
}, 60_000)
