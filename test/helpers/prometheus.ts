// Reads the Prometheus text format a /metrics scrape answers: one sample's value, summed
// over the series whose labels include the ones asked for.

export interface Scrape {
  text: string
  /** the sum of `name`'s series carrying every label in `labels` (0 when none does) */
  value(name: string, labels?: Record<string, string>): number
  /** whether `name` is exported at all (a HELP line, with or without samples) */
  has(name: string): boolean
  /** the label values `name`'s series carry for `label` */
  labelValues(name: string, label: string): string[]
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g

export function parseScrape(text: string): Scrape {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = []
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const m = SAMPLE.exec(line)
    if (!m) continue
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2]
    samples.push({ name: m[1], labels, value: Number(m[3]) })
  }
  const matching = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  return {
    text,
    value: (name, labels) => matching(name, labels).reduce((n, s) => n + s.value, 0),
    has: (name) => text.includes(`# HELP ${name} `),
    labelValues: (name, label) => [...new Set(matching(name).map((s) => s.labels[label]).filter((v): v is string => v !== undefined))],
  }
}

/** GET /metrics of a server, parsed */
export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`)
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`)
  return parseScrape(await res.text())
}
