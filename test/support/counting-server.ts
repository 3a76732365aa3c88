/** A plain HTTP server on loopback that answers every request with `answer` and counts them: for "is it ever asked?". */
export function countingServer(answer: () => Response) {
  let hits = 0
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => {
      hits++
      return answer()
    },
  })
  return { origin: `http://127.0.0.1:${server.port}`, hits: () => hits, stop: () => server.stop(true) }
}
