// Writes the values reference of charts/nightjar/README.md from values.yaml — every value,
// its default and the comment above it — between <!-- values:begin --> and <!-- values:end -->.
// values.yaml stays the one place a value is explained; the README is its readable form.
// Run `node --import tsx scripts/gen-chart-readme.ts`; test/charts/readme.test.ts fails when
// the README is stale or a value has no comment.
import { readFileSync, writeFileSync } from 'node:fs'
import { isMap, isScalar, isSeq, parseDocument, type Node, type Pair, type YAMLMap } from 'yaml'
import { isEntryPoint } from '../contracts/entry-point.ts'

export const BEGIN = '<!-- values:begin -->'
export const END = '<!-- values:end -->'
const VALUES = new URL('../charts/nightjar/values.yaml', import.meta.url)
const README = new URL('../charts/nightjar/README.md', import.meta.url)

export interface ValueDoc { path: string; default: string; description: string }

/** The comment lines directly above a key, without their '#'. */
function commentOf(pair: Pair, first: boolean, map: YAMLMap): string {
  const key = pair.key as Node | null
  const raw = key?.commentBefore ?? (first ? map.commentBefore : undefined) ?? ''
  // a blank comment line ends a paragraph: only the one right above the key is the key's
  // (the file's header stands above the first key, a blank line between)
  const paragraphs = raw.split(/\n\s*\n/)
  return paragraphs[paragraphs.length - 1].split('\n').map((l) => l.trim()).join(' ').trim()
}

/** A leaf is anything but a block map with keys: scalars, lists, and flow maps such as `{ cpu: 250m }`. */
function isLeaf(node: unknown): boolean {
  return !isMap(node) || node.items.length === 0 || node.flow === true
}

function render(node: unknown): string {
  if (isScalar(node)) return JSON.stringify(node.value)
  if (isSeq(node) || isMap(node)) return JSON.stringify((node as { toJSON(): unknown }).toJSON())
  return 'null'
}

export function valueDocs(text = readFileSync(VALUES, 'utf8')): ValueDoc[] {
  const doc = parseDocument(text)
  const out: ValueDoc[] = []
  const walk = (map: YAMLMap, prefix: string, inherited: string) => {
    map.items.forEach((pair, i) => {
      const key = String((pair.key as { value?: unknown })?.value ?? pair.key)
      const path = prefix ? `${prefix}.${key}` : key
      const own = commentOf(pair as Pair, i === 0, map)
      if (isLeaf(pair.value)) out.push({ path, default: render(pair.value), description: own || inherited })
      else walk(pair.value as YAMLMap, path, '')
    })
  }
  walk(doc.contents as YAMLMap, '', '')
  return out
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/</g, '&lt;')

export function renderValuesTable(docs = valueDocs()): string {
  const rows = docs.map((d) => `| \`${d.path}\` | \`${cell(d.default)}\` | ${cell(d.description)} |`)
  return [BEGIN, '| value | default | what it does |', '|---|---|---|', ...rows, END].join('\n')
}

export function withValuesTable(readme: string): string {
  const a = readme.indexOf(BEGIN)
  const b = readme.indexOf(END)
  if (a < 0 || b < a) throw new Error(`charts/nightjar/README.md lacks the ${BEGIN} … ${END} markers`)
  return readme.slice(0, a) + renderValuesTable() + readme.slice(b + END.length)
}

export const readChartReadme = () => readFileSync(README, 'utf8')

if (isEntryPoint(import.meta.url)) {
  writeFileSync(README, withValuesTable(readChartReadme()))
  process.stdout.write('charts/nightjar/README.md: values table written\n')
}
