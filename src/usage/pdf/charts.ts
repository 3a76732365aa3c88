/**
 * Charts for the PDF, drawn on the server as inline SVG: no JavaScript, no fonts or images to
 * fetch, text that stays selectable (and readable by pdftotext) in the PDF.
 */

export const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')

interface ChartSeries {
  label: string
  color: string
  values: number[]
}

export interface StackedBars {
  title: string
  unit: string
  labels: string[]
  series: ChartSeries[]
  /** Index of the bar to emphasise (the report's month). */
  highlight?: number
}

/** A "nice" axis maximum and step for values up to `max` (1, 2, 2.5, 5 × 10ⁿ steps). */
function niceScale(max: number, ticks = 4): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.25 }
  const rough = max / ticks
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power
  return { top: Math.ceil(max / step) * step, step }
}

export const formatNumber = (value: number, digits = 2) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

const formatTick = (value: number) =>
  value >= 1000 ? value.toLocaleString('en-US', { maximumFractionDigits: 0 }) : String(Math.round(value * 100) / 100)

/** Stacked bars, one per label, with a value above each bar and a legend. */
export function stackedBarChart(chart: StackedBars): string {
  const width = 340
  const height = 190
  const left = 52
  const right = 8
  const top = 26
  const bottom = 40
  const plotW = width - left - right
  const plotH = height - top - bottom
  const totals = chart.labels.map((_, i) => chart.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0))
  const { top: axisTop, step } = niceScale(Math.max(...totals, 0))
  const y = (v: number) => top + plotH - (v / axisTop) * plotH
  const slot = plotW / chart.labels.length
  const barW = Math.min(34, slot * 0.6)
  const parts: string[] = []
  parts.push(`<text x="0" y="14" class="chart-title">${escapeHtml(chart.title)}</text>`)
  parts.push(`<text x="${width}" y="14" text-anchor="end" class="chart-unit">${escapeHtml(chart.unit)}</text>`)
  for (let v = 0; v <= axisTop + 1e-9; v += step) {
    parts.push(
      `<line x1="${left}" x2="${width - right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" class="${v === 0 ? 'axis' : 'grid'}"/>`,
    )
    parts.push(`<text x="${left - 6}" y="${(y(v) + 3).toFixed(1)}" text-anchor="end" class="tick">${formatTick(v)}</text>`)
  }
  chart.labels.forEach((label, i) => {
    const x = left + slot * i + (slot - barW) / 2
    let base = 0
    for (const s of chart.series) {
      const v = s.values[i] ?? 0
      if (v > 0)
        parts.push(
          `<rect x="${x.toFixed(1)}" y="${y(base + v).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(base) - y(base + v)).toFixed(1)}" fill="${s.color}"/>`,
        )
      base += v
    }
    const cls = i === chart.highlight ? 'label current' : 'label'
    parts.push(
      `<text x="${(x + barW / 2).toFixed(1)}" y="${(y(base) - 4).toFixed(1)}" text-anchor="middle" class="value">${formatNumber(totals[i]!)}</text>`,
    )
    parts.push(
      `<text x="${(x + barW / 2).toFixed(1)}" y="${top + plotH + 14}" text-anchor="middle" class="${cls}">${escapeHtml(label)}</text>`,
    )
  })
  let lx = left
  for (const s of chart.series) {
    parts.push(
      `<rect x="${lx}" y="${height - 11}" width="9" height="9" fill="${s.color}"/><text x="${lx + 13}" y="${height - 3}" class="legend">${escapeHtml(s.label)}</text>`,
    )
    lx += 22 + s.label.length * 5.6
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${escapeHtml(chart.title)}">${parts.join('')}</svg>`
}
