// The floor for the auth bench: a bare Bun.serve answering a small JSON body, nothing checked.
// Usage (by bench/run.ts): PORT=N bun bench/bare-json.ts; several share PORT (reusePort); prints its port.
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: '127.0.0.1',
  reusePort: true,
  fetch: () => Response.json({ hello: 'world', id: 1 }),
})
console.log(server.port)
