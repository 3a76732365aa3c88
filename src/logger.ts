/** One JSON object per line on stdout (info) or stderr (error); never given secrets to print. */
export interface Logger {
  info(event: string, fields?: Record<string, unknown>): void
  error(event: string, fields?: Record<string, unknown>): void
}

export function jsonLogger(
  write: { out: (line: string) => void; err: (line: string) => void } = {
    out: (line) => process.stdout.write(line),
    err: (line) => process.stderr.write(line),
  },
): Logger {
  const line = (level: string, event: string, fields: Record<string, unknown> = {}) =>
    `${JSON.stringify({ time: new Date().toISOString(), level, event, ...fields })}\n`
  return {
    info: (event, fields) => write.out(line('info', event, fields)),
    error: (event, fields) => write.err(line('error', event, fields)),
  }
}

/** A logger that keeps lines in memory, for tests that assert what was (not) logged. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  const keep = (text: string) => {
    lines.push(text)
  }
  return { lines, ...jsonLogger({ out: keep, err: keep }) }
}
