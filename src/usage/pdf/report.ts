import { readFileSync } from 'node:fs'
import { assetPath } from '../../assets'
import type { Deps } from '../../deps'
import type { UserRow } from '../../identity/store'
import { addMonths, type MonthKey, monthKeyAt, monthName, yearOf } from '../calendar'
import { PRODUCTS, type Product } from '../events'
import { changeFromPrevious, objectMonthsAt, toCoreMonths, totalCpu, totalMem } from '../service'
import * as store from '../store'
import { escapeHtml, formatNumber, stackedBarChart } from './charts'

/** What the monthly PDF shows: everything already computed, so rendering is plain templating. */
export interface MonthlyReport {
  org: { name: string; fullName: string }
  month: MonthKey
  generatedAt: number
  /** The month is still running (month-to-date). */
  partial: boolean
  hasUsage: boolean
  totals: { cpuCoreMonth: number; memoryGiBMonth: number; instances: number; clusters: number }
  products: {
    product: Product
    instances: number
    cpu: number
    mem: number
    cpuChange: number | undefined
    memChange: number | undefined
  }[]
  clusters: { uid: string; name: string; modes: ('PROD' | 'NON-PROD')[]; objects: number; cpu: number; mem: number }[]
  objects: { name: string; kind: string; namespace: string; cluster: string; cpu: number; mem: number }[]
  /** Six months ending with the report's, per product: core-minutes and GiB-minutes. */
  history: { month: MonthKey; cpu: Record<Product, number>; mem: Record<Product, number> }[]
}

const PRODUCT_LABELS: Record<Product, string> = {
  dbprod: 'Databases',
  backupprod: 'Backups',
  secretsprod: 'Secrets',
  ingressprod: 'Ingress',
}
const PRODUCT_COLORS: Record<Product, string> = { dbprod: '#2680c2', backupprod: '#f0b429', secretsprod: '#8662c7', ingressprod: '#3ebd93' }
const TOP_OBJECTS = 15

const zeroByProduct = (): Record<Product, number> => ({ dbprod: 0, backupprod: 0, secretsprod: 0, ingressprod: 0 })

/** Gathers the numbers of one month's report for an org, as of `now`. */
export async function buildMonthlyReport(deps: Deps, org: UserRow, month: MonthKey, now: number): Promise<MonthlyReport> {
  const db = deps.db.read
  const first = addMonths(month, -5)
  const rows = await objectMonthsAt(db, org.id, first, month, {}, now)
  const history = Array.from({ length: 6 }, (_, i) => ({ month: addMonths(first, i), cpu: zeroByProduct(), mem: zeroByProduct() }))
  for (const r of rows) {
    const h = history.find((x) => x.month === r.month)!
    h.cpu[r.product as Product] += totalCpu(r)
    h.mem[r.product as Product] += totalMem(r)
  }
  const current = rows.filter((r) => r.month === month && r.activeMs > 0)
  const previous = history[4]!
  const products = PRODUCTS.map((product) => {
    const mine = current.filter((r) => r.product === product)
    const cpu = mine.reduce((s, r) => s + totalCpu(r), 0)
    const mem = mine.reduce((s, r) => s + totalMem(r), 0)
    return {
      product,
      instances: mine.length,
      cpu,
      mem,
      cpuChange: changeFromPrevious(cpu, previous.cpu[product]),
      memChange: changeFromPrevious(mem, previous.mem[product]),
    }
  })
  const clusters = new Map<string, MonthlyReport['clusters'][number]>()
  for (const r of current) {
    let c = clusters.get(r.clusterUid)
    if (!c) clusters.set(r.clusterUid, (c = { uid: r.clusterUid, name: r.clusterName, modes: [], objects: 0, cpu: 0, mem: 0 }))
    c.objects++
    c.cpu += totalCpu(r)
    c.mem += totalMem(r)
    if (r.cpuProd > 0 || r.memProd > 0) c.modes.includes('PROD') || c.modes.push('PROD')
    if (r.cpuNonProd > 0 || r.memNonProd > 0) c.modes.includes('NON-PROD') || c.modes.push('NON-PROD')
  }
  const generated = (await store.generatedMonths(db, org.id)).includes(month)
  const cpuAll = current.reduce((s, r) => s + totalCpu(r), 0)
  const memAll = current.reduce((s, r) => s + totalMem(r), 0)
  return {
    org: { name: org.name, fullName: org.fullName },
    month,
    generatedAt: now,
    partial: month >= monthKeyAt(now),
    hasUsage: generated && current.length > 0,
    totals: {
      cpuCoreMonth: toCoreMonths(cpuAll),
      memoryGiBMonth: toCoreMonths(memAll),
      instances: current.length,
      clusters: clusters.size,
    },
    products,
    clusters: [...clusters.values()].sort((a, b) => b.cpu - a.cpu),
    objects: [...current]
      .sort((a, b) => totalCpu(b) - totalCpu(a))
      .slice(0, TOP_OBJECTS)
      .map((r) => ({
        name: r.name,
        kind: r.kind,
        namespace: r.namespace,
        cluster: r.clusterName || r.clusterUid,
        cpu: totalCpu(r),
        mem: totalMem(r),
      })),
    history,
  }
}

const TEMPLATE = readFileSync(assetPath('reports/monthly-report.html'), 'utf8')
const STYLE = readFileSync(assetPath('reports/monthly-report.css'), 'utf8')

const periodOf = (month: MonthKey) => `${monthName(month)} ${yearOf(month)}`
const shortMonth = (month: MonthKey) => `${monthName(month).slice(0, 3)} ${String(yearOf(month)).slice(2)}`
const cm = (minutes: number) => formatNumber(toCoreMonths(minutes))

function change(value: number | undefined): string {
  if (value === undefined) return '<span class="muted">–</span>'
  if (value === 0) return '<span class="muted">0%</span>'
  return `<span class="${value > 0 ? 'up' : 'down'}">${value > 0 ? '+' : '−'}${formatNumber(Math.abs(value), 1)}%</span>`
}

function kpi(label: string, value: string, sub: string): string {
  return `<div class="kpi"><div class="label">${escapeHtml(label)}</div><div class="value">${escapeHtml(value)}</div><div class="sub">${escapeHtml(sub)}</div></div>`
}

const emptyRow = (columns: number, text: string) => `<tr><td colspan="${columns}" class="muted">${escapeHtml(text)}</td></tr>`

/** The report as one self-contained HTML page (template and style from `reports/`). */
export function renderReportHtml(report: MonthlyReport): string {
  const period = periodOf(report.month)
  const labels = report.history.map((h) => shortMonth(h.month))
  const chartOf = (title: string, unit: string, pick: (h: MonthlyReport['history'][number]) => Record<Product, number>) =>
    stackedBarChart({
      title,
      unit,
      labels,
      highlight: 5,
      series: PRODUCTS.map((p) => ({
        label: PRODUCT_LABELS[p],
        color: PRODUCT_COLORS[p],
        values: report.history.map((h) => toCoreMonths(pick(h)[p])),
      })),
    })
  const productRows =
    report.products
      .map(
        (p) =>
          `<tr><td><span class="swatch" style="background:${PRODUCT_COLORS[p.product]}"></span>${escapeHtml(PRODUCT_LABELS[p.product])} <span class="uid">${p.product}</span></td>` +
          `<td class="num">${p.instances}</td><td class="num">${cm(p.cpu)}</td><td class="num">${change(p.cpuChange)}</td><td class="num">${cm(p.mem)}</td><td class="num">${change(p.memChange)}</td></tr>`,
      )
      .join('') +
    `</tbody><tfoot><tr><td>Total</td><td class="num">${report.totals.instances}</td><td class="num">${formatNumber(report.totals.cpuCoreMonth)}</td><td></td><td class="num">${formatNumber(report.totals.memoryGiBMonth)}</td><td></td></tr></tfoot><tbody>`
  const clusterRows =
    report.clusters.length === 0
      ? emptyRow(5, 'No cluster reported usage this month.')
      : report.clusters
          .map(
            (c) =>
              `<tr><td>${escapeHtml(c.name || c.uid)}<br><span class="uid">${escapeHtml(c.uid)}</span></td>` +
              `<td>${c.modes.map((m) => `<span class="mode${m === 'PROD' ? ' prod' : ''}">${m}</span>`).join(' ')}</td>` +
              `<td class="num">${c.objects}</td><td class="num">${cm(c.cpu)}</td><td class="num">${cm(c.mem)}</td></tr>`,
          )
          .join('')
  const objectRows =
    report.objects.length === 0
      ? emptyRow(6, 'No objects reported usage this month.')
      : report.objects
          .map(
            (o) =>
              `<tr><td>${escapeHtml(o.name)}</td><td>${escapeHtml(o.kind)}</td><td>${escapeHtml(o.namespace)}</td><td>${escapeHtml(o.cluster)}</td>` +
              `<td class="num">${cm(o.cpu)}</td><td class="num">${cm(o.mem)}</td></tr>`,
          )
          .join('')
  const values: Record<string, string> = {
    style: STYLE,
    title: escapeHtml(`${report.org.name} usage report, ${period}`),
    orgName: escapeHtml(report.org.name),
    orgFullName: escapeHtml(report.org.fullName),
    period: escapeHtml(period),
    status: report.partial ? 'Month to date (partial)' : 'Full month',
    generatedAt: new Date(report.generatedAt).toISOString().slice(0, 16).replace('T', ' '),
    emptyNotice: report.hasUsage
      ? ''
      : `<p class="empty">No usage was recorded for ${escapeHtml(report.org.name)} in ${escapeHtml(period)}.</p>`,
    kpis: [
      kpi('CPU', `${formatNumber(report.totals.cpuCoreMonth)}`, 'core-months'),
      kpi('Memory', `${formatNumber(report.totals.memoryGiBMonth)}`, 'GiB-months'),
      kpi('Instances', String(report.totals.instances), 'objects with usage'),
      kpi('Clusters', String(report.totals.clusters), 'reporting usage'),
    ].join(''),
    cpuChart: chartOf('CPU', 'core-months', (h) => h.cpu),
    memoryChart: chartOf('Memory', 'GiB-months', (h) => h.mem),
    productRows,
    clusterRows,
    objectRows,
  }
  return TEMPLATE.replace(/\{\{(\w+)\}\}/g, (_, key: string) => values[key] ?? '')
}

/** The footer Chromium prints on every page: org, month, page numbers. */
export function reportFooter(report: MonthlyReport): string {
  return (
    `<div style="font-family:'DejaVu Sans',sans-serif;font-size:7.5px;color:#627d98;width:100%;padding:0 14mm;display:flex;justify-content:space-between">` +
    `<span>${escapeHtml(report.org.name)} · usage report · ${escapeHtml(periodOf(report.month))}</span>` +
    '<span>Page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>'
  )
}
