/** A loopback port free right now (asked of the kernel, then released), for a server whose URL must be known before it starts. */
export function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}
