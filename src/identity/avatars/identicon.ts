/**
 * A GitHub-style identicon: a 5×5 grid mirrored left to right, cells and colour taken from the
 * SHA-256 of `seed`. SVG, so no image library is needed.
 */
export function identiconSvg(seed: string): string {
  const hash = new Bun.CryptoHasher('sha256').update(seed).digest()
  const hue = ((hash[0] << 8) | hash[1]) % 360
  const colour = `hsl(${hue}, 55%, 50%)`
  const cells: string[] = []
  for (let row = 0; row < 5; row++) {
    for (let col = 0; col < 3; col++) {
      if ((hash[2 + row * 3 + col] & 1) === 0) continue
      for (const x of new Set([col, 4 - col])) cells.push(`<rect x="${x * 40 + 20}" y="${row * 40 + 20}" width="40" height="40"/>`)
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="240" viewBox="0 0 240 240">` +
    `<rect width="240" height="240" fill="#f0f0f0"/><g fill="${colour}">${cells.join('')}</g></svg>`
  )
}
