// A small flag parser (node:util parseArgs) that turns mistakes into one clear line.
import { parseArgs } from 'node:util'

export function parseFlags(argv: string[], spec: { string?: string[]; boolean?: string[] }) {
  const options: Record<string, { type: 'string' | 'boolean' }> = {}
  for (const s of spec.string ?? []) options[s] = { type: 'string' }
  for (const b of spec.boolean ?? []) options[b] = { type: 'boolean' }
  try {
    const { values } = parseArgs({ args: argv, options, allowPositionals: false, strict: true })
    return { values: values as Record<string, string | boolean | undefined>, error: undefined }
  } catch (e) {
    return { values: {} as Record<string, string | boolean | undefined>, error: (e as Error).message }
  }
}
